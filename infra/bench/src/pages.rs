//! `pages`: the web application's pages for an organization with many domains and a year of
//! reports on the local stack (embedded adapters): the HTML answer's latency per page, from one
//! client, as a person's browser asks (the session cookie, no cache).
//!
//! The domains resolve through a DNS server on loopback (the suite's fixture), so the domain
//! page's live records lookups are answered at once: a customer's DNS latency comes on top.
//!
//! Seeding: the organization's domains are added with the bulk operation, then every domain
//! gets one aggregate report per day for `days` days (two sources, one failing), imported as
//! `mailward import` does, so the report rows, day totals and senders are the ones ingestion
//! writes.

use crate::{ms, percentile};
use mailward_api_tests::TestApp;
use std::time::{Duration, Instant};

pub(crate) fn report(domain: &str, day_start: i64, i: usize) -> Vec<u8> {
    format!(
        "<feedback><report_metadata><org_name>Receiver</org_name><report_id>b-{domain}-{i}</report_id>\
<date_range><begin>{day_start}</begin><end>{}</end></date_range></report_metadata>\
<policy_published><domain>{domain}</domain><p>none</p></policy_published>\
<record><row><source_ip>192.0.2.{}</source_ip><count>{}</count><policy_evaluated><disposition>none</disposition>\
<dkim>pass</dkim><spf>pass</spf></policy_evaluated></row><identifiers><header_from>{domain}</header_from></identifiers></record>\
<record><row><source_ip>203.0.113.{}</source_ip><count>3</count><policy_evaluated><disposition>none</disposition>\
<dkim>fail</dkim><spf>fail</spf></policy_evaluated></row><identifiers><header_from>{domain}</header_from></identifiers></record>\
</feedback>",
        day_start + 86_399,
        1 + i % 200,
        100 + i % 50,
        1 + i % 100,
    )
    .into_bytes()
}

