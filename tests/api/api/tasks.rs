//! Remediation tasks end to end: derived by the sweep from a fixture zone (exactly the expected
//! tasks, in the expected order under each sort), resolved as verified when the record is
//! fixed, reopened when it breaks again; person transitions and their refusals; the rollout
//! plan following the domain; the preview predicting the score the sweep then computes; and
//! task events only after the stabilisation window, once.

use crate::common::{add_domain, get_json, next_pass, outbox_events, sweep};
use mailward_api_tests::{SignedUp, TestApp};
use mailward_dns_fixture::{FixtureServer, Zone};
use reqwest::Method;
use serde_json::{Value, json};

/// A domain with several problems: no DMARC record, an SPF record ending in +all, and mail
/// servers without MTA-STS or TLS-RPT.
fn troubled(name: &str) -> Zone {
    Zone::new(name)
        .ns("@", &format!("ns1.{name}."))
        .mx("@", 10, &format!("mx.{name}."))
        .a("mx", "192.0.2.40")
        .txt("@", "v=spf1 mx +all")
}

async fn tasks(app: &TestApp, key: &str, query: &str) -> Vec<Value> {
    get_json(app, Method::GET, &format!("/tasks?{query}"), key).await["data"]
        .as_array()
        .unwrap()
        .clone()
}

fn types(tasks: &[Value]) -> Vec<String> {
    tasks
        .iter()
        .map(|t| t["type"].as_str().unwrap().to_owned())
        .collect()
}

async fn task_events(app: &TestApp) -> Vec<Value> {
    outbox_events(app)
        .await
        .into_iter()
        .filter(|e| e["type"].as_str().unwrap().starts_with("task."))
        .collect()
}

async fn setup(zone: &str) -> (FixtureServer, TestApp, SignedUp, String) {
    let dns = FixtureServer::start(vec![Zone::new("test"), troubled(zone)])
        .await
        .unwrap();
    let addr = dns.addr().to_string();
    // The outbox is inspected directly (nothing publishes it), and the resolver caches nothing:
    // the tests edit DNS and move the clock, not real time.
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        s.publish_outbox = false;
        s.dns_cache_ttl_cap = Some(std::time::Duration::ZERO);
    })
    .await;
    let s = app.sign_up(&format!("t@{zone}.example"), "Tasks Org").await;
    let id = add_domain(&app, &s.key, zone).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    sweep(&app).await;
    (dns, app, s, id)
}

