//! The key design under write load: which partition keys a unit of work writes, and how many
//! write units each takes, counted by [`CountingStore`] around the store in use (DynamoDB in
//! moto in the AWS pass of `tests/run`). A partition key takes at most 1,000 write units a
//! second; the figures measured here, scaled to a 10,000-domain organization at the rates of
//! ARCHITECTURE.md ("Write load per partition key"), must stay far below that on every key.

use crate::common::{add_domain, for_org, identify_now, today_start};
use mailward_api_tests::TestApp;
use mailward_api_tests::counting_store::{Counter, CountingStore, Units};
use mailward_dns_fixture::{FixtureServer, Zone};
use std::sync::Arc;

/// A partition key's write budget per second (DynamoDB's limit), and the share of it the
/// modelled peak may take on any one key.
const KEY_UNITS_PER_SECOND: f64 = 1_000.0;
const HEADROOM: f64 = 0.5;

/// Modelled peak arrival of aggregate reports for a 10,000-domain organization: each domain
/// gets about 20 reports a day, most of them from the large receivers within two hours after
/// midnight UTC (200,000 in 6,000 s).
const REPORTS_PER_SECOND: f64 = 33.0;

/// A stack whose store counts write units; DNS from a fixture holding `zone`.
async fn counted_app(zone: Zone) -> (FixtureServer, TestApp, Counter) {
    let dns = FixtureServer::start(vec![Zone::new("test"), zone])
        .await
        .unwrap();
    let addr = dns.addr().to_string();
    let counter = Counter::default();
    let wrap_counter = counter.clone();
    let app = TestApp::start_with(move |s| {
        s.dns = Some(addr);
        s.wrap_ports = Some(mailward_local_stack::PortWrapper(Arc::new(move |ports| {
            mailward_local_stack::Ports {
                store: Arc::new(CountingStore::new(ports.store, &wrap_counter)),
                queue: ports.queue,
            }
        })));
    })
    .await;
    (dns, app, counter)
}

/// An aggregate report of `domain` for today with `sources` rows, each from its own address
/// (a large receiver's report for a big sender).
fn distinct_sources_report(app: &TestApp, domain: &str, id: &str, sources: u32) -> Vec<u8> {
    let begin = today_start(app);
    let mut xml = format!(
        "<feedback><report_metadata><org_name>Receiver</org_name><report_id>{id}</report_id>\
<date_range><begin>{begin}</begin><end>{}</end></date_range></report_metadata>\
<policy_published><domain>{domain}</domain><p>none</p></policy_published>",
        begin + 86_399
    );
    for i in 0..sources {
        let ip = format!("10.{}.{}.{}", (i >> 16) & 255, (i >> 8) & 255, i & 255);
        xml.push_str(&format!(
            "<record><row><source_ip>{ip}</source_ip><count>3</count><policy_evaluated>\
<disposition>none</disposition><dkim>pass</dkim><spf>fail</spf></policy_evaluated></row>\
<identifiers><header_from>{domain}</header_from></identifiers>\
<auth_results><dkim><domain>{domain}</domain><result>pass</result></dkim>\
<spf><domain>bounce.{domain}</domain><result>fail</result></spf></auth_results></record>"
        ));
    }
    xml.push_str("</feedback>");
    xml.into_bytes()
}

/// The keys written, largest first (printed for ARCHITECTURE.md's table).
fn ranked(units: &Units) -> Vec<(String, u64)> {
    let mut list: Vec<_> = units.iter().map(|(k, v)| (k.clone(), *v)).collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    list
}

