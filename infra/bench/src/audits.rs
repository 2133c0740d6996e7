//! `audits`: twenty domain audits started at once against one audit alone, through a DNS server
//! that adds latency to every answer (issue 18's measure of the resolver's concurrency).
//!
//! Each domain looks like a typical protected sender: DMARC at `p=reject`, SPF with two levels
//! of provider includes, a DKIM key at the apex's `google` selector and an ESP's key behind a
//! `selector1` CNAME, MX, TLS-RPT. Every audit asks the whole DKIM selector catalogue, as an API
//! audit does. Audits go through the same service function as `POST /tools/audit` with
//! `refresh` (no cached result, no cached answer), so each round starts cold.

use mailward_dns_fixture::{Backend, Fault, FixtureServer, Scope, Zone};
use std::time::{Duration, Instant};

/// An RSA-2048 public key (SubjectPublicKeyInfo, base64) for the DKIM records.
const KEY_2048: &str = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAr+yaDax+Q7JKiRtEo58HVYrEsK1CcE/oKY6ASKvlKs+bLLytOuCzHO4IfFFePMldibGJioOAZxXG69tEFPU6iTzVyoPTmHsyTume1KxOO1IudivAfC0PmtH5m6Thg74u00utR1PgFkxA5f4CZeRoeY57Px0EHB+6tBlAM3NcyD7H+fo/L5C/HLNgto5H8KWyfkbc4Lh03oQOUKim1ZtPpCbCvPYB6MKT8izpwf5VSBmKc0JVaRuZrALxY/o+DajzCq3igOtMOczwlNKxxfAIn8UpPIdGQvBUguomF939xRKGWabehBezWSLNdwmxUSnLRm0Mb3ufnRsKzZK9df6uWwIDAQAB";

fn zones(count: usize) -> Vec<Zone> {
    let key = format!("v=DKIM1; k=rsa; p={KEY_2048}");
    let mut zones = vec![
        Zone::new("test"),
        Zone::new("esp.test")
            .txt(
                "_spf",
                "v=spf1 include:_spf2.esp.test ip4:198.51.100.0/24 ~all",
            )
            .txt("_spf2", "v=spf1 ip4:203.0.113.0/24 ~all")
            .a("mx", "192.0.2.1"),
        Zone::new("mail.test").txt("_spf", "v=spf1 ip4:192.0.2.0/24 ~all"),
    ];
    for i in 0..count {
        let domain = format!("a{i}.audit.test");
        zones.push(
            Zone::new(&domain)
                .txt(
                    "@",
                    "v=spf1 include:_spf.esp.test include:_spf.mail.test -all",
                )
                .mx("@", 10, "mx.esp.test.")
                .txt(
                    "_dmarc",
                    &format!("v=DMARC1; p=reject; rua=mailto:dmarc@{domain}"),
                )
                .txt("google._domainkey", &key)
                .cname(
                    "selector1._domainkey",
                    &format!("selector1-{i}._domainkey.esp.test."),
                )
                .txt(
                    "_smtp._tls",
                    &format!("v=TLSRPTv1; rua=mailto:tls@{domain}"),
                ),
        );
        zones[1] = zones[1]
            .clone()
            .txt(&format!("selector1-{i}._domainkey"), &key);
    }
    zones.push(Zone::new("audit.test"));
    zones
}