#[tokio::test]
async fn a_troubled_domain_gets_exactly_its_tasks_in_each_order() {
    let (_dns, app, s, id) = setup("troubled.test").await;
    let listed = tasks(&app, &s.key, "").await;
    let mut low = types(&listed)[2..].to_vec();
    low.sort();
    assert_eq!(
        (&types(&listed)[..2], low.as_slice()),
        (
            &[
                "set_up_dmarc_record".to_owned(),
                "cleanup_spf_record".to_owned()
            ][..],
            &["set_up_mta_sts".to_owned(), "set_up_tls_rpt".to_owned()][..]
        ),
        "priority order: critical DMARC, high SPF, then the two low hardening tasks"
    );
    assert_eq!(listed[0]["priority"], 0);
    assert_eq!(listed[0]["sequence"], 10);
    assert_eq!(listed[1]["priority"], 1);
    assert!(
        listed[1]["description"]
            .as_str()
            .unwrap()
            .contains("+all or ?all"),
        "{}",
        listed[1]
    );
    assert!(
        listed[0]["description"]
            .as_str()
            .unwrap()
            .contains("v=DMARC1"),
        "the description says what to publish: {}",
        listed[0]
    );
    assert!(
        listed
            .iter()
            .all(|t| t["status"] == "open" && t["domain_id"] == id.as_str())
    );
    // The tie between the two low tasks (same priority and sequence) breaks by recency, then id:
    // stable from one call to the next.
    assert_eq!(listed, tasks(&app, &s.key, "").await);

    let by_sequence = tasks(&app, &s.key, "sort=sequence").await;
    assert_eq!(
        types(&by_sequence)[..2],
        ["set_up_dmarc_record", "cleanup_spf_record"]
    );
    let reversed = tasks(&app, &s.key, "sort=sequence&order=desc").await;
    assert_eq!(types(&reversed)[3], "set_up_dmarc_record");
    let by_status = tasks(&app, &s.key, "sort=status").await;
    assert_eq!(types(&by_status), types(&listed), "all open: by priority");

    // The domain carries the counters, and expand[]=tasks its open work.
    let domain = get_json(
        &app,
        Method::GET,
        &format!("/domains/{id}?expand[]=tasks"),
        &s.key,
    )
    .await;
    assert_eq!(domain["open_tasks_count"], 4);
    assert_eq!(domain["highest_open_task_priority"], 0);
    assert_eq!(domain["tasks"].as_array().unwrap().len(), 4);

    // expand[]=domain adds the domain and the score gain the fix would bring.
    let expanded = tasks(&app, &s.key, "expand[]=domain").await;
    assert_eq!(expanded[0]["domain"]["url"], "troubled.test");
    assert!(
        expanded[0]["score_gain"].as_u64().unwrap() > 0,
        "{}",
        expanded[0]
    );
    assert_eq!(expanded[2]["score_gain"], 0, "MTA-STS is not scored");

    // A second pass changes nothing: still one task per problem.
    next_pass(&app).await;
    assert_eq!(
        tasks(
            &app,
            &s.key,
            "statuses=open,pending,done,canceled,dismissed,snoozed"
        )
        .await
        .len(),
        4
    );
}

#[tokio::test]
async fn fixing_a_record_resolves_its_task_and_breaking_it_again_reopens_it() {
    let (dns, app, s, _id) = setup("fixes.test").await;
    let spf_task = tasks(&app, &s.key, "").await[1].clone();
    assert_eq!(spf_task["type"], "cleanup_spf_record");
    let task_id = spf_task["id"].as_str().unwrap();

    dns.set_txt("fixes.test", "v=spf1 mx -all").unwrap();
    next_pass(&app).await;
    let fixed = get_json(&app, Method::GET, &format!("/tasks/{task_id}"), &s.key).await;
    assert_eq!(fixed["status"], "done");
    assert_eq!(fixed["resolution_reason"], "verified");
    assert!(fixed["resolved_at"].is_string());
    assert_eq!(tasks(&app, &s.key, "").await.len(), 3);
    let done = tasks(&app, &s.key, "statuses=done").await;
    assert_eq!(done.len(), 1);

    dns.set_txt("fixes.test", "v=spf1 mx ?all").unwrap();
    next_pass(&app).await;
    let back = get_json(&app, Method::GET, &format!("/tasks/{task_id}"), &s.key).await;
    assert_eq!(back["status"], "open", "the same task reopens");
    assert_eq!(back["resolution_reason"], Value::Null);
    assert_eq!(tasks(&app, &s.key, "").await.len(), 4);
}

