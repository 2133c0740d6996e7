//! Correctness under faults (issue 32), on whichever adapters the suite runs on (SQLite, or
//! DynamoDB and SQS in moto): a full disk, a throttled table, a sweep killed half-way and DNS
//! that drops half its answers. Each answers 503 with `Retry-After` where a request cannot be
//! served, writes nothing half-way, and recovers by itself. The SMTP mailbox and webhook
//! deliveries killed with SIGKILL are in `infra/local/tests/faults.rs` (the binary, as run).

use crate::common::{add_domain, app_on, read, strings};
use mailward_api_tests::TestApp;
use mailward_api_tests::faulty_store::{FaultyStore, StoreCall};
use mailward_dns_fixture::{Fault, Scope, Zone};
use mailward_domain::store::StoreError;
use reqwest::Method;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// POST /domains; the status, the `Retry-After` header and the body.
async fn create(app: &TestApp, key: &str, url: &str) -> (u16, Option<String>, Value) {
    let res = app
        .with_key(Method::POST, "/domains", key)
        .json(&json!({ "url": url }))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let retry = res
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, retry, res.json().await.unwrap_or(Value::Null))
}

async fn listed(app: &TestApp, key: &str) -> Vec<String> {
    let page = crate::common::get(app, "/domains?per_page=100", key).await;
    let mut urls = strings(&page["data"], "url");
    urls.sort();
    urls
}

/// A small tmpfs file system mounted for the test (root and a permitted `mount` only),
/// unmounted when dropped.
struct SmallDisk {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(megabytes: u32) -> Option<Self> {
        let dir = tempfile::tempdir().ok()?;
        let path = dir.path().to_path_buf();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={megabytes}m"), "tmpfs"])
            .arg(&path)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        mounted.then_some(Self { path, _dir: dir })
    }

    /// Writes a filler file until the file system refuses more bytes.
    fn fill(&self) {
        use std::io::Write as _;
        let mut file = std::fs::File::create(self.path.join("filler")).unwrap();
        for chunk in [1 << 20, 4096, 512] {
            let block = vec![0u8; chunk];
            while file.write_all(&block).is_ok() {}
        }
        let _ = file.sync_all();
    }

    fn free(&self) {
        std::fs::remove_file(self.path.join("filler")).unwrap();
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.path)
            .status();
    }
}

#[tokio::test]
async fn a_full_disk_answers_503_writes_nothing_half_way_and_recovers() {
    if mailward_api_tests::backend_is_aws() {
        eprintln!("the SQLite file's disk: nothing to fill on the AWS adapters");
        return;
    }
    // A real full file system where the machine lets the test mount one; else the error is
    // injected at the adapter: SQLite's own page cap makes its writes fail with SQLITE_FULL,
    // the error a full disk gives.
    let disk = SmallDisk::mount(24);
    if disk.is_none() {
        eprintln!("mount is not permitted here: capping the database file instead");
    }
    let data_dir = disk.as_ref().map(|d| d.path.join("data"));
    let app = TestApp::start_with(|s| {
        if let Some(dir) = data_dir {
            s.data_dir = dir;
        }
    })
    .await;
    let s = app.sign_up("disk@disk.example", "Disk").await;
    let (status, _, _) = create(&app, &s.key, "before.example").await;
    assert_eq!(status, 201);

    match &disk {
        Some(disk) => disk.fill(),
        None => app.stack.db.limit_growth(Some(0)).await.unwrap(),
    }
    // Writes fail (once whatever room the database file had left is used up), each with a
    // 503 and `Retry-After`; none is half-written.
    let (mut created, mut refused) = (Vec::new(), Vec::new());
    for i in 0..400 {
        let url = format!("full{i}.example");
        let (status, retry, body) = create(&app, &s.key, &url).await;
        match status {
            201 => created.push(url),
            503 => {
                assert_eq!(body["code"], "service_unavailable", "{body}");
                assert!(retry.is_some(), "a 503 says when to retry");
                refused.push(url);
                if refused.len() == 3 {
                    break;
                }
            }
            other => panic!("{url}: {other} {body}"),
        }
    }
    assert_eq!(refused.len(), 3, "the full disk never refused a write");
    // Reads still answer.
    let mut expected: Vec<String> = created
        .iter()
        .cloned()
        .chain(["before.example".into()])
        .collect();
    expected.sort();
    assert_eq!(listed(&app, &s.key).await, expected);

    match &disk {
        Some(disk) => disk.free(),
        None => app.stack.db.limit_growth(None).await.unwrap(),
    }
    let (status, _, body) = create(&app, &s.key, "after.example").await;
    assert_eq!(status, 201, "{body}");
    // The refused names were never stored, so they can be added now.
    let (status, _, body) = create(&app, &s.key, &refused[0]).await;
    assert_eq!(status, 201, "{body}");
    expected.extend(["after.example".to_owned(), refused[0].clone()]);
    expected.sort();
    assert_eq!(listed(&app, &s.key).await, expected);
    drop(app);
}

