//! `msp`: the reads of a big managed-service provider's organization on the local stack
//! (embedded adapters), at p99 with concurrent clients, and what each read costs on DynamoDB.
//!
//! The organization (on the MSP plan: a year of retention, room for 25,000 domains) has
//! `--domains` domains in `--groups` groups, added with the bulk operation, and
//! `--report-domains` of them get one aggregate report a day for `--days` days, imported as
//! `mailward import` does (so the report rows, day totals and senders are the ones ingestion
//! writes). Every domain resolves through a DNS server on loopback, so the first evaluations the
//! additions start finish quickly; the measurement waits until the store is quiet.
//!
//! Each route is asked `--requests` times by `--concurrency` clients at once with the
//! organization's API key (as scripts call us). Before that, one call of each runs alone
//! through a counting wrapper of the store port ([`CountingStore`]): the DynamoDB requests, read
//! units and write units that call would cost. The port sees the same calls whichever adapter
//! is behind it, so the counts hold for the DynamoDB adapter too (one port call is one
//! DynamoDB request; the wrapper's documentation says where that is approximate).

use crate::{ms, percentile};
use mailward_api_tests::TestApp;
use mailward_api_tests::counting_store::{Counter, CountingStore};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Calls a route that takes over a second alone is asked at most.
const SLOW_ROUTE_REQUESTS: usize = 48;

/// The path of a route's `i`th request.
type PathOf = Arc<dyn Fn(usize) -> String + Send + Sync>;

/// The benchmark's shape.
pub struct Shape {
    /// Domains of the organization.
    pub domains: usize,
    /// Groups they are spread over (round robin).
    pub groups: usize,
    /// Domains with a year of reports.
    pub report_domains: usize,
    /// Days of reports each.
    pub days: usize,
    /// Requests per route.
    pub requests: usize,
    /// Clients at once.
    pub concurrency: usize,
    /// Times every route is measured over the same data (the median p99 is printed too).
    pub rounds: usize,
}