#[tokio::test]
async fn people_move_tasks_within_the_rules_and_wrong_input_is_refused() {
    let (_dns, app, s, domain_id) = setup("moves.test").await;
    let listed = tasks(&app, &s.key, "").await;
    let tls = listed
        .iter()
        .find(|t| t["type"] == "set_up_tls_rpt")
        .unwrap();
    let path = format!("/tasks/{}", tls["id"].as_str().unwrap());
    let post = |body: Value| {
        let request = app.with_key(Method::POST, &path, &s.key).json(&body);
        async move { request.send().await.unwrap() }
    };
    // Snooze (default seven days), then done by hand: resolution manual, counters follow.
    let res = post(json!({"status": "snoozed"})).await;
    assert_eq!(res.status(), 200);
    let snoozed: Value = res.json().await.unwrap();
    assert_eq!(snoozed["status"], "snoozed");
    assert!(snoozed["snoozed_until"].is_string());
    let domain = get_json(&app, Method::GET, &format!("/domains/{domain_id}"), &s.key).await;
    assert_eq!(domain["open_tasks_count"], 3, "snoozed work is put aside");
    let res = post(json!({"status": "done"})).await;
    let done: Value = res.json().await.unwrap();
    assert_eq!(
        (done["status"].as_str(), done["resolution_reason"].as_str()),
        (Some("done"), Some("manual"))
    );
    // Closing it again is not a move: 409 naming status.
    let res = post(json!({"status": "dismissed"})).await;
    assert_eq!(res.status(), 409);
    let body: Value = res.json().await.unwrap();
    assert_eq!(
        (body["code"].as_str(), body["param"].as_str()),
        (Some("task_transition_invalid"), Some("status"))
    );
    // The problem is still in DNS: the next pass reopens the task a person marked done.
    next_pass(&app).await;
    let again = get_json(&app, Method::GET, &path, &s.key).await;
    assert_eq!(again["status"], "open");

    for (body, param) in [
        (json!({"status": "finished"}), "status"),
        (json!({"confirm_source": true}), "confirm_source"),
        (json!({"ignore_spf": true}), "ignore_spf"),
        (
            json!({"status": "snoozed", "snoozed_until": "2000-01-01T00:00:00Z"}),
            "snoozed_until",
        ),
        (
            json!({"status": "done", "snoozed_until": "2099-01-01T00:00:00Z"}),
            "snoozed_until",
        ),
        (json!({"colour": "red"}), "colour"),
    ] {
        let res = post(body.clone()).await;
        assert_eq!(res.status(), 400, "{body}");
        assert_eq!(res.json::<Value>().await.unwrap()["param"], param, "{body}");
    }
    for (query, param) in [
        ("statuses=open,closed", "statuses"),
        ("sort=colour", "sort"),
        ("order=sideways", "order"),
        ("expand[]=instructions", "expand[]"),
    ] {
        let res = app
            .with_key(Method::GET, &format!("/tasks?{query}"), &s.key)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "{query}");
        assert_eq!(
            res.json::<Value>().await.unwrap()["param"],
            param,
            "{query}"
        );
    }

    // Another organization cannot see or touch the task: 404, never a leak.
    let other = app.sign_up("other@moves.example", "Other Org").await;
    for method in [Method::GET, Method::POST] {
        let mut request = app.with_key(method.clone(), &path, &other.key);
        if method == Method::POST {
            request = request.json(&json!({"status": "dismissed"}));
        }
        assert_eq!(request.send().await.unwrap().status(), 404);
    }
    assert!(tasks(&app, &other.key, "").await.is_empty());
    // A read-only key reads but never writes.
    let token = app.session_token(&s.email, &s.org_id, false).await;
    let key: Value = app
        .with_session(Method::POST, "/api-keys", &token)
        .json(&json!({"name": "ro", "access": "read_only"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ro = key["key"].as_str().unwrap();
    assert_eq!(tasks(&app, ro, "").await.len(), 4);
    let res = app
        .with_key(Method::POST, &path, ro)
        .json(&json!({"status": "dismissed"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
}

#[tokio::test]
async fn instructions_give_the_exact_records_to_publish() {
    let (_dns, app, s, _id) = setup("howto.test").await;
    let dmarc = &tasks(&app, &s.key, "").await[0];
    let task = get_json(
        &app,
        Method::GET,
        &format!(
            "/tasks/{}?expand[]=instructions&expand[]=domain",
            dmarc["id"].as_str().unwrap()
        ),
        &s.key,
    )
    .await;
    let records = task["instructions"]["dns_records"].as_array().unwrap();
    assert_eq!(records.len(), 1, "{task}");
    assert_eq!(records[0]["type"], "TXT");
    assert_eq!(records[0]["name"], "_dmarc.howto.test");
    assert!(
        records[0]["value"]
            .as_str()
            .unwrap()
            .starts_with("v=DMARC1")
    );
    assert!(task["instructions"]["steps"].as_array().unwrap().len() >= 2);
    assert_eq!(task["domain"]["url"], "howto.test");
}

#[tokio::test]
async fn the_plan_follows_the_domain_through_its_stages() {
    let (dns, app, s, id) = setup("journey.test").await;
    let plan_path = format!("/domains/{id}/plan");
    let plan_of = || get_json(&app, Method::GET, &plan_path, &s.key);
    // Agents propose on paid plans only (the agent add-on): none on the free entitlements.
    let free = plan_of().await;
    assert_eq!(free["agent_proposals_enabled"], false, "{free}");
    assert!(free["upcoming_steps"].as_array().unwrap().is_empty());
    app.subscribe(&s, "it_teams").await;
    let plan = plan_of().await;
    assert_eq!(plan["current_stage"], 1, "{plan}");
    let setup_steps = plan["stages"][0]["steps"].as_array().unwrap();
    assert_eq!(setup_steps[0]["key"], "dmarc-setup");
    assert_eq!(setup_steps[0]["status"], "in_progress");
    assert_eq!(setup_steps[0]["task_ids"].as_array().unwrap().len(), 1);
    assert_eq!(plan["agent_proposals_enabled"], true);
    assert_eq!(plan["scan_findings"], Value::Null);

    // DMARC with Mailward's address: monitoring sets up, enforcement becomes current.
    let rua =
        get_json(&app, Method::GET, &format!("/domains/{id}"), &s.key).await["monitoring_email"]
            .as_str()
            .unwrap()
            .to_owned();
    dns.set_txt(
        "_dmarc.journey.test",
        &format!("v=DMARC1; p=none; rua=mailto:{rua}"),
    )
    .unwrap();
    dns.set_txt("journey.test", "v=spf1 mx -all").unwrap();
    next_pass(&app).await;
    let plan = plan_of().await;
    assert_eq!(plan["stages"][0]["status"], "completed", "{plan}");
    assert_eq!(plan["current_stage"], 3, "{plan}");
    let keys: Vec<&str> = plan["stages"][2]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["dmarc-quarantine", "dmarc-reject-full"]);
    assert_eq!(plan["upcoming_steps"].as_array().unwrap().len(), 2);

    // Reject: only hardening is left.
    dns.set_txt(
        "_dmarc.journey.test",
        &format!("v=DMARC1; p=reject; rua=mailto:{rua}"),
    )
    .unwrap();
    next_pass(&app).await;
    let plan = plan_of().await;
    assert_eq!(plan["current_stage"], 4, "{plan}");

    // Proposals off (the domain's own setting): no upcoming steps.
    let res = app
        .with_key(Method::POST, &format!("/domains/{id}"), &s.key)
        .json(&json!({"agent_proposals_enabled": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let plan = plan_of().await;
    assert_eq!(plan["agent_proposals_enabled"], false);
    assert!(plan["upcoming_steps"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn the_preview_of_a_fix_predicts_the_score_the_sweep_then_computes() {
    let (dns, app, s, id) = setup("preview.test").await;
    let rua =
        get_json(&app, Method::GET, &format!("/domains/{id}"), &s.key).await["monitoring_email"]
            .as_str()
            .unwrap()
            .to_owned();
    let dmarc = format!("v=DMARC1; p=quarantine; rua=mailto:{rua}");
    let res = app
        .with_key(Method::POST, &format!("/domains/{id}/preview"), &s.key)
        .json(&json!({"dmarc": dmarc, "spf": "v=spf1 mx -all"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let preview: Value = res.json().await.unwrap();
    let predicted = preview["proposed"]["score"].as_u64().unwrap();
    assert!(
        predicted > preview["current"]["score"].as_u64().unwrap(),
        "{preview}"
    );
    let closing = types(preview["tasks_closing"].as_array().unwrap());
    assert_eq!(
        closing,
        ["set_up_dmarc_record", "cleanup_spf_record"],
        "{preview}"
    );
    assert!(
        preview["records"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["valid"] == true)
    );
    assert_eq!(preview["spf"]["record"], "v=spf1 mx -all");
    // Nothing was stored: the tasks are still open.
    assert_eq!(tasks(&app, &s.key, "").await.len(), 4);

    dns.set_txt("_dmarc.preview.test", &dmarc).unwrap();
    dns.set_txt("preview.test", "v=spf1 mx -all").unwrap();
    next_pass(&app).await;
    let domain = get_json(&app, Method::GET, &format!("/domains/{id}"), &s.key).await;
    assert_eq!(domain["score"].as_u64().unwrap(), predicted, "{domain}");

    // A broken proposal is answered with its parser's finding, not an error.
    let res = app
        .with_key(Method::POST, &format!("/domains/{id}/preview"), &s.key)
        .json(&json!({"spf": "v=spf1 include: -all", "dmarc": "v=DMARC1; p=bogus"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let broken: Value = res.json().await.unwrap();
    let spf = broken["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["record"] == "spf")
        .unwrap();
    assert_eq!(spf["valid"], false);
    assert!(!spf["messages"].as_array().unwrap().is_empty(), "{spf}");
    for (body, param) in [
        (json!({}), "dmarc"),
        (json!({"spf": ""}), "spf"),
        (
            json!({"dkim": [{"selector": "bad name!", "value": "v=DKIM1; p=abc"}]}),
            "dkim[0].selector",
        ),
        (json!({"mx": "10 mx.example"}), "mx"),
    ] {
        let res = app
            .with_key(Method::POST, &format!("/domains/{id}/preview"), &s.key)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "{body}");
        assert_eq!(res.json::<Value>().await.unwrap()["param"], param, "{body}");
    }
}

#[tokio::test]
async fn task_events_fire_once_after_the_window_and_never_for_a_flap() {
    let (dns, app, s, _id) = setup("events.test").await;
    assert!(
        task_events(&app).await.is_empty(),
        "nothing before the window"
    );
    // The queued checks run once the clock passes four hours.
    app.clock
        .advance(time::Duration::hours(4) + time::Duration::seconds(1));
    let mut opened = Vec::new();
    for _ in 0..200 {
        opened = task_events(&app).await;
        if opened.len() >= 4 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(opened.len(), 4, "{opened:?}");
    assert!(opened.iter().all(|e| e["type"] == "task.opened"));
    assert_eq!(opened[0]["object"]["status"], "open");
    // A duplicate delivery of a check emits nothing more.
    let task = &opened[0]["object"];
    let check = mailward_services::tasks::EventCheck {
        org_id: s.org_id.parse().unwrap(),
        task_id: task["id"].as_str().unwrap().parse().unwrap(),
        status: mailward_tasks::TaskStatus::Open,
        since: time::OffsetDateTime::parse(
            task["created_at"].as_str().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap(),
    };
    mailward_services::tasks::run_check(&app.stack.state, check.clone())
        .await
        .unwrap();
    mailward_services::tasks::run_check(&app.stack.state, check)
        .await
        .unwrap();
    assert_eq!(task_events(&app).await.len(), 4);

    // A flap: TLS-RPT published and removed inside the window emits nothing at all.
    let before = task_events(&app).await.len();
    dns.set_txt(
        "_smtp._tls.events.test",
        "v=TLSRPTv1; rua=mailto:tls@events.test",
    )
    .unwrap();
    next_pass(&app).await; // resolved
    dns.remove("_smtp._tls.events.test", None).unwrap();
    app.clock.advance(time::Duration::hours(1));
    sweep(&app).await; // reopened, one hour after it resolved
    app.clock.advance(time::Duration::hours(5));
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let after = task_events(&app).await;
    assert_eq!(
        after.len(),
        before,
        "flapping inside the window is no news: {after:?}"
    );
}

/// A mark certificate expiring `days` from now, as a PEM file.
fn vmc_pem(days: i64) -> Vec<u8> {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["certs.test".to_owned()]).unwrap();
    params.not_after = time::OffsetDateTime::now_utc() + time::Duration::days(days);
    params.self_signed(&key).unwrap().pem().into_bytes()
}

#[tokio::test]
async fn expiring_certificates_become_tasks_and_renewals_resolve_them() {
    use mailward_api_tests::receiver::{Receiver, Reply};
    use mailward_api_tests::smtp_tls::SmtpTlsServer;
    let dir = tempfile::tempdir().unwrap();
    let web = Receiver::start(dir.path()).await;
    let now = time::OffsetDateTime::now_utc();
    let smtp =
        SmtpTlsServer::start(dir.path(), "mx.certs.test", now - time::Duration::days(1)).await;
    let bundle = dir.path().join("cas.pem");
    std::fs::write(
        &bundle,
        [
            std::fs::read(&web.ca_path).unwrap(),
            std::fs::read(&smtp.ca_path).unwrap(),
        ]
        .concat(),
    )
    .unwrap();
    let zone = Zone::new("certs.test")
        .ns("@", "ns1.certs.test.")
        .mx("@", 10, "mx.certs.test.")
        .a("mx", "127.0.0.1")
        .txt("@", "v=spf1 mx -all")
        .txt("_dmarc", "v=DMARC1; p=reject")
        .txt(
            "default._bimi",
            &format!(
                "v=BIMI1; l={}; a={}",
                web.url("/logo.svg"),
                web.url("/vmc.pem")
            ),
        );
    let dns = FixtureServer::start(vec![Zone::new("test"), zone])
        .await
        .unwrap();
    let (dns_addr, smtp_port) = (dns.addr().to_string(), smtp.addr.port());
    let app = TestApp::start_with(|s| {
        s.dns = Some(dns_addr);
        s.publish_outbox = false;
        s.dns_cache_ttl_cap = Some(std::time::Duration::ZERO);
        s.webhook_allow_loopback = true;
        s.extra_ca = Some(bundle);
        s.mx_tls_probe = true;
        s.mx_tls_port = smtp_port;
    })
    .await;
    let s = app.sign_up("certs@certs.example", "Certs Org").await;
    add_domain(&app, &s.key, "certs.test").await;
    web.script([Reply::Body("application/x-pem-file".into(), vmc_pem(10))]);
    sweep(&app).await;
    let listed = tasks(&app, &s.key, "").await;
    let vmc = listed
        .iter()
        .find(|t| t["type"] == "renew_vmc_certificate")
        .unwrap_or_else(|| panic!("{listed:?}"));
    assert!(
        vmc["description"].as_str().unwrap().contains("expires in"),
        "{vmc}"
    );
    assert_eq!(vmc["priority"], 2);
    let mx = listed
        .iter()
        .find(|t| t["type"] == "fix_mx_certificate")
        .unwrap_or_else(|| panic!("{listed:?}"));
    assert!(
        mx["description"]
            .as_str()
            .unwrap()
            .contains("mx.certs.test is expired"),
        "{mx}"
    );
    // Checked about daily: the next pass reuses what it learned (no second fetch).
    next_pass(&app).await;
    assert_eq!(
        web.requests()
            .iter()
            .filter(|r| r.path == "/vmc.pem")
            .count(),
        1
    );

    // Renewed certificates: the next daily check resolves both tasks as verified.
    web.script([Reply::Body("application/x-pem-file".into(), vmc_pem(365))]);
    smtp.set_certificate("mx.certs.test", now + time::Duration::days(365));
    app.clock.advance(time::Duration::days(1));
    sweep(&app).await;
    let done = tasks(&app, &s.key, "statuses=done").await;
    let mut done_types = types(&done);
    done_types.sort();
    assert_eq!(
        done_types,
        ["fix_mx_certificate", "renew_vmc_certificate"],
        "{done:?}"
    );
    assert!(done.iter().all(|t| t["resolution_reason"] == "verified"));
}
