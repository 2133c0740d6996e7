//! Alert rules end to end: rules made through the API, alerts driven by real state changes (an
//! import of failing then passing reports; a domain made to fail in the suite's DNS server,
//! then repaired), and the messages caught by real HTTPS receivers on loopback, checked against
//! each destination's own tooling: Slack's SDK models (`slack_sdk`), Microsoft's Adaptive Cards
//! SDK, PagerDuty's Events API v2 fields.

use crate::common::{add_domain, identify_now, import_for, next_pass, sweep};
use mailward_api_tests::receiver::{Receiver, Recorded};
use mailward_api_tests::{SignedUp, TestApp};
use mailward_dns_fixture::{FixtureServer, Zone};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(20);
const ROUTING_KEY: &str = "R0ut1ngKeyOfTheTestIntegration42";

struct Setup {
    app: TestApp,
    receiver: Receiver,
    org: SignedUp,
    _certs: tempfile::TempDir,
}

async fn setup(dns: Option<String>) -> Setup {
    let certs = tempfile::tempdir().unwrap();
    let receiver = Receiver::start(certs.path()).await;
    let ca = receiver.ca_path.clone();
    let pagerduty = receiver.url("/pagerduty");
    let app = TestApp::start_with(|s| {
        s.webhook_allow_loopback = true;
        s.extra_ca = Some(ca);
        s.pagerduty_url = Some(pagerduty);
        s.dns = dns;
        s.webhook_timeout = Duration::from_secs(6);
        s.rate_limits.push((
            mailward_services::config::Scope::ApiKey,
            "100000/60".parse().unwrap(),
        ));
    })
    .await;
    let org = app.sign_up("alerts@example.com", "Alerts Org").await;
    Setup {
        app,
        receiver,
        org,
        _certs: certs,
    }
}

impl Setup {
    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self.app.with_key(method, path, &self.org.key);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await.unwrap();
        let status = res.status().as_u16();
        let text = res.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    async fn rule(&self, body: Value) -> Value {
        let (status, rule) = self.call(Method::POST, "/alert-rules", Some(body)).await;
        assert_eq!(status, 201, "{rule}");
        rule
    }

    /// The requests received on `path`, in order.
    fn at(&self, path: &str) -> Vec<Recorded> {
        self.receiver
            .requests()
            .into_iter()
            .filter(|r| r.path == path)
            .collect()
    }

    /// Waits until `path` received `n` requests; their JSON bodies.
    async fn wait_at(&self, path: &str, n: usize) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let got = self.at(path);
            if got.len() >= n {
                return got
                    .iter()
                    .map(|r| serde_json::from_slice(&r.body).unwrap())
                    .collect();
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{path}: {} of {n} requests arrived",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn alerts(&self, query: &str) -> Vec<Value> {
        let (status, list) = self
            .call(Method::GET, &format!("/alerts{query}"), None)
            .await;
        assert_eq!(status, 200, "{list}");
        list["data"].as_array().unwrap().clone()
    }
}

/// A one-day report for yesterday with `records` of (ip, count, dkim pass, spf pass).
fn report(app: &TestApp, domain: &str, id: &str, records: &[(&str, u64, bool)]) -> Vec<u8> {
    let today = crate::common::today_start(app);
    let verdict = |pass: bool| if pass { "pass" } else { "fail" };
    let rows: String = records
        .iter()
        .map(|(ip, n, pass)| {
            format!(
                "<record><row><source_ip>{ip}</source_ip><count>{n}</count><policy_evaluated><disposition>none</disposition>\
<dkim>{0}</dkim><spf>{0}</spf></policy_evaluated></row><identifiers><header_from>{domain}</header_from></identifiers></record>",
                verdict(*pass)
            )
        })
        .collect();
    format!(
        "<feedback><report_metadata><org_name>Receiver</org_name><report_id>{id}</report_id><date_range><begin>{}</begin>\
<end>{}</end></date_range></report_metadata><policy_published><domain>{domain}</domain><p>none</p></policy_published>{rows}</feedback>",
        today - 86_400,
        today - 1
    )
    .into_bytes()
}

/// Writes each body to a file of `dir`; the paths.
fn files(dir: &std::path::Path, prefix: &str, bodies: &[Value]) -> Vec<String> {
    bodies
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let path = dir.join(format!("{prefix}-{i}.json"));
            std::fs::write(&path, serde_json::to_vec(b).unwrap()).unwrap();
            path.display().to_string()
        })
        .collect()
}

