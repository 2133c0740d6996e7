//! Email notifications: a domain reaching `setup` and one reaching `failed` each send exactly one
//! mail to the administrators (none when the switch is off), a domain's first report sends
//! `first_report` once, and the one-click unsubscribe link turns its switch off.

use crate::common::{add_domain, sweep, undmarced as zone};
use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use mailward_reports::Limits;
use mailward_workers::ingest::ingest;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

/// Every mail the stack sent, oldest first.
fn mails(app: &TestApp) -> Vec<String> {
    app.mails()
}

fn subject(mail: &str) -> &str {
    mail.lines()
        .find_map(|l| l.strip_prefix("Subject: "))
        .unwrap_or_default()
}

/// The mails whose subject contains `needle`, once at least `count` arrived (or after 30 s).
pub(crate) async fn mails_about(app: &TestApp, needle: &str, count: usize) -> Vec<String> {
    let mut found = Vec::new();
    for _ in 0..600 {
        found = mails(app)
            .into_iter()
            .filter(|m| subject(m).contains(needle))
            .collect();
        if found.len() >= count {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    found
}

async fn set_switch(app: &TestApp, key: &str, org: &str, name: &str, on: bool) {
    let path = format!("/organizations/{org}");
    let body = json!({"settings": {"email_notifications": {name: on}}});
    let (status, org) = crate::common::call(app, Method::POST, &path, key, Some(body)).await;
    assert_eq!(status, 200, "{org}");
}

/// The organization's notification switches (an empty update answers the organization).
async fn switches(app: &TestApp, key: &str, org: &str) -> Value {
    let path = format!("/organizations/{org}");
    let (_, org) = crate::common::call(app, Method::POST, &path, key, Some(json!({}))).await;
    org["settings"]["email_notifications"].clone()
}

/// The base64 parts of a multipart mail, decoded.
pub(crate) fn parts(mail: &str) -> Vec<String> {
    use base64::Engine as _;
    mail.split("Content-Transfer-Encoding: base64\r\n\r\n")
        .skip(1)
        .map(|part| {
            let encoded: String = part.split("\r\n--").next().unwrap().split("\r\n").collect();
            String::from_utf8(
                base64::engine::general_purpose::STANDARD
                    .decode(encoded)
                    .unwrap(),
            )
            .unwrap()
        })
        .collect()
}

#[tokio::test]
async fn monitoring_moves_and_first_reports_mail_the_administrators_once() {
    let dns = FixtureServer::start(vec![
        Zone::new("test"),
        zone("live.test"),
        zone("lost.test"),
        zone("muted.test"),
        zone("later.test"),
    ])
    .await
    .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        s.pending_grace = Duration::from_secs(3600);
    })
    .await;
    let s = app.sign_up("admin@notify.example", "Notify <Org>").await;
    let live = add_domain(&app, &s.key, "live.test").await;
    let lost = add_domain(&app, &s.key, "lost.test").await;
    sweep(&app).await;

    // live.test publishes its record: setup. lost.test never does: failed after the grace.
    dns.set_txt(
        "_dmarc.live.test",
        &format!(
            "v=DMARC1; p=none; rua=mailto:{}",
            live["monitoring_email"].as_str().unwrap()
        ),
    )
    .unwrap();
    app.clock.advance(time::Duration::minutes(61));
    sweep(&app).await;
    let setup = mails_about(&app, "live.test is monitored", 1).await;
    let failed = mails_about(&app, "lost.test: DMARC monitoring could not be set up", 1).await;
    assert_eq!(setup.len(), 1);
    assert_eq!(failed.len(), 1);
    let mail = &setup[0];
    assert!(mail.contains("To: admin@notify.example\r\n"), "{mail}");
    assert!(mail.contains("multipart/alternative"), "{mail}");
    assert!(
        mail.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n"),
        "{mail}"
    );
    let [text, html] = &parts(mail)[..] else {
        panic!("two parts expected: {mail}")
    };
    let id = live["id"].as_str().unwrap();
    assert!(text.contains(&format!("/domains/{id}")), "{text}");
    assert!(
        html.contains("Notify &lt;Org&gt;"),
        "names are escaped: {html}"
    );
    let failed_text = &parts(&failed[0])[0];
    assert!(
        failed_text.contains("reason: dmarc_record_missing"),
        "{failed_text}"
    );
    assert!(
        failed_text.contains(&format!(
            "/domains/{}/dns-records",
            lost["id"].as_str().unwrap()
        )),
        "{failed_text}"
    );

    // Later passes change nothing: still one mail each.
    app.clock.advance(time::Duration::minutes(6));
    sweep(&app).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(mails_about(&app, "live.test", 1).await.len(), 1);
    assert_eq!(mails_about(&app, "lost.test", 1).await.len(), 1);

    // domain_failed switched off: muted.test fails without a mail, while later.test (added at
    // the same time, set up in the same pass) still mails, so the jobs did run.
    set_switch(&app, &s.key, &s.org_id, "domain_failed", false).await;
    let later = add_domain(&app, &s.key, "later.test").await;
    add_domain(&app, &s.key, "muted.test").await;
    dns.set_txt(
        "_dmarc.later.test",
        &format!(
            "v=DMARC1; p=none; rua=mailto:{}",
            later["monitoring_email"].as_str().unwrap()
        ),
    )
    .unwrap();
    sweep(&app).await;
    app.clock.advance(time::Duration::minutes(61));
    sweep(&app).await;
    assert_eq!(
        mails_about(&app, "later.test is monitored", 1).await.len(),
        1
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        mails(&app)
            .iter()
            .all(|m| !subject(m).contains("muted.test")),
        "no mail while domain_failed is off"
    );

    // The first aggregate report of live.test mails once; a second report does not.
    let state = &app.stack.state;
    for report_id in ["first", "second"] {
        ingest(
            state,
            &crate::reports::yesterday_report(&app, "live.test", report_id),
            &crate::common::to(&live),
            &Limits::default(),
        )
        .await
        .unwrap();
    }
    assert_eq!(
        mails_about(&app, "live.test: the first DMARC report arrived", 1)
            .await
            .len(),
        1
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        mails_about(&app, "the first DMARC report", 1).await.len(),
        1,
        "sent once"
    );

    // The unsubscribe link: GET only asks, POST turns the switch off.
    let link = mail
        .lines()
        .find_map(|l| l.strip_prefix("List-Unsubscribe: <"))
        .and_then(|l| l.strip_suffix('>'))
        .unwrap()
        .to_owned();
    let path = link.split_once("/notifications").unwrap().1;
    let path = format!("/notifications{path}");
    let page = app.request(Method::GET, &path).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("domain_setup"));
    assert_eq!(
        switches(&app, &s.key, &s.org_id).await["domain_setup"],
        true
    );
    let done: Value = app
        .request(Method::POST, &path)
        .header("accept", "application/json")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        done,
        json!({"organization": "Notify <Org>", "setting": "domain_setup", "enabled": false})
    );
    let now = switches(&app, &s.key, &s.org_id).await;
    assert_eq!(
        (
            &now["domain_setup"],
            &now["domain_failed"],
            &now["first_report"]
        ),
        (&json!(false), &json!(false), &json!(true))
    );

    // A forged or damaged token names the field.
    let forged = path.replace("domain_setup", "first_report");
    for bad in [forged.as_str(), "/notifications/unsubscribe?token=nope"] {
        let response = app.request(Method::POST, bad).send().await.unwrap();
        assert_eq!(response.status(), 400);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["param"], "token", "{body}");
    }
}