/// Runs the benchmark: `domains` domains, `days` days of reports each, `requests` requests per
/// page.
pub async fn run(domains: usize, days: usize, requests: usize) -> anyhow::Result<()> {
    // A DNS server on loopback for the domains' zone: the domain page reads the records
    // guidance from live DNS (uncached, as `GET /domains/{id}/dns-records` does), so its figure
    // is ours plus this server's answer time, not a customer's DNS latency.
    let (_dns, app) = bench_stack("pages-bench.example", None).await?;
    let org = app.sign_up("pages@bench.example", "Pages Bench").await;
    let org_id: uuid::Uuid = org.org_id.parse()?;
    let names: Vec<String> = (0..domains)
        .map(|i| format!("d{i}.pages-bench.example"))
        .collect();
    for chunk in names.chunks(500) {
        let body: Vec<_> = chunk
            .iter()
            .map(|n| serde_json::json!({"url": n}))
            .collect();
        let res = app
            .with_key(reqwest::Method::POST, "/domains/bulk", &org.key)
            .json(&serde_json::json!({"domains": body}))
            .send()
            .await?;
        anyhow::ensure!(res.status().is_success(), "bulk add: {}", res.status());
    }
    let seeding = Instant::now();
    let today = time::OffsetDateTime::now_utc()
        .date()
        .midnight()
        .assume_utc()
        .unix_timestamp();
    let delivery = mailward_workers::ingest::Delivery::import_for(org_id);
    let limits = mailward_reports::Limits::default();
    for (d, name) in names.iter().enumerate() {
        for day in 1..=days {
            let bytes = report(name, today - 86_400 * day as i64, d * 1000 + day);
            mailward_workers::ingest::ingest(&app.stack.state, &bytes, &delivery, &limits).await?;
        }
    }
    println!(
        "pages: seeded {domains} domains with {days} days of reports each ({} reports) in {:.0} s",
        domains * days,
        seeding.elapsed().as_secs_f64()
    );
    let cookie = session_cookie(&app, &org.email, org_id).await?;
    let listed: serde_json::Value = app
        .with_key(reqwest::Method::GET, "/domains?per_page=50", &org.key)
        .send()
        .await?
        .json()
        .await?;
    let ids: Vec<String> = listed["data"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|d| d["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    anyhow::ensure!(!ids.is_empty(), "no domain listed");
    let mut pages: Vec<(String, PathOf)> = vec![
        ("/app/domains".into(), Box::new(|_| "/app/domains".into())),
        (
            "/app/domains?sort=score&order=asc&monitoring_status=none".into(),
            Box::new(|_| "/app/domains?sort=score&order=asc&monitoring_status=none".into()),
        ),
        (
            "/app/domains/{id} (14 days)".into(),
            Box::new({
                let ids = ids.clone();
                move |i| format!("/app/domains/{}", ids[i % ids.len()])
            }),
        ),
        (
            "/app/domains/{id}?days=30".into(),
            Box::new({
                let ids = ids.clone();
                move |i| format!("/app/domains/{}?days=30", ids[i % ids.len()])
            }),
        ),
    ];
    for fixed in [
        "/app/tasks",
        "/app/organization",
        "/app/organization/settings",
        "/app/organization/people",
        "/app/organization/groups",
        "/app/organization/integrations",
        "/app/organization/dns",
        "/app/organization/billing",
        "/app/organization/activity",
        "/app/organization/sso",
        "/app/account/security",
        "/app/support",
        "/app/prospecting",
        "/app/organizations",
        "/app/sign-in",
        "/app/audit",
    ] {
        pages.push((fixed.into(), Box::new(move |_| fixed.into())));
    }
    for (label, path) in &pages {
        let mut latencies = Vec::with_capacity(requests);
        for i in 0..requests + 20 {
            let started = Instant::now();
            let res = app
                .http
                .get(app.url(&path(i)))
                .header("cookie", &cookie)
                .send()
                .await?;
            anyhow::ensure!(res.status() == 200, "{label}: {}", res.status());
            let html = res.bytes().await?;
            anyhow::ensure!(html.len() > 500, "{label}: a short page");
            if i >= 20 {
                latencies.push(started.elapsed());
            }
        }
        latencies.sort_unstable();
        println!(
            "pages: {label}: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms ({requests} requests, one client)",
            ms(percentile(&latencies, 0.50)),
            ms(percentile(&latencies, 0.95)),
            ms(*latencies.last().unwrap_or(&Duration::ZERO)),
        );
    }
    Ok(())
}

/// A stack for a read benchmark: the zone `apex` (NS and MX) on a loopback DNS server the stack
/// resolves through, no rate limit in the way, and `wrap` in front of its ports. The DNS server
/// stops when dropped.
pub(crate) async fn bench_stack(
    apex: &str,
    wrap: Option<mailward_local_stack::PortWrapper>,
) -> anyhow::Result<(mailward_dns_fixture::FixtureServer, TestApp)> {
    use mailward_services::config::Scope;
    let dns = mailward_dns_fixture::FixtureServer::start(vec![
        mailward_dns_fixture::Zone::new(apex)
            .ns("@", &format!("ns1.{apex}."))
            .mx("@", 10, &format!("mx.{apex}.")),
    ])
    .await?;
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(move |s| {
        s.dns = Some(addr);
        for scope in [Scope::Global, Scope::ApiKey] {
            s.rate_limits
                .push((scope, "1000000000/60".parse().expect("a limit")));
        }
        s.wrap_ports = wrap;
    })
    .await;
    Ok((dns, app))
}

/// The path of a page's `i`th request.
type PathOf = Box<dyn Fn(usize) -> String>;

/// A web session cookie for the organization's administrator (a stored session, as signing in
/// opens).
async fn session_cookie(app: &TestApp, email: &str, org: uuid::Uuid) -> anyhow::Result<String> {
    use mailward_http::auth::{JWT_AUDIENCE, JWT_ISSUER, SessionClaims, mint_session_token};
    let state = &app.stack.state;
    let account = mailward_store::accounts::get_by_email(state.store.as_ref(), email)
        .await?
        .ok_or_else(|| anyhow::anyhow!("no account"))?
        .value;
    let stored = mailward_oauth::sessions::open(
        state,
        account.id,
        org,
        vec!["otp".into()],
        "email_code",
        None,
    )
    .await
    .map_err(|e| anyhow::anyhow!("{}", e.message()))?;
    let token = mint_session_token(
        &state.config.secret_key,
        &SessionClaims {
            sub: account.id,
            org,
            role: mailward_domain::model::Role::Admin,
            amr: stored.amr.clone(),
            iss: JWT_ISSUER.into(),
            aud: JWT_AUDIENCE.into(),
            iat: stored.created_at.unix_timestamp(),
            exp: stored.expires_at.unix_timestamp(),
            sid: Some(stored.id),
        },
    )?;
    Ok(format!("mw_session={token}"))
}