/// Runs the benchmark and prints one summary.
pub async fn run(
    count: usize,
    latency_ms: u64,
    rounds: usize,
    dns_concurrency: Option<usize>,
    nsd: bool,
) -> anyhow::Result<()> {
    use mailward_api_tests::TestApp;
    let app = TestApp::start_with(|s| {
        s.publish_outbox = false;
    })
    .await;
    let backend = if nsd {
        Backend::Nsd
    } else {
        Backend::InProcess
    };
    let localhost = std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
    let dns = FixtureServer::start_with(backend, localhost, zones(count.max(1)))
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    dns.set_query_log(false);
    let mut settings = dns.settings();
    // As the binaries choose it: from the open-file limit, unless given.
    settings.max_concurrency = dns_concurrency.unwrap_or_else(mailward_dns::default_concurrency);
    let in_flight = settings.max_concurrency;
    let resolver = std::sync::Arc::new(
        mailward_dns::HickoryResolver::new(settings).map_err(|e| anyhow::anyhow!("{e}"))?,
    );
    dns.inject(
        Scope::Global,
        Fault::Latency(Duration::from_millis(latency_ms)),
    );
    let base = app.stack.state.clone();
    let state = mailward_http::AppState::new(
        base.store.clone(),
        base.queue.clone(),
        base.mailer.clone(),
        base.clock.clone(),
        resolver.clone(),
        base.config.clone(),
    );
    let audit = |domain: String| {
        let state = state.clone();
        async move {
            let params = mailward_api_types::tools::AuditParams {
                domain: domain.clone(),
                email: None,
                store_scan: false,
                refresh: true,
            };
            let result = mailward_services::audit::audit(&state, None, &params, None).await;
            match result {
                Ok(r) if matches!(r.status, mailward_audit::AuditStatus::Success) => Ok(r),
                Ok(_) => Err(anyhow::anyhow!("the audit of {domain} did not succeed")),
                Err(e) => Err(anyhow::anyhow!("{e}")),
            }
        }
    };
    // One audit alone, then all of them at once, each round from cold.
    let mut single = Vec::new();
    let mut batch = Vec::new();
    let mut queries_single = 0;
    let mut queries_batch = 0;
    let mut peak = 0;
    let mut cpu_batch = Vec::new();
    for round in 0..rounds.max(1) {
        resolver.clear_cache();
        dns.reset_stats();
        let started = Instant::now();
        let one = audit(format!("a{}.audit.test", round % count.max(1))).await?;
        single.push(started.elapsed());
        queries_single = dns.query_count();
        anyhow::ensure!(
            one.dkim
                .as_ref()
                .is_some_and(|d| d.found_selectors.len() == 2),
            "the audit must find both DKIM keys: {:?}",
            one.dkim.as_ref().map(|d| &d.found_selectors)
        );
        resolver.clear_cache();
        dns.reset_stats();
        let cpu_before = crate::ingest::cpu_time();
        let started = Instant::now();
        let all =
            futures::future::join_all((0..count).map(|i| audit(format!("a{i}.audit.test")))).await;
        batch.push(started.elapsed());
        cpu_batch.push(crate::ingest::cpu_time().saturating_sub(cpu_before));
        for r in all {
            r?;
        }
        queries_batch = dns.query_count();
        peak = peak.max(dns.peak_in_flight());
    }
    single.sort();
    batch.sort();
    cpu_batch.sort();
    let median = |v: &[Duration]| v[v.len() / 2];
    let (one, all) = (median(&single), median(&batch));
    println!(
        "audits through {} adding {latency_ms} ms per answer, resolver in-flight bound {in_flight}, median of {} rounds:",
        if nsd {
            "NSD (behind the fixture's relay)"
        } else {
            "the in-process DNS fixture"
        },
        rounds.max(1)
    );
    println!(
        "  one audit: {:.0} ms, {queries_single} DNS queries",
        crate::ms(one)
    );
    println!(
        "  {count} audits at once: {:.0} ms wall, {queries_batch} DNS queries ({:.0} per audit), peak {peak} queries in flight at the server",
        crate::ms(all),
        queries_batch as f64 / count.max(1) as f64
    );
    println!(
        "  CPU for the {count} ({}): {:.0} ms, {:.1} ms per audit",
        if nsd {
            "this process: audits, resolver and the relay; NSD's own not counted"
        } else {
            "whole process: audits, resolver and the DNS server"
        },
        crate::ms(median(&cpu_batch)),
        crate::ms(median(&cpu_batch)) / count.max(1) as f64
    );
    println!(
        "  batch over one: {:.2}x (target under 2x); {:.1}x faster than {count} single audits in sequence",
        all.as_secs_f64() / one.as_secs_f64(),
        one.as_secs_f64() * count as f64 / all.as_secs_f64()
    );
    Ok(())
}