/// Runs the benchmark.
pub async fn run(shape: Shape) -> anyhow::Result<()> {
    let counter = Counter::default();
    let wrap_counter = counter.clone();
    let wrap =
        mailward_local_stack::PortWrapper(Arc::new(move |ports| mailward_local_stack::Ports {
            store: Arc::new(CountingStore::new(ports.store, &wrap_counter)),
            queue: ports.queue,
        }));
    let (dns, app) = crate::pages::bench_stack("msp-bench.example", Some(wrap)).await?;
    let org = app.sign_up("msp@bench.example", "MSP Bench").await;
    let subscription = app.subscribe(&org, "msp").await;
    anyhow::ensure!(
        subscription["pricing_type"] == "msp" || subscription.to_string().contains("msp"),
        "not on the MSP plan: {subscription}"
    );
    let org_id: uuid::Uuid = org.org_id.parse()?;

    let seeding = Instant::now();
    let mut groups = Vec::with_capacity(shape.groups);
    for g in 0..shape.groups {
        let res = app
            .with_key(reqwest::Method::POST, "/groups", &org.key)
            .json(&serde_json::json!({"name": format!("Customer {g:03}")}))
            .send()
            .await?;
        anyhow::ensure!(res.status().is_success(), "group: {}", res.status());
        let group: serde_json::Value = res.json().await?;
        groups.push(group["id"].as_str().unwrap_or_default().to_owned());
    }
    let names: Vec<String> = (0..shape.domains)
        .map(|i| format!("d{i}.msp-bench.example"))
        .collect();
    for (c, chunk) in names.chunks(500).enumerate() {
        let body: Vec<_> = chunk
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let group = &groups[(c * 500 + i) % groups.len().max(1)];
                serde_json::json!({"url": n, "group_id": group})
            })
            .collect();
        let res = app
            .with_key(reqwest::Method::POST, "/domains/bulk", &org.key)
            .json(&serde_json::json!({"domains": body}))
            .send()
            .await?;
        anyhow::ensure!(res.status().is_success(), "bulk add: {}", res.status());
        let answer: serde_json::Value = res.json().await?;
        let refused = answer.to_string().matches("\"error\"").count();
        anyhow::ensure!(refused == 0, "bulk add refused entries: {answer}");
    }
    let added = seeding.elapsed();
    let today = time::OffsetDateTime::now_utc()
        .date()
        .midnight()
        .assume_utc()
        .unix_timestamp();
    let delivery = mailward_workers::ingest::Delivery::import_for(org_id);
    let limits = mailward_reports::Limits::default();
    for (d, name) in names.iter().take(shape.report_domains).enumerate() {
        for day in 1..=shape.days {
            let bytes = crate::pages::report(name, today - 86_400 * day as i64, d * 1000 + day);
            mailward_workers::ingest::ingest(&app.stack.state, &bytes, &delivery, &limits).await?;
        }
    }
    println!(
        "msp: {} domains in {} groups added in {:.0} s; {} domains with {} days of reports ({} reports) in {:.0} s",
        shape.domains,
        shape.groups,
        added.as_secs_f64(),
        shape.report_domains,
        shape.days,
        shape.report_domains * shape.days,
        (seeding.elapsed() - added).as_secs_f64()
    );
    quiet(&counter).await;

    let listed: serde_json::Value = app
        .with_key(reqwest::Method::GET, "/domains?per_page=100", &org.key)
        .send()
        .await?
        .json()
        .await?;
    anyhow::ensure!(
        listed["page_info"]["total_count"] == shape.domains,
        "listed {}",
        listed["page_info"]
    );
    // The domains with reports, by id (the list's default order is newest first).
    let mut with_reports = Vec::new();
    let mut page = 1;
    while with_reports.len() < shape.report_domains {
        let listed: serde_json::Value = app
            .with_key(
                reqwest::Method::GET,
                &format!("/domains?per_page=100&sort=url&order=asc&page={page}"),
                &org.key,
            )
            .send()
            .await?
            .json()
            .await?;
        let data = listed["data"].as_array().cloned().unwrap_or_default();
        if data.is_empty() {
            break;
        }
        for d in data {
            let url = d["url"].as_str().unwrap_or_default();
            let n: usize = url
                .strip_prefix('d')
                .and_then(|r| r.split('.').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(usize::MAX);
            if n < shape.report_domains {
                with_reports.push(d["id"].as_str().unwrap_or_default().to_owned());
            }
        }
        page += 1;
    }
    anyhow::ensure!(!with_reports.is_empty(), "no domain with reports listed");
    let with_reports = Arc::new(with_reports);

    let mut routes: Vec<(String, PathOf, f64)> = Vec::new();
    for sort in mailward_api_types::domains::SORT_KEYS {
        // Pages spread over the first hundred, both orders.
        routes.push((
            format!("GET /domains?per_page=100&sort={sort}"),
            Arc::new(move |i| {
                let order = if i % 2 == 0 { "desc" } else { "asc" };
                format!(
                    "/domains?per_page=100&sort={sort}&order={order}&page={}",
                    1 + i % 100
                )
            }),
            20.0,
        ));
    }
    let ids = with_reports.clone();
    routes.push((
        "GET /domains/{id}/reports/summary?period=last_30_days".into(),
        Arc::new(move |i| {
            format!(
                "/domains/{}/reports/summary?period=last_30_days",
                ids[i % ids.len()]
            )
        }),
        20.0,
    ));
    // The organization-wide 365-day summary last: it is the slowest.
    for (label, path, target) in [
        ("GET /usage", "/usage", 50.0),
        (
            "GET /groups?expand[]=domains",
            "/groups?expand[]=domains",
            50.0,
        ),
        (
            "GET /report-data/summary?period=last_365_days",
            "/report-data/summary?period=last_365_days",
            150.0,
        ),
    ] {
        routes.push((label.into(), Arc::new(move |_| path.to_owned()), target));
    }

    println!(
        "msp: route | one call alone; p50 / p99 / max ms at {} clients ({} requests) | target p99 | per call: DynamoDB requests, read units, write units",
        shape.concurrency, shape.requests
    );
    cards_read_again(&app, &counter, &org.key, org_id).await?;
    let mut p99s: Vec<Vec<f64>> = vec![Vec::new(); routes.len()];
    let rounds = shape.rounds.max(1);
    for round in 1..=rounds {
        println!("msp: round {round} of {rounds}");
        for (i, route) in routes.iter().enumerate() {
            p99s[i].push(measure(&app, &counter, &org.key, route, &shape).await?);
        }
    }
    if rounds > 1 {
        println!("msp: median p99 of {rounds} rounds | target");
        for ((label, _, target), mut runs) in routes.iter().zip(p99s) {
            runs.sort_by(f64::total_cmp);
            let median = runs[runs.len() / 2];
            println!(
                "msp: {label} | median p99 {median:.1} ms (rounds: {}) | < {target} ms {}",
                runs.iter()
                    .map(|r| format!("{r:.1}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if median < *target { "met" } else { "NOT MET" },
            );
        }
    }
    reports_read_again(&app, &counter, &org.key, org_id, &with_reports).await?;
    // The figures are printed and the process ends next (`main`): dropping the stack would
    // wait for its background loops (a sweep pass over 10,000 domains), which kept the process
    // busy after the last line.
    std::mem::forget(app);
    std::mem::forget(dns);
    Ok(())
}

/// One route: a call alone through the counting wrapper, then the load; prints the line and
/// returns the p99 in milliseconds.
async fn measure(
    app: &TestApp,
    counter: &Counter,
    key: &str,
    (label, path, target): &(String, PathOf, f64),
    shape: &Shape,
) -> anyhow::Result<f64> {
    // One call alone, counted.
    quiet(counter).await;
    counter.take();
    counter.take_calls();
    let alone = Instant::now();
    let res = app
        .with_key(reqwest::Method::GET, &path(0), key)
        .send()
        .await?;
    anyhow::ensure!(res.status() == 200, "{label}: {}", res.status());
    res.bytes().await?;
    let alone = alone.elapsed();
    let calls = counter.take_calls();
    let written = written_units(counter);
    // A route that takes over a second alone is asked fewer times (its p99 is then the
    // slowest of those), so the run ends in minutes.
    let requests = if alone > Duration::from_secs(1) {
        shape.requests.min(SLOW_ROUTE_REQUESTS)
    } else {
        shape.requests
    };
    let latencies = load(app, key, path.clone(), requests, shape.concurrency).await?;
    // What the store saw during the load, per call (background jobs included): shows whether
    // the load met copies of the cards out of date or the sweep's writes.
    let during = counter.take_calls();
    let during_written = written_units(counter);
    let per_call = (requests + 50) as f64;
    let p99 = ms(percentile(&latencies, 0.99));
    println!(
        "msp: {label} | under load, per call: {:.1} requests, {:.1} RCU, {:.2} WCU",
        during.total_requests() as f64 / per_call,
        during.read_units() / per_call,
        during_written as f64 / per_call,
    );
    println!(
        "msp: {label} | alone {:.1}; p50 {:.1} / p99 {:.1} / max {:.1} ({requests} calls) | < {target} ms {} | {} requests ({}), {:.1} RCU, {written} WCU",
        ms(alone),
        ms(percentile(&latencies, 0.50)),
        p99,
        ms(*latencies.last().unwrap_or(&Duration::ZERO)),
        if p99 < *target { "met" } else { "NOT MET" },
        calls.total_requests(),
        by_operation(&calls),
        calls.read_units(),
    );
    Ok(p99)
}

/// The write units counted since the last take, emptied.
fn written_units(counter: &Counter) -> u64 {
    counter
        .take()
        .iter()
        .filter(|(k, _)| !k.starts_with("KIND:"))
        .map(|(_, v)| v)
        .sum()
}

/// What a domain list call costs when this process's copy of the cards is out of date (after a
/// card changed): the organization's card counter is moved, then one call is counted.
async fn cards_read_again(
    app: &TestApp,
    counter: &Counter,
    key: &str,
    org: uuid::Uuid,
) -> anyhow::Result<()> {
    quiet(counter).await;
    let store = app.stack.state.store.clone();
    store
        .increment(&format!("ORG#{org}"), "CARDVER", 1, None)
        .await?;
    counter.take();
    counter.take_calls();
    let alone = Instant::now();
    let res = app
        .with_key(
            reqwest::Method::GET,
            "/domains?per_page=100&sort=score",
            key,
        )
        .send()
        .await?;
    anyhow::ensure!(res.status() == 200, "domain list: {}", res.status());
    res.bytes().await?;
    let alone = alone.elapsed();
    let calls = counter.take_calls();
    println!(
        "msp: GET /domains?per_page=100&sort=score, the process's copy of the cards out of date | alone {:.1} ms | {} requests ({}), {:.1} RCU",
        ms(alone),
        calls.total_requests(),
        by_operation(&calls),
        calls.read_units(),
    );
    Ok(())
}

/// What the 365-day organization summary costs while reports arrive: the report counters of
/// ten reporting domains are moved (as an ingestion of their reports does), then one call is
/// counted; and once more after a warm call, with nothing moved.
async fn reports_read_again(
    app: &TestApp,
    counter: &Counter,
    key: &str,
    org: uuid::Uuid,
    with_reports: &[String],
) -> anyhow::Result<()> {
    let path = "/report-data/summary?period=last_365_days";
    quiet(counter).await;
    let store = app.stack.state.store.clone();
    for id in with_reports.iter().take(10) {
        let domain: uuid::Uuid = id.parse()?;
        let shard = domain.as_bytes()[15] % 4;
        store
            .increment(&format!("REPVER#{org}#{shard}"), id, 1, None)
            .await?;
    }
    for moved in [10, 0] {
        counter.take();
        counter.take_calls();
        let alone = Instant::now();
        let res = app.with_key(reqwest::Method::GET, path, key).send().await?;
        anyhow::ensure!(res.status() == 200, "summary: {}", res.status());
        res.bytes().await?;
        let alone = alone.elapsed();
        let calls = counter.take_calls();
        println!(
            "msp: GET {path}, {moved} domains' report counters moved since the last call | alone {:.1} ms | {} requests ({}), {:.1} RCU",
            ms(alone),
            calls.total_requests(),
            by_operation(&calls),
            calls.read_units(),
        );
    }
    Ok(())
}

/// A call's store requests by operation (`GetItem 103, Query 1`).
fn by_operation(calls: &mailward_api_tests::counting_store::Calls) -> String {
    calls
        .requests
        .iter()
        .map(|(op, n)| format!("{op} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Waits until the store has taken no write for two seconds (the additions' first evaluations
/// and their events are done), at most ten minutes.
async fn quiet(counter: &Counter) {
    let until = Instant::now() + Duration::from_secs(600);
    let mut still = 0;
    counter.take();
    while still < 2 && Instant::now() < until {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let written: u64 = counter
            .take()
            .iter()
            .filter(|(k, _)| !k.starts_with("KIND:") && !k.starts_with("GSI"))
            .map(|(_, v)| v)
            .sum();
        still = if written == 0 { still + 1 } else { 0 };
    }
}

/// `requests` requests (after 50 unmeasured) by `concurrency` clients; the sorted latencies.
async fn load(
    app: &TestApp,
    key: &str,
    path: PathOf,
    requests: usize,
    concurrency: usize,
) -> anyhow::Result<Vec<Duration>> {
    for i in 0..50 {
        app.with_key(reqwest::Method::GET, &path(i), key)
            .send()
            .await?
            .error_for_status()?
            .bytes()
            .await?;
    }
    let next = Arc::new(AtomicUsize::new(0));
    let mut clients = Vec::new();
    for _ in 0..concurrency.max(1) {
        let next = next.clone();
        let path = path.clone();
        let http = app.http.clone();
        let base = app.url("");
        let key = key.to_owned();
        clients.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= requests {
                    break;
                }
                let started = Instant::now();
                let res = http
                    .get(format!("{base}{}", path(i)))
                    .basic_auth(&key, Some(""))
                    .header("Mailward-Version", mailward_api_tests::VERSION)
                    .send()
                    .await?;
                anyhow::ensure!(res.status() == 200, "{}: {}", path(i), res.status());
                res.bytes().await?;
                latencies.push(started.elapsed());
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut all = Vec::with_capacity(requests);
    for client in clients {
        all.extend(client.await??);
    }
    all.sort_unstable();
    Ok(all)
}