#[tokio::test]
async fn a_report_of_distinct_sources_writes_its_rows_to_the_domains_own_key() {
    let (_dns, app, counter) = counted_app(Zone::new("load.test")).await;
    let s = app.sign_up("load@load.example", "Load").await;
    let domain = add_domain(&app, &s.key, "big.load.test").await;
    let id = domain["id"].as_str().unwrap().to_owned();
    let org_pk = format!("ORG#{}", s.org_id);
    let domain_pk = format!("ORG#{}#D#{id}", s.org_id);
    // Once per catalogue version the first identification writes the catalogue (`SOURCES`):
    // not a cost of a report.
    let warm = distinct_sources_report(&app, "big.load.test", "warm", 1);
    mailward_workers::ingest::ingest(
        &app.stack.state,
        &warm,
        &for_org(&s),
        &mailward_reports::Limits::default(),
    )
    .await
    .unwrap();
    identify_now(&app, &s, &id).await;
    counter.take();

    const SOURCES: u32 = 4_000;
    let report = distinct_sources_report(&app, "big.load.test", "load-1", SOURCES);
    mailward_workers::ingest::ingest(
        &app.stack.state,
        &report,
        &for_org(&s),
        &mailward_reports::Limits::default(),
    )
    .await
    .unwrap();
    identify_now(&app, &s, &id).await;
    let units = counter.take();
    eprintln!("one report of {SOURCES} distinct sources, imported and identified:");
    for (key, n) in ranked(&units).iter().take(8) {
        eprintln!("  {n:>7} WU  {key}");
    }

    // The rows, totals and senders went to the domain's own key…
    let on_domain = units.get(&domain_pk).copied().unwrap_or(0);
    assert!(
        on_domain >= u64::from(SOURCES) / 100,
        "rows on {domain_pk}: {:?}",
        ranked(&units)
    );
    eprintln!(
        "{:.2} units per distinct source on the domain's key",
        on_domain as f64 / f64::from(SOURCES)
    );
    // …and the organization's key took a few units for the whole report, whatever its size:
    // the domain's figures and its activity, not one unit per row.
    let on_org = units.get(&org_pk).copied().unwrap_or(0);
    assert!(
        on_org <= 40,
        "{on_org} units on {org_pk}: {:?}",
        ranked(&units)
    );
    let peak = on_org as f64 * REPORTS_PER_SECOND;
    assert!(
        peak <= KEY_UNITS_PER_SECOND * HEADROOM,
        "{REPORTS_PER_SECOND} reports a second would write {peak} units a second to {org_pk}"
    );
    // Nothing else is written more than the organization's key.
    for (key, n) in &units {
        if key != &domain_pk && !key.starts_with("KIND:") {
            assert!(*n <= on_org.max(40), "{key}: {n} units");
        }
    }
}

#[tokio::test]
async fn a_sweep_pass_spreads_its_writes_and_paces_each_organization() {
    const DOMAINS: usize = 30;
    let mut zone = Zone::new("sweep.test").ns("@", "ns1.sweep.test.");
    for i in 0..DOMAINS {
        zone = zone
            .txt(&format!("_dmarc.d{i}"), "v=DMARC1; p=none")
            .txt(&format!("d{i}"), "v=spf1 -all");
    }
    let (_dns, app, counter) = counted_app(zone).await;
    let s = app.sign_up("sweep@sweep.example", "Sweep").await;
    for i in 0..DOMAINS {
        add_domain(&app, &s.key, &format!("d{i}.sweep.test")).await;
    }
    let org_pk = format!("ORG#{}", s.org_id);
    counter.take();

    // A cold pass: every domain observed for the first time (snapshots of every type, events).
    crate::common::sweep(&app).await;
    let cold = counter.take();
    // A steady pass five minutes later: nothing changed in DNS.
    crate::common::next_pass(&app).await;
    let steady = counter.take();
    for (name, units) in [("cold", &cold), ("steady", &steady)] {
        eprintln!("{name} sweep pass over {DOMAINS} domains:");
        for (key, n) in ranked(units).iter().take(16) {
            eprintln!("  {n:>7} WU  {key}");
        }
    }

    let per_domain =
        |units: &Units| units.get(&org_pk).copied().unwrap_or(0) as f64 / DOMAINS as f64;
    // The coordinator paces each organization's batches by these costs
    // (`mailward_workers::sweep::plan_batches`), so its key takes at most its budget a second:
    // they must not be lower than what an evaluation really writes.
    use mailward_workers::sweep::{FIRST_UNITS, ORG_UNITS_PER_SECOND, STEADY_UNITS};
    for (name, each, assumed) in [
        ("cold", per_domain(&cold), FIRST_UNITS),
        ("steady", per_domain(&steady), STEADY_UNITS),
    ] {
        eprintln!(
            "{name}: {each:.1} units per domain on the organization's key (paced as {assumed})"
        );
        assert!(
            each <= f64::from(assumed),
            "{name}: {each} units per domain on {org_pk}, the sweep paces as {assumed}"
        );
    }
    assert!(f64::from(ORG_UNITS_PER_SECOND) <= KEY_UNITS_PER_SECOND * HEADROOM);
    // Snapshots go to each domain's own key, never the organization's.
    let domain_keys = cold
        .keys()
        .filter(|k| k.starts_with(&format!("{org_pk}#D#")))
        .count();
    assert_eq!(domain_keys, DOMAINS, "{:?}", ranked(&cold));
    // The events of one organization's pass spread over the outbox's shards.
    let shards: Vec<_> = cold.keys().filter(|k| k.starts_with("OUTBOX#")).collect();
    assert!(shards.len() >= 8, "outbox keys written: {shards:?}");
    // The sweep index: every domain write is also an index write on its shard's key; none
    // takes more than a few domains' worth.
    let index_max = cold
        .iter()
        .filter(|(k, _)| k.starts_with("GSI1:SWEEP#"))
        .map(|(_, n)| *n)
        .max()
        .unwrap_or(0);
    assert!(
        index_max <= per_domain(&cold) as u64 * 8,
        "{:?}",
        ranked(&cold)
    );
}