#[tokio::test]
async fn a_throttled_table_answers_503_with_retry_after_and_loses_nothing() {
    let throttled = Arc::new(AtomicBool::new(false));
    let flag = throttled.clone();
    let app = TestApp::start_with(move |s| {
        s.wrap_ports = Some(mailward_local_stack::PortWrapper(Arc::new(move |ports| {
            let flag = flag.clone();
            mailward_local_stack::Ports {
                // DynamoDB's throttling answer, on every write while the switch is on.
                store: Arc::new(FaultyStore::new(
                    ports.store,
                    Box::new(move |call| match call {
                        StoreCall::Put(_) | StoreCall::Transact(_) | StoreCall::Delete(..)
                            if flag.load(Ordering::SeqCst) =>
                        {
                            Err(StoreError::Unavailable(
                                "ThrottlingException: Rate of requests exceeds the allowed throughput"
                                    .into(),
                            ))
                        }
                        _ => Ok(()),
                    }),
                )),
                queue: ports.queue,
            }
        })));
    })
    .await;
    let s = app.sign_up("throttle@throttle.example", "Throttle").await;
    let (status, _, _) = create(&app, &s.key, "kept.example").await;
    assert_eq!(status, 201);

    throttled.store(true, Ordering::SeqCst);
    let (status, retry, body) = create(&app, &s.key, "throttled.example").await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(retry.as_deref(), Some("5"));
    assert!(
        !body.to_string().contains("Throttling"),
        "internal causes stay in the logs: {body}"
    );
    assert_eq!(listed(&app, &s.key).await, ["kept.example"]);

    throttled.store(false, Ordering::SeqCst);
    let (status, _, body) = create(&app, &s.key, "throttled.example").await;
    assert_eq!(status, 201, "the retry succeeds: {body}");
    assert_eq!(
        listed(&app, &s.key).await,
        ["kept.example", "throttled.example"]
    );
}

fn zone(name: &str, rua: &str) -> Zone {
    Zone::new(name)
        .ns("@", &format!("ns1.{name}."))
        .mx("@", 10, &format!("mx.{name}."))
        .a("mx", "192.0.2.10")
        .txt("@", "v=spf1 mx -all")
        .txt("_dmarc", &format!("v=DMARC1; p=reject; rua=mailto:{rua}"))
}

/// The stored domain (what the wire does not show: when it was checked, its claim).
async fn stored(app: &TestApp, org: &str, id: &str) -> mailward_domain::domain::Domain {
    mailward_store::domains::get(
        app.stack.state.store.as_ref(),
        org.parse().unwrap(),
        id.parse().unwrap(),
    )
    .await
    .unwrap()
    .unwrap()
    .value
}

/// What a sweep may change about a domain.
fn state(domain: &Value) -> (Value, Value, Value, Value) {
    (
        domain["monitoring_status"].clone(),
        domain["dmarc_policy"].clone(),
        domain["score"].clone(),
        domain["open_tasks_count"].clone(),
    )
}