/// Slack's own SDK parses and validates every Slack message.
fn check_with_slack_sdk(dir: &std::path::Path, bodies: &[Value]) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../alerts/check_slack.py");
    let out = std::process::Command::new(mailward_api_tests::venv_python())
        .arg(script)
        .args(files(dir, "slack", bodies))
        .output()
        .expect("python with slack_sdk (tests/run installs it into .venv)");
    assert!(
        out.status.success(),
        "slack_sdk refused a message: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Microsoft's Adaptive Cards SDK parses and validates every Teams card.
fn check_with_adaptive_cards(dir: &std::path::Path, bodies: &[Value]) {
    let tool = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../alerts");
    mailward_api_tests::npm_ci_once(&tool, "adaptivecards");
    let out = std::process::Command::new("node")
        .arg(tool.join("check_teams.js"))
        .args(files(dir, "teams", bodies))
        .output()
        .expect("node (tests/run needs Node.js)");
    assert!(
        out.status.success(),
        "the Adaptive Cards SDK refused a card: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// PagerDuty Events API v2: the fields an event must carry.
fn check_pagerduty(event: &Value, action: &str, dedup_key: &str) {
    assert_eq!(event["routing_key"], ROUTING_KEY, "{event}");
    assert_eq!(event["event_action"], action, "{event}");
    assert_eq!(event["dedup_key"], dedup_key, "{event}");
    if action == "trigger" {
        let payload = &event["payload"];
        let summary = payload["summary"].as_str().unwrap();
        assert!(!summary.is_empty() && summary.chars().count() <= 1024);
        assert!(!payload["source"].as_str().unwrap().is_empty());
        assert!(
            ["critical", "error", "warning", "info"]
                .contains(&payload["severity"].as_str().unwrap())
        );
        time::OffsetDateTime::parse(
            payload["timestamp"].as_str().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .expect("an ISO 8601 timestamp");
        assert!(payload["custom_details"].is_object());
        for link in event["links"].as_array().unwrap() {
            assert!(link["href"].as_str().unwrap().starts_with("http"));
        }
    } else {
        assert!(event.get("payload").is_none(), "{event}");
    }
}

#[tokio::test]
async fn a_pass_rate_rule_pages_once_repeats_after_its_interval_and_resolves() {
    let s = setup(None).await;
    let domain = add_domain(&s.app, &s.org.key, "paged.example").await;
    let id = domain["id"].as_str().unwrap();
    let rule = s
        .rule(json!({
            "name": "DMARC pass rate under 95% over 7 days",
            "scope": {"type": "domains", "domain_ids": [id]},
            "condition": {"type": "dmarc_pass_rate_below", "threshold_pct": 95, "window_days": 7, "min_messages": 10},
            "destinations": [
                {"type": "slack", "url": s.receiver.url("/slack")},
                {"type": "teams", "url": s.receiver.url("/teams")},
                {"type": "pagerduty", "routing_key": ROUTING_KEY},
                {"type": "email", "emails": ["oncall@ops.example"]}
            ],
            "repeat_interval_minutes": 60
        }))
        .await;
    let body = rule.to_string();
    assert!(
        !body.contains(ROUTING_KEY) && !body.contains("/slack"),
        "{body}"
    );
    assert_eq!(
        rule["destinations"][2]["hint"],
        format!("…{}", &ROUTING_KEY[28..])
    );

    // Failing reports: 100 messages, none passing DMARC.
    let failing = report(
        &s.app,
        "paged.example",
        "fail-1",
        &[("203.0.113.9", 100, false)],
    );
    import_for(&s.app, &s.org, &failing).await;
    identify_now(&s.app, &s.org, id).await;
    let slack = s.wait_at("/slack", 1).await;
    let teams = s.wait_at("/teams", 1).await;
    let pagerduty = s.wait_at("/pagerduty", 1).await;
    let open = s.alerts("?status=open").await;
    assert_eq!(open.len(), 1, "{open:?}");
    let alert = &open[0];
    assert_eq!(alert["condition"], "dmarc_pass_rate_below");
    assert_eq!(alert["domain"], "paged.example");
    assert_eq!(alert["details"]["volume"], 100);
    assert_eq!(alert["details"]["dmarc_pass_pct"], 0.0);
    assert!(
        alert["links"]["domain"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/domains/{id}"))
    );
    let dedup_key = alert["dedup_key"].as_str().unwrap().to_owned();
    check_pagerduty(&pagerduty[0], "trigger", &dedup_key);
    assert!(
        slack[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Alert opened"),
        "{}",
        slack[0]
    );
    assert!(slack[0].to_string().contains("paged.example"));
    assert_eq!(
        teams[0]["attachments"][0]["content"]["type"],
        "AdaptiveCard"
    );
    let mail = crate::notifications::mails_about(&s.app, "Alert opened", 1).await;
    assert!(mail[0].contains("To: oncall@ops.example"), "{}", mail[0]);
    assert!(mail[0].contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click"));

    // The same state again, within the interval: nothing more is sent.
    identify_now(&s.app, &s.org, id).await;
    sweep(&s.app).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(s.at("/slack").len(), 1);
    assert_eq!(s.at("/pagerduty").len(), 1);

    // Past the interval, still failing: one repeat, on the same incident.
    s.app.clock.advance(time::Duration::minutes(61));
    identify_now(&s.app, &s.org, id).await;
    let pagerduty = s.wait_at("/pagerduty", 2).await;
    check_pagerduty(&pagerduty[1], "trigger", &dedup_key);
    let slack = s.wait_at("/slack", 2).await;
    assert!(
        slack[1]["text"]
            .as_str()
            .unwrap()
            .starts_with("Alert still open")
    );

    // Passing reports bring the rate over 95%: resolved, once, with the same dedup_key.
    let passing = report(
        &s.app,
        "paged.example",
        "pass-1",
        &[("192.0.2.10", 10_000, true)],
    );
    import_for(&s.app, &s.org, &passing).await;
    identify_now(&s.app, &s.org, id).await;
    let pagerduty = s.wait_at("/pagerduty", 3).await;
    check_pagerduty(&pagerduty[2], "resolve", &dedup_key);
    let slack = s.wait_at("/slack", 3).await;
    assert!(
        slack[2]["text"]
            .as_str()
            .unwrap()
            .starts_with("Alert resolved")
    );
    let teams = s.wait_at("/teams", 3).await;
    identify_now(&s.app, &s.org, id).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(s.at("/pagerduty").len(), 3, "resolved once");

    let resolved = s.alerts("?status=resolved").await;
    assert_eq!(resolved.len(), 1);
    assert_eq!(resolved[0]["id"], alert["id"]);
    assert_eq!(resolved[0]["notifications"], 3);
    assert!(resolved[0]["resolved_at"].is_string());
    assert!(s.alerts("?status=open").await.is_empty());
    // Every attempt to the HTTP destinations is listed on the alert.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let listed = s.alerts("").await[0]["deliveries"]
            .as_array()
            .unwrap()
            .len();
        if listed == 9 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{listed} deliveries listed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (_, rule) = s
        .call(
            Method::GET,
            &format!("/alert-rules/{}", rule["id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(rule["open_alerts"], 0);

    // The activity log has the alert's opening and resolution.
    let (_, log) = s
        .call(Method::GET, "/activity-log?target_type=alert", None)
        .await;
    let actions: Vec<&str> = log["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert!(
        actions.contains(&"alert.opened") && actions.contains(&"alert.resolved"),
        "{actions:?}"
    );

    // The mail's one-click link takes that address off this rule alone.
    let path = crate::common::unsubscribe_path(&mail[0]);
    let res = s.app.request(Method::POST, &path).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let (_, after) = s
        .call(
            Method::GET,
            &format!("/alert-rules/{}", rule["id"].as_str().unwrap()),
            None,
        )
        .await;
    let kinds: Vec<&str> = after["destinations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["slack", "teams", "pagerduty"], "{after}");

    let dir = tempfile::tempdir().unwrap();
    check_with_slack_sdk(dir.path(), &slack);
    check_with_adaptive_cards(dir.path(), &teams);
}

fn zone(name: &str) -> Zone {
    Zone::new(name)
        .mx(name, 10, &format!("mx.{name}"))
        .a(&format!("mx.{name}"), "192.0.2.25")
        .txt(name, "v=spf1 -all")
}

#[tokio::test]
async fn monitoring_alerts_follow_the_dns_server_and_one_destination_failing_holds_no_other() {
    let dns = FixtureServer::start(vec![Zone::new("test"), zone("watched.test")])
        .await
        .unwrap();
    let s = setup(Some(dns.addr().to_string())).await;
    let domain = add_domain(&s.app, &s.org.key, "watched.test").await;
    let rua = domain["monitoring_email"].as_str().unwrap().to_owned();
    dns.set_txt(
        "_dmarc.watched.test",
        &format!("v=DMARC1; p=none; rua=mailto:{rua}"),
    )
    .unwrap();
    sweep(&s.app).await;

    // A webhook endpoint subscribed to alert.opened and named by the rule gets each event once.
    let (status, endpoint) = s
        .call(
            Method::POST,
            "/webhook-endpoints",
            Some(json!({"url": s.receiver.url("/hook"), "enabled_events": ["alert.opened"]})),
        )
        .await;
    assert_eq!(status, 201, "{endpoint}");
    s.rule(json!({
        "name": "Monitoring",
        "condition": {"type": "monitoring_problem"},
        "destinations": [
            // Nothing listens there: its deliveries fail and are retried on their own.
            {"type": "slack", "url": "https://127.0.0.1:9/broken"},
            {"type": "pagerduty", "routing_key": ROUTING_KEY},
            {"type": "webhook_endpoint", "endpoint_id": endpoint["id"]}
        ]
    }))
    .await;

    // The record goes away: the domain drifts (or fails), an alert opens.
    dns.remove("_dmarc.watched.test", None).unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        next_pass(&s.app).await;
        if !s.alerts("?status=open").await.is_empty() {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "no alert opened");
    }
    let pagerduty = s.wait_at("/pagerduty", 1).await;
    let open = s.alerts("?status=open").await;
    assert_eq!(open[0]["condition"], "monitoring_problem");
    let dedup_key = open[0]["dedup_key"].as_str().unwrap().to_owned();
    check_pagerduty(&pagerduty[0], "trigger", &dedup_key);
    let hooks = s.wait_at("/hook", 1).await;
    assert_eq!(hooks[0]["type"], "alert.opened");
    assert_eq!(hooks[0]["data"]["object"]["id"], open[0]["id"]);

    // Repaired: the alert resolves; the endpoint receives alert.resolved as the rule's
    // destination although it subscribed to alert.opened only.
    dns.set_txt(
        "_dmarc.watched.test",
        &format!("v=DMARC1; p=none; rua=mailto:{rua}"),
    )
    .unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        next_pass(&s.app).await;
        if s.alerts("?status=open").await.is_empty() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the alert did not resolve"
        );
    }
    let pagerduty = s.wait_at("/pagerduty", 2).await;
    check_pagerduty(&pagerduty[1], "resolve", &dedup_key);
    let hooks = s.wait_at("/hook", 2).await;
    assert_eq!(hooks[1]["type"], "alert.resolved");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(s.at("/hook").len(), 2, "each event once");
    // The broken Slack destination's failures are on the alert, with a retry planned.
    let alert = &s.alerts("").await[0];
    let slack: Vec<&Value> = alert["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["type"] == "slack")
        .collect();
    assert!(!slack.is_empty(), "{alert}");
    assert!(slack.iter().all(|d| d["status"] == "failed"));
    assert!(slack[0]["next_retry_at"].is_string(), "{alert}");
}

#[tokio::test]
async fn rules_are_checked_field_by_field_and_keep_their_secrets() {
    let s = setup(None).await;
    let domain = add_domain(&s.app, &s.org.key, "rules.example").await;
    let bad = [
        (
            json!({"name": "", "condition": {"type": "dns_conflict"}, "destinations": [{"type": "email", "emails": ["a@b.example"]}]}),
            "name",
        ),
        (
            json!({"name": "x", "condition": {"type": "sometimes"}, "destinations": [{"type": "email", "emails": ["a@b.example"]}]}),
            "condition.type",
        ),
        (
            json!({"name": "x", "condition": {"type": "dns_conflict", "threshold_pct": 3}, "destinations": [{"type": "email", "emails": ["a@b.example"]}]}),
            "condition.threshold_pct",
        ),
        (
            json!({"name": "x", "condition": {"type": "dmarc_pass_rate_below", "threshold_pct": 101}, "destinations": [{"type": "email", "emails": ["a@b.example"]}]}),
            "condition.threshold_pct",
        ),
        (
            json!({"name": "x", "condition": {"type": "score_below", "band": "critical"}, "destinations": [{"type": "email", "emails": ["a@b.example"]}]}),
            "condition.band",
        ),
        (
            json!({"name": "x", "condition": {"type": "dns_conflict"}, "destinations": []}),
            "destinations",
        ),
        (
            json!({"name": "x", "condition": {"type": "dns_conflict"}, "destinations": [{"type": "email", "emails": ["not an address"]}]}),
            "destinations[0].emails",
        ),
        (
            json!({"name": "x", "condition": {"type": "dns_conflict"}, "destinations": [{"type": "pagerduty", "routing_key": "short"}]}),
            "destinations[0].routing_key",
        ),
        (
            json!({"name": "x", "condition": {"type": "dns_conflict"}, "destinations": [{"type": "slack", "url": "http://hooks.slack.example/x"}]}),
            "destinations[0].url",
        ),
        (
            json!({"name": "x", "condition": {"type": "dns_conflict"}, "destinations": [{"type": "slack", "url": "https://10.0.0.1/x"}]}),
            "destinations[0].url",
        ),
        (
            json!({"name": "x", "condition": {"type": "dns_conflict"}, "destinations": [{"type": "slack", "routing_key": ROUTING_KEY}]}),
            "destinations[0].routing_key",
        ),
        (
            json!({"name": "x", "condition": {"type": "dns_conflict"}, "destinations": [{"type": "webhook_endpoint", "endpoint_id": uuid::Uuid::new_v4()}]}),
            "destinations[0].endpoint_id",
        ),
        (
            json!({"name": "x", "scope": {"type": "domains", "domain_ids": [uuid::Uuid::new_v4()]}, "condition": {"type": "dns_conflict"}, "destinations": [{"type": "email", "emails": ["a@b.example"]}]}),
            "scope.domain_ids",
        ),
        (
            json!({"name": "x", "scope": {"type": "groups"}, "condition": {"type": "dns_conflict"}, "destinations": [{"type": "email", "emails": ["a@b.example"]}]}),
            "scope.group_ids",
        ),
        (
            json!({"name": "x", "condition": {"type": "dns_conflict"}, "destinations": [{"type": "email", "emails": ["a@b.example"]}], "repeat_interval_minutes": 1}),
            "repeat_interval_minutes",
        ),
    ];
    for (body, param) in bad {
        let (status, error) = s
            .call(Method::POST, "/alert-rules", Some(body.clone()))
            .await;
        assert_eq!(status, 400, "{body} → {error}");
        assert_eq!(error["param"], param, "{body} → {error}");
    }

    let rule = s
        .rule(json!({
            "name": "Certificates",
            "scope": {"type": "domains", "domain_ids": [domain["id"]]},
            "condition": {"type": "certificate_expiring"},
            "destinations": [
                {"type": "teams", "url": s.receiver.url("/teams-secret-path")},
                {"type": "pagerduty", "routing_key": ROUTING_KEY}
            ]
        }))
        .await;
    assert_eq!(rule["condition"]["within_days"], 21);
    assert_eq!(rule["repeat_interval_minutes"], 240);
    let rule_id = rule["id"].as_str().unwrap().to_owned();
    let teams_id = rule["destinations"][0]["id"].clone();
    // A destination named by its id keeps its secret; the list and the rule never show it.
    let (status, updated) = s
        .call(
            Method::POST,
            &format!("/alert-rules/{rule_id}"),
            Some(json!({"name": "Certificates soon", "destinations": [{"type": "teams", "id": teams_id}]})),
        )
        .await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!(updated["destinations"].as_array().unwrap().len(), 1);
    assert_eq!(updated["destinations"][0]["id"], teams_id);
    let (_, list) = s.call(Method::GET, "/alert-rules", None).await;
    let shown = list.to_string();
    assert!(
        !shown.contains("teams-secret-path") && !shown.contains(ROUTING_KEY),
        "{shown}"
    );

    // The test sends a sample to the kept URL.
    let (status, test) = s
        .call(Method::POST, &format!("/alert-rules/{rule_id}/test"), None)
        .await;
    assert_eq!(status, 200, "{test}");
    assert_eq!(test["results"][0]["status"], "delivered", "{test}");
    let sample = s.wait_at("/teams-secret-path", 1).await;
    assert!(
        sample[0].to_string().contains("This is a test"),
        "{}",
        sample[0]
    );
    let dir = tempfile::tempdir().unwrap();
    check_with_adaptive_cards(dir.path(), &sample);

    // Another organization sees none of it; a read-only key reads but cannot change.
    let other = s.app.sign_up("other@else.example", "Other Org").await;
    let res = s
        .app
        .with_key(Method::GET, &format!("/alert-rules/{rule_id}"), &other.key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    let res = s
        .app
        .with_key(
            Method::DELETE,
            &format!("/alert-rules/{rule_id}"),
            &other.key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);

    let (status, _) = s
        .call(Method::DELETE, &format!("/alert-rules/{rule_id}"), None)
        .await;
    assert_eq!(status, 204);
    let (status, _) = s
        .call(Method::GET, &format!("/alert-rules/{rule_id}"), None)
        .await;
    assert_eq!(status, 404);
    let (status, error) = s.call(Method::GET, "/alerts?status=maybe", None).await;
    assert_eq!((status, error["param"].as_str()), (400, Some("status")));
}