#[tokio::test]
async fn a_daily_digest_lists_the_open_tasks_and_skips_an_unchanged_day() {
    let dns = FixtureServer::start(vec![Zone::new("test"), zone("tasks.test")])
        .await
        .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| s.dns = Some(addr)).await;
    let s = app.sign_up("digest@notify.example", "Digest Org").await;
    add_domain(&app, &s.key, "tasks.test").await;
    sweep(&app).await;
    let open =
        crate::common::get_json(&app, Method::GET, "/tasks?statuses[]=open", &s.key).await["data"]
            .as_array()
            .unwrap()
            .clone();
    assert!(!open.is_empty(), "a domain without DMARC has open tasks");

    let digests = mails_about(&app, "open task", 1).await;
    assert_eq!(digests.len(), 1);
    let mail = &digests[0];
    assert!(mail.contains("To: digest@notify.example\r\n"), "{mail}");
    assert!(
        subject(mail).contains(&format!("Digest Org: {} open task", open.len())),
        "{}",
        subject(mail)
    );
    let text = &parts(mail)[0];
    for task in &open {
        let line = format!("- tasks.test: {}", task["description"].as_str().unwrap());
        assert!(text.contains(&line), "{line} missing from {text}");
    }
    let heading = match open.iter().filter_map(|t| t["priority"].as_str()).next() {
        Some("critical") => "Critical (",
        Some("high") => "High (",
        Some("medium") => "Medium (",
        _ => "Low (",
    };
    assert!(text.contains(heading), "{heading} missing from {text}");

    // The next day lists the same tasks: no second digest.
    app.clock.advance(time::Duration::days(1));
    sweep(&app).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(mails_about(&app, "open task", 1).await.len(), 1);
}