#[tokio::test]
async fn a_sweep_killed_half_way_leaves_no_domain_claimed_past_its_window() {
    let names = ["k1.test", "k2.test", "k3.test"];
    let (dns, app) = app_on(vec![Zone::new("test")]).await;
    let s = app.sign_up("kill@kill.example", "Kill").await;
    let org: uuid::Uuid = s.org_id.parse().unwrap();
    let mut ids = Vec::new();
    for name in names {
        let d = add_domain(&app, &s.key, name).await;
        dns.add_zone(zone(name, d["monitoring_email"].as_str().unwrap()))
            .unwrap();
        ids.push(d["id"].as_str().unwrap().parse::<uuid::Uuid>().unwrap());
    }
    // Every DNS query hangs: the sweep claims the domains, then waits on their answers.
    dns.inject(Scope::Global, Fault::Timeout);
    let state_ref = app.stack.state.clone();
    let sweep = tokio::spawn(async move { mailward_workers::sweep::sweep_now(&state_ref).await });
    let claimed = async {
        loop {
            let mut all = true;
            for id in &ids {
                let d = mailward_store::domains::get(app.stack.state.store.as_ref(), org, *id)
                    .await
                    .unwrap()
                    .unwrap();
                all &= d.value.sweep_claimed_until.is_some();
            }
            if all {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(20), claimed)
        .await
        .expect("the sweep claims every domain");
    // The process dies mid-sweep: nothing of it runs on (no release of its claims).
    sweep.abort();
    let _ = sweep.await;
    let app = app.restart().await;
    dns.clear_all_faults();

    // Within the claim window another sweep leaves them to their (dead) claimant.
    let report = mailward_workers::sweep::sweep_by_hand(
        &app.stack.state,
        mailward_workers::sweep::SweepScope::Due,
        std::time::Duration::ZERO,
    )
    .await
    .unwrap();
    assert!(report.evaluated.is_empty(), "{report:?}");
    for id in &ids {
        let d = stored(&app, &s.org_id, &id.to_string()).await;
        assert_eq!(d.last_checked_at, None, "{d:?}");
    }
    // Past the window, the next sweep evaluates every one of them and releases its claim.
    app.clock.advance(time::Duration::seconds(
        mailward_services::evaluation::CLAIM_SECS + 1,
    ));
    mailward_workers::sweep::sweep_now(&app.stack.state)
        .await
        .unwrap();
    for id in &ids {
        let d = read(&app, &s.key, &id.to_string()).await;
        assert_eq!(d["monitoring_status"], "setup", "{d}");
        let d = stored(&app, &s.org_id, &id.to_string()).await;
        assert!(d.last_checked_at.is_some(), "{d:?}");
        assert_eq!(d.sweep_claimed_until, None);
    }
}

#[tokio::test]
async fn dns_dropping_half_its_answers_changes_no_domain_and_strands_none() {
    let names = ["h1.test", "h2.test", "h3.test", "h4.test"];
    let dns = mailward_dns_fixture::FixtureServer::start(vec![Zone::new("test")])
        .await
        .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        s.publish_outbox = false;
        // Every sweep asks the server (the cache counts real seconds, the sweeps the stack's).
        s.dns_cache_ttl_cap = Some(std::time::Duration::ZERO);
    })
    .await;
    let s = app.sign_up("half@half.example", "Half").await;
    let mut ids = Vec::new();
    for name in names {
        let d = add_domain(&app, &s.key, name).await;
        dns.add_zone(zone(name, d["monitoring_email"].as_str().unwrap()))
            .unwrap();
        ids.push(d["id"].as_str().unwrap().to_owned());
    }
    // Two sweeps on healthy DNS settle every domain.
    for _ in 0..2 {
        mailward_workers::sweep::sweep_now(&app.stack.state)
            .await
            .unwrap();
        app.clock.advance(time::Duration::seconds(3_601));
    }
    let mut before = Vec::new();
    for id in &ids {
        let d = read(&app, &s.key, id).await;
        assert_eq!(d["monitoring_status"], "setup", "{d}");
        before.push(state(&d));
    }

    // For a while (sweeps an hour apart on the stack's clock), every other query is lost.
    dns.inject(Scope::Global, Fault::LoseHalf(true));
    for _ in 0..3 {
        mailward_workers::sweep::sweep_now(&app.stack.state)
            .await
            .unwrap();
        for (id, was) in ids.iter().zip(&before) {
            let d = read(&app, &s.key, id).await;
            assert_eq!(&state(&d), was, "{d}");
        }
        app.clock.advance(time::Duration::seconds(3_601));
    }

    // One name that never answers (a dimension's lookup failed: unknown, not missing) moves
    // no score either.
    dns.clear_all_faults();
    dns.inject(Scope::name("_mta-sts.h1.test"), Fault::Timeout);
    dns.inject(Scope::name("_smtp._tls.h2.test"), Fault::Timeout);
    mailward_workers::sweep::sweep_now(&app.stack.state)
        .await
        .unwrap();
    for (id, was) in ids.iter().zip(&before) {
        let d = read(&app, &s.key, id).await;
        assert_eq!(&state(&d), was, "{d}");
    }
    app.clock.advance(time::Duration::seconds(3_601));

    // Answers come back: every domain is checked again at once, none stuck.
    dns.clear_all_faults();
    let mut checked_before = Vec::new();
    for id in &ids {
        checked_before.push(stored(&app, &s.org_id, id).await.last_checked_at);
    }
    app.clock.advance(time::Duration::seconds(3_601));
    let due = mailward_workers::sweep::sweep_now(&app.stack.state)
        .await
        .unwrap();
    assert_eq!(due, ids.len(), "every domain is due again");
    for ((id, was), checked) in ids.iter().zip(&before).zip(&checked_before) {
        let d = read(&app, &s.key, id).await;
        assert_eq!(&state(&d), was, "{d}");
        let d = stored(&app, &s.org_id, id).await;
        assert_ne!(&d.last_checked_at, checked, "checked again");
        assert_eq!(d.sweep_claimed_until, None);
    }
}