#[tokio::test]
async fn reminders_name_waiting_domains_and_expiring_invitations_once() {
    let dns = FixtureServer::start(vec![Zone::new("test"), zone("waiting.test")])
        .await
        .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| s.dns = Some(addr)).await;
    let s = app.sign_up("admin@remind.example", "Remind Org").await;
    let waiting = add_domain(&app, &s.key, "waiting.test").await;
    let (status, invitation) = crate::common::call(
        &app,
        Method::POST,
        "/invitations",
        &s.key,
        Some(json!({"email": "late@remind.example", "roles": ["viewer"], "ttl_sec": 259_200})),
    )
    .await;
    assert_eq!(status, 201, "{invitation}");
    sweep(&app).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        mails_about(&app, "waiting for its DMARC record", 0)
            .await
            .is_empty(),
        "no reminder before a day of waiting"
    );
    assert!(mails_about(&app, "expires soon", 0).await.is_empty());

    // A day later the domain is still pending and the invitation expires within two days.
    app.clock.advance(time::Duration::hours(25));
    sweep(&app).await;
    let setup = mails_about(
        &app,
        "waiting.test is still waiting for its DMARC record",
        1,
    )
    .await;
    assert_eq!(setup.len(), 1);
    assert!(setup[0].contains("To: admin@remind.example\r\n"));
    let text = &parts(&setup[0])[0];
    let id = waiting["id"].as_str().unwrap();
    assert!(
        text.contains(&format!("/domains/{id}/dns-records")),
        "{text}"
    );
    assert!(text.contains("setup_reminders"), "{text}");
    let invites = mails_about(
        &app,
        "The invitation of late@remind.example expires soon",
        1,
    )
    .await;
    assert_eq!(invites.len(), 1);
    let text = &parts(&invites[0])[0];
    assert!(
        text.contains(&format!(
            "/invitations/{}/resend",
            invitation["id"].as_str().unwrap()
        )),
        "{text}"
    );

    // The next day: the same domain and invitation are not news; nothing more is sent.
    app.clock.advance(time::Duration::days(1));
    sweep(&app).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(mails_about(&app, "waiting for", 1).await.len(), 1);
    assert_eq!(mails_about(&app, "expires soon", 1).await.len(), 1);
}

#[tokio::test]
async fn reminders_are_not_sent_with_their_switches_off() {
    let dns = FixtureServer::start(vec![Zone::new("test"), zone("quiet.test")])
        .await
        .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| s.dns = Some(addr)).await;
    let s = app.sign_up("admin@quiet.example", "Quiet Org").await;
    set_switch(&app, &s.key, &s.org_id, "setup_reminders", false).await;
    set_switch(&app, &s.key, &s.org_id, "invitation_reminders", false).await;
    add_domain(&app, &s.key, "quiet.test").await;
    let (status, _) = crate::common::call(
        &app,
        Method::POST,
        "/invitations",
        &s.key,
        Some(json!({"email": "late@quiet.example", "roles": ["viewer"], "ttl_sec": 172_800})),
    )
    .await;
    assert_eq!(status, 201);
    sweep(&app).await;
    app.clock.advance(time::Duration::hours(25));
    sweep(&app).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(mails_about(&app, "waiting for", 0).await.is_empty());
    assert!(mails_about(&app, "expires soon", 0).await.is_empty());
}