#[tokio::test]
async fn a_task_written_during_a_pass_does_not_drop_the_domains_evaluation() {
    // A task's delayed check (or a person closing it) writes the task between the pass's read
    // and its commit: the commit's version check on the task fails, as DynamoDB cancels the
    // transaction. Here the store refuses the first commit carrying task writes that way.
    let raced = Arc::new(AtomicBool::new(false));
    let armed = Arc::new(AtomicBool::new(false));
    let (flag, arm) = (raced.clone(), armed.clone());
    let dns = mailward_dns_fixture::FixtureServer::start(vec![
        Zone::new("test"),
        Zone::new("raced.test").txt("@", "v=spf1 -all"),
    ])
    .await
    .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(move |s| {
        s.dns = Some(addr);
        s.wrap_ports = Some(mailward_local_stack::PortWrapper(Arc::new(move |ports| {
            let (flag, arm) = (flag.clone(), arm.clone());
            mailward_local_stack::Ports {
                store: Arc::new(FaultyStore::new(
                    ports.store,
                    Box::new(move |call| match call {
                        StoreCall::Transact(ops)
                            if arm.load(Ordering::SeqCst)
                                && ops.iter().any(|op| op.key().1.starts_with("TASK#"))
                                && ops.iter().any(|op| op.key().1.starts_with("DOMAIN#"))
                                && !flag.swap(true, Ordering::SeqCst) =>
                        {
                            Err(StoreError::ConditionFailed)
                        }
                        _ => Ok(()),
                    }),
                )),
                queue: ports.queue,
            }
        })));
    })
    .await;
    let s = app.sign_up("race@race.example", "Race").await;
    let id = add_domain(&app, &s.key, "raced.test").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let before = read(&app, &s.key, &id).await;
    assert_eq!(before["monitoring_status"], "none", "{before}");
    armed.store(true, Ordering::SeqCst);
    crate::common::sweep(&app).await;
    assert!(raced.load(Ordering::SeqCst), "the pass wrote tasks");
    // The domain's evaluation is kept (monitoring status, score); its tasks come next pass.
    let domain = read(&app, &s.key, &id).await;
    assert_eq!(domain["monitoring_status"], "pending", "{domain}");
    assert!(domain["score"].as_u64().unwrap() > 0, "{domain}");
    crate::common::next_pass(&app).await;
    let domain = read(&app, &s.key, &id).await;
    assert!(domain["open_tasks_count"].as_u64().unwrap() > 0, "{domain}");
}