/// Publishes the DMARC record that sends `domain`'s reports to Mailward.
fn publish_monitoring(dns: &FixtureServer, domain: &Value) {
    dns.set_txt(
        &format!("_dmarc.{}", domain["url"].as_str().unwrap()),
        &format!(
            "v=DMARC1; p=none; rua=mailto:{}",
            domain["monitoring_email"].as_str().unwrap()
        ),
    )
    .unwrap();
}

#[tokio::test]
async fn billing_notices_announce_the_trial_end_and_a_new_tier_once() {
    let names: Vec<String> = (1..=11).map(|i| format!("d{i}.test")).collect();
    let mut zones = vec![Zone::new("test"), zone("quiet.test")];
    zones.extend(names.iter().map(|n| zone(n)));
    let dns = FixtureServer::start(zones).await.unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| s.dns = Some(addr)).await;
    let s = app
        .sign_up_priced("admin@bill.example", "Bill Co", Some("it_teams"))
        .await;
    // A second paid organization with the switch off, and a free one: neither hears of it.
    let off = app
        .sign_up_priced("admin@off.example", "Off Co", Some("it_teams"))
        .await;
    set_switch(&app, &off.key, &off.org_id, "billing_notices", false).await;
    let free = app.sign_up("admin@free.example", "Free Co").await;
    // A signup's plan is only offered: the trial starts when checkout is paid.
    app.subscribe(&s, "it_teams").await;
    app.subscribe(&off, "it_teams").await;
    let mut domains = Vec::new();
    for name in &names {
        domains.push(add_domain(&app, &s.key, name).await);
    }
    for (org, name) in [(&off, "quiet.test"), (&free, "d1.test")] {
        let d = add_domain(&app, &org.key, name).await;
        publish_monitoring(&dns, &d);
    }
    // Ten domains monitored (active, billed); the eleventh waits.
    for d in &domains[..10] {
        publish_monitoring(&dns, d);
    }
    app.clock.advance(time::Duration::minutes(61));
    sweep(&app).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(mails_about(&app, "trial", 0).await.is_empty(), "not yet");

    // Within three days of the trial's end (14 days after signup): announced once.
    app.clock
        .advance(time::Duration::days(11) + time::Duration::hours(1));
    sweep(&app).await;
    let ending = mails_about(&app, "Your Mailward trial ends on", 1).await;
    assert_eq!(ending.len(), 1);
    assert!(
        ending[0].contains("To: admin@bill.example\r\n"),
        "{}",
        ending[0]
    );
    let text = &parts(&ending[0])[0];
    assert!(
        text.contains("your invoices bill your 10 active domains as: DOMAIN-ACTIVE-1TO10 × 10"),
        "{text}"
    );
    assert!(text.contains("/usage?expand[]=line_items"), "{text}");
    assert!(text.contains("billing_notices"), "{text}");
    app.clock.advance(time::Duration::days(1));
    sweep(&app).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(mails_about(&app, "trial ends", 1).await.len(), 1, "once");

    // Past the end: the tiers now billed, once.
    app.clock.advance(time::Duration::days(2));
    sweep(&app).await;
    let ended = mails_about(&app, "Your Mailward trial has ended", 1).await;
    assert_eq!(ended.len(), 1);
    let text = &parts(&ended[0])[0];
    assert!(text.contains("DOMAIN-ACTIVE-1TO10 × 10"), "{text}");

    // The eleventh domain becomes active: the 11TO100 tier starts, announced the next day once.
    publish_monitoring(&dns, &domains[10]);
    app.clock.advance(time::Duration::hours(2));
    sweep(&app).await;
    app.clock.advance(time::Duration::days(1));
    sweep(&app).await;
    let tier = mails_about(
        &app,
        "11 active domains: the DOMAIN-ACTIVE-11TO100 tier starts",
        1,
    )
    .await;
    assert_eq!(tier.len(), 1);
    assert!(parts(&tier[0])[0].contains("1 of them billed in it"));
    app.clock.advance(time::Duration::days(1));
    sweep(&app).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(mails_about(&app, "tier starts", 1).await.len(), 1, "once");

    // Nobody else heard of billing.
    let others: Vec<String> = mails(&app)
        .into_iter()
        .filter(|m| {
            (m.contains("To: admin@off.example\r\n") || m.contains("To: admin@free.example\r\n"))
                && (subject(m).contains("trial") || subject(m).contains("tier"))
        })
        .collect();
    assert!(others.is_empty(), "{others:?}");
}
