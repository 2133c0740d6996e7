//! Webhooks end to end: a real HTTPS receiver on loopback (rustls, a test CA) receives signed
//! deliveries from the local stack.

use mailward_api_tests::receiver::{Receiver, Reply};
use mailward_api_tests::{SignedUp, TestApp};
use mailward_workers::webhooks::signature::verify;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(20);

struct Setup {
    app: TestApp,
    receiver: Receiver,
    org: SignedUp,
    _certs: tempfile::TempDir,
}

async fn setup() -> Setup {
    setup_wrapped(None).await
}

/// [`setup`], with a layer in front of the store and queue ports.
async fn setup_wrapped(wrap: Option<mailward_local_stack::PortWrapper>) -> Setup {
    let certs = tempfile::tempdir().unwrap();
    let receiver = Receiver::start(certs.path()).await;
    let ca = receiver.ca_path.clone();
    let app = TestApp::start_with(|s| {
        s.wrap_ports = wrap;
        s.webhook_allow_loopback = true;
        s.extra_ca = Some(ca);
        // Short enough to keep the hang test quick, long enough for a loaded CI machine.
        s.webhook_timeout = Duration::from_secs(6);
        // The tests poll the deliveries list for up to WAIT: no 429 from the key's bucket.
        s.rate_limits.push((
            mailward_services::config::Scope::ApiKey,
            "100000/60".parse().unwrap(),
        ));
    })
    .await;
    let org = app.sign_up("hooks@example.com", "Hooks Org").await;
    Setup {
        app,
        receiver,
        org,
        _certs: certs,
    }
}

impl Setup {
    async fn create_endpoint(&self, path: &str, events: Value) -> Value {
        let res = self
            .app
            .with_key(Method::POST, "/webhook-endpoints", &self.org.key)
            .json(&json!({"url": self.receiver.url(path), "description": "test", "enabled_events": events}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 201);
        res.json().await.unwrap()
    }

    /// Renames the organization: one `organization.updated` event.
    async fn trigger(&self, name: &str) {
        let res = self
            .app
            .with_key(
                Method::POST,
                &format!("/organizations/{}", self.org.org_id),
                &self.org.key,
            )
            .json(&json!({"name": name}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
    }

    async fn deliveries(&self, endpoint: &str) -> Vec<Value> {
        let res = self
            .app
            .with_key(
                Method::GET,
                &format!("/webhook-endpoints/{endpoint}/deliveries"),
                &self.org.key,
            )
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        res.json::<Value>().await.unwrap()["data"]
            .as_array()
            .unwrap()
            .clone()
    }

    async fn wait_deliveries(&self, endpoint: &str, n: usize) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let got = self.deliveries(endpoint).await;
            if got.len() >= n || tokio::time::Instant::now() >= deadline {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The delivery of attempt `n` of the endpoint's only event, once recorded (`Null` after
    /// the wait). By attempt number, not list position: under load two retries may run at the
    /// same manual-clock instant, and their order in the list is then a tie.
    async fn wait_attempt(&self, endpoint: &str, n: u64) -> Value {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let got = self.deliveries(endpoint).await;
            if let Some(found) = got.into_iter().find(|d| d["attempt"].as_u64() == Some(n)) {
                return found;
            }
            if tokio::time::Instant::now() >= deadline {
                return Value::Null;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn now(&self) -> i64 {
        use mailward_domain::Clock as _;
        self.app.clock.unix()
    }
}

#[tokio::test]
async fn deliveries_are_signed_over_the_raw_body_and_follow_subscriptions() {
    let s = setup().await;
    let all = s.create_endpoint("/all", json!([])).await;
    let org_only = s
        .create_endpoint("/org", json!(["organization.updated"]))
        .await;
    let other = s.create_endpoint("/other", json!(["domain.created"])).await;
    assert!(all["secret"].as_str().unwrap().starts_with("whsec_"));
    assert_eq!(all["api_version"], "2025-04-30");
    assert_eq!(all["status"], "ENABLED");

    s.trigger("Hooks Renamed").await;
    let got = s.receiver.wait_for(2, WAIT).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let got_all = s.receiver.requests();
    assert_eq!(
        got_all.len(),
        2,
        "the domain.created-only endpoint receives nothing"
    );
    for (path, endpoint) in [("/all", &all), ("/org", &org_only)] {
        let request = got.iter().find(|r| r.path == path).expect("delivered");
        let header = request.headers["mailward-signature"].to_str().unwrap();
        let secret = endpoint["secret"].as_str().unwrap();
        assert_eq!(
            verify(secret, header, &request.body, s.now(), 300),
            Ok(()),
            "signature over the raw body"
        );
        assert!(
            verify(
                other["secret"].as_str().unwrap(),
                header,
                &request.body,
                s.now(),
                300
            )
            .is_err()
        );
        let envelope: Value = serde_json::from_slice(&request.body).unwrap();
        assert_eq!(envelope["type"], "organization.updated");
        assert_eq!(envelope["api_version"], "2025-04-30");
        assert_eq!(envelope["data"]["object"]["name"], "Hooks Renamed");
        assert_eq!(envelope["data"]["previous_attributes"]["name"], "Hooks Org");
        assert_eq!(
            request.headers["mailward-event-id"],
            envelope["id"].as_str().unwrap()
        );
        assert_eq!(request.headers["content-type"], "application/json");
    }
    let ids: Vec<&str> = got
        .iter()
        .map(|r| r.headers["mailward-event-id"].to_str().unwrap())
        .collect();
    assert_eq!(ids[0], ids[1], "one event, one id, for every endpoint");

    let attempts = s.wait_deliveries(all["id"].as_str().unwrap(), 1).await;
    assert_eq!(attempts[0]["status"], "succeeded");
    assert_eq!(attempts[0]["response_status"], 200);
    assert_eq!(attempts[0]["attempt"], 1);
    // Reads never show the secret.
    let read: Value = s
        .app
        .with_key(
            Method::GET,
            &format!("/webhook-endpoints/{}", all["id"].as_str().unwrap()),
            &s.org.key,
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(read.get("secret").is_none());
    assert_eq!(
        read["secret_last_four"].as_str().unwrap(),
        &all["secret"].as_str().unwrap()[all["secret"].as_str().unwrap().len() - 4..]
    );
}

#[tokio::test]
async fn server_errors_and_429_are_retried_with_backoff_but_400_is_final() {
    let s = setup().await;
    let endpoint = s.create_endpoint("/hook", json!([])).await;
    let id = endpoint["id"].as_str().unwrap();
    s.receiver.script([
        Reply::Status(500),
        Reply::RetryAfter(429, 120),
        Reply::Status(200),
    ]);
    s.trigger("Retry One").await;
    assert_eq!(s.receiver.wait_for(1, WAIT).await.len(), 1);
    let first = s.wait_deliveries(id, 1).await;
    assert_eq!(first[0]["response_status"], 500);
    assert!(
        first[0]["next_retry_at"].is_string(),
        "a retry is scheduled"
    );

    // Nothing happens before the backoff elapses; then attempt 2 (429 with Retry-After 120).
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(s.receiver.requests().len(), 1);
    s.app.clock.advance(time::Duration::seconds(40));
    assert_eq!(s.receiver.wait_for(2, WAIT).await.len(), 2);
    s.wait_deliveries(id, 2).await;
    // Retry-After is honoured: 60 s later is still too early.
    s.app.clock.advance(time::Duration::seconds(60));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(s.receiver.requests().len(), 2);
    s.app.clock.advance(time::Duration::seconds(61));
    let got = s.receiver.wait_for(3, WAIT).await;
    assert_eq!(got.len(), 3);
    assert!(
        got.iter().all(|r| r.body == got[0].body),
        "every retry sends the same bytes"
    );
    let attempts = s.wait_deliveries(id, 3).await;
    assert_eq!(attempts[0]["attempt"], 3);
    assert_eq!(attempts[0]["status"], "succeeded");

    // A 400 is a deliberate rejection: no retry, however long we wait.
    s.app.clock.advance(time::Duration::seconds(1));
    s.receiver.script([Reply::Status(400)]);
    s.trigger("Rejected One").await;
    assert_eq!(s.receiver.wait_for(4, WAIT).await.len(), 4);
    s.app.clock.advance(time::Duration::hours(30));
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(s.receiver.requests().len(), 4);
    let attempts = s.wait_deliveries(id, 4).await;
    assert_eq!(attempts[0]["response_status"], 400);
    assert_eq!(attempts[0]["next_retry_at"], Value::Null);
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let s = setup().await;
    let endpoint = s.create_endpoint("/hook", json!([])).await;
    s.receiver
        .script([Reply::Redirect(s.receiver.url("/elsewhere"))]);
    s.trigger("Redirect Me").await;
    let attempts = s.wait_deliveries(endpoint["id"].as_str().unwrap(), 1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let got = s.receiver.requests();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].path, "/hook");
    assert_eq!(attempts[0]["response_status"], 302);
    assert_eq!(attempts[0]["next_retry_at"], Value::Null);
}

#[tokio::test]
async fn hangs_resets_and_huge_bodies_are_contained() {
    let s = setup().await;
    let endpoint = s.create_endpoint("/hook", json!([])).await;
    let id = endpoint["id"].as_str().unwrap();
    s.receiver.script([
        Reply::Hang(Duration::from_secs(12)),
        Reply::Reset,
        Reply::HugeBody,
    ]);
    s.trigger("Hang").await;
    let first = s.wait_attempt(id, 1).await;
    assert_eq!(first["status"], "failed", "{first}");
    assert!(
        first["error"].as_str().unwrap().contains("timed out"),
        "{first}"
    );
    assert!(first["next_retry_at"].is_string());
    s.app.clock.advance(time::Duration::seconds(40));
    let second = s.wait_attempt(id, 2).await;
    assert_eq!(second["status"], "failed", "{second}");
    assert_eq!(second["response_status"], Value::Null);
    s.app.clock.advance(time::Duration::seconds(80));
    let third = s.wait_attempt(id, 3).await;
    assert_eq!(
        third["status"], "succeeded",
        "a huge body is read only up to the cap: {third}"
    );
}

#[tokio::test]
async fn twenty_consecutive_failures_auto_disable_until_re_enabled() {
    let s = setup().await;
    let endpoint = s.create_endpoint("/hook", json!([])).await;
    let id = endpoint["id"].as_str().unwrap();
    s.receiver
        .script(std::iter::repeat_n(Reply::Status(410), 20));
    for i in 0..20 {
        s.trigger(&format!("Failing {i}")).await;
        assert_eq!(s.receiver.wait_for(i + 1, WAIT).await.len(), i + 1);
    }
    s.wait_deliveries(id, 20).await;
    let read = || async {
        s.app
            .with_key(Method::GET, &format!("/webhook-endpoints/{id}"), &s.org.key)
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()
    };
    let mut status = Value::Null;
    for _ in 0..100 {
        status = read().await["status"].clone();
        if status == "AUTO_DISABLED" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status, "AUTO_DISABLED");
    // The service's own change is in the activity log, by SYSTEM.
    let log: Value = s
        .app
        .with_key(
            Method::GET,
            &format!("/activity-log?action=webhook_endpoint.auto_disabled&target_id={id}"),
            &s.org.key,
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(log["page_info"]["total_count"], 1, "{log}");
    assert_eq!(log["data"][0]["actor_type"], "SYSTEM");

    s.trigger("While Disabled").await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        s.receiver.requests().len(),
        20,
        "an auto-disabled endpoint receives nothing"
    );

    // Re-enabled a second later, maybe before the publisher has seen the event of the disabled
    // time (on a loaded machine it has not): that event still is not delivered.
    s.app.clock.advance(time::Duration::seconds(1));
    let res = s
        .app
        .with_key(
            Method::POST,
            &format!("/webhook-endpoints/{id}"),
            &s.org.key,
        )
        .json(&json!({"status": "ENABLED"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.json::<Value>().await.unwrap()["status"], "ENABLED");
    s.trigger("Back Again").await;
    let got = s.receiver.wait_for(21, WAIT).await;
    assert_eq!(got.len(), 21);
    let envelope: Value = serde_json::from_slice(&got[20].body).unwrap();
    assert_eq!(envelope["data"]["object"]["name"], "Back Again");
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        s.receiver.requests().len(),
        21,
        "nothing of the disabled time"
    );
}

#[tokio::test]
async fn a_rotated_secret_signs_from_the_next_delivery_on() {
    let s = setup().await;
    let endpoint = s.create_endpoint("/hook", json!([])).await;
    let id = endpoint["id"].as_str().unwrap();
    let old = endpoint["secret"].as_str().unwrap().to_owned();
    let res = s
        .app
        .with_key(
            Method::POST,
            &format!("/webhook-endpoints/{id}/rotate-secret"),
            &s.org.key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let rotated: Value = res.json().await.unwrap();
    let new = rotated["secret"].as_str().unwrap();
    assert_ne!(new, old);
    s.trigger("Rotated").await;
    let got = s.receiver.wait_for(1, WAIT).await;
    let header = got[0].headers["mailward-signature"].to_str().unwrap();
    assert_eq!(verify(new, header, &got[0].body, s.now(), 300), Ok(()));
    assert!(verify(&old, header, &got[0].body, s.now(), 300).is_err());
}

#[tokio::test]
async fn deliveries_stay_readable_after_the_endpoint_is_deleted() {
    let s = setup().await;
    let endpoint = s.create_endpoint("/hook", json!([])).await;
    let id = endpoint["id"].as_str().unwrap();
    s.trigger("Before Delete").await;
    s.wait_deliveries(id, 1).await;
    let res = s
        .app
        .with_key(
            Method::DELETE,
            &format!("/webhook-endpoints/{id}"),
            &s.org.key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    let res = s
        .app
        .with_key(Method::GET, &format!("/webhook-endpoints/{id}"), &s.org.key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    let attempts = s.deliveries(id).await;
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0]["status"], "succeeded");
    // Another organization cannot read them: to it the endpoint does not exist.
    let other = s.app.sign_up("else@example.com", "Else Org").await;
    let deliveries_of = |key: String, id: String| {
        let request = s.app.with_key(
            Method::GET,
            &format!("/webhook-endpoints/{id}/deliveries"),
            &key,
        );
        async move { request.send().await.unwrap() }
    };
    let res = deliveries_of(other.key.clone(), id.to_string()).await;
    assert_eq!(res.status(), 404);
    assert_eq!(
        res.json::<Value>().await.unwrap()["code"],
        "resource_not_found"
    );
    // An id that never named an endpoint of the organization is not found either.
    let res = deliveries_of(s.org.key.clone(), uuid::Uuid::new_v4().to_string()).await;
    assert_eq!(res.status(), 404);
    // 30 days after the deletion the records and the endpoint's tombstone are gone.
    s.app.clock.advance(time::Duration::days(31));
    let res = deliveries_of(s.org.key.clone(), id.to_string()).await;
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn a_restart_mid_retry_still_delivers() {
    let s = setup().await;
    let endpoint = s.create_endpoint("/hook", json!([])).await;
    let id = endpoint["id"].as_str().unwrap().to_owned();
    s.receiver.script([Reply::Status(503)]);
    s.trigger("Survive Restart").await;
    s.wait_deliveries(&id, 1).await;
    let Setup {
        app,
        receiver,
        org,
        _certs,
    } = s;
    let app = app.restart().await;
    app.clock.advance(time::Duration::seconds(40));
    let got = receiver.wait_for(2, WAIT).await;
    assert_eq!(got.len(), 2, "the retry survived the restart");
    assert_eq!(got[0].body, got[1].body);
    let s = Setup {
        app,
        receiver,
        org,
        _certs,
    };
    let attempts = s.wait_deliveries(&id, 2).await;
    assert_eq!(attempts[0]["status"], "succeeded");
}

#[tokio::test]
async fn bad_endpoint_input_is_refused_with_the_field_named() {
    let s = setup().await;
    let good = s.receiver.url("/hook");
    for (body, param) in [
        (json!({"url": "http://example.com/hook"}), "url"),
        (json!({"url": "not a url"}), "url"),
        (json!({"url": "https://10.0.0.8/hook"}), "url"),
        (json!({"url": "https://169.254.169.254/latest"}), "url"),
        (
            json!({"url": good, "description": "x".repeat(501)}),
            "description",
        ),
        (
            json!({"url": good, "enabled_events": ["domain.created", "no.such.event"]}),
            "enabled_events",
        ),
        (
            json!({"url": good, "enabled_events": "domain.created"}),
            "enabled_events",
        ),
        (json!({"url": good, "extra": 1}), "extra"),
        (json!({}), "url"),
    ] {
        let res = s
            .app
            .with_key(Method::POST, "/webhook-endpoints", &s.org.key)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "{body}");
        let err: Value = res.json().await.unwrap();
        assert_eq!(err["param"], param, "{body} -> {err}");
        if body.get("enabled_events").is_some_and(Value::is_array) {
            assert!(err["message"].as_str().unwrap().contains("no.such.event"));
            assert_eq!(err["details"]["unknown_events"], json!(["no.such.event"]));
        }
    }
    let res = s
        .app
        .with_key(Method::POST, "/webhook-endpoints", &s.org.key)
        .json(&json!({"url": good, "description": "x".repeat(500)}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
}

#[tokio::test]
async fn the_event_catalogue_is_public() {
    let app = TestApp::start().await;
    let res = app
        .request(Method::GET, "/webhook-events")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    let names: Vec<&str> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    for name in [
        "domain.created",
        "domain.monitoring.activated",
        "task.opened",
        "organization.updated",
        "group.deleted",
    ] {
        assert!(names.contains(&name), "{name}");
    }
}

/// Tenant trust, finding 9: a receiver's URL may carry its credentials (a token in the path or
/// query); those who may not manage endpoints see it masked to scheme, host and port (still a
/// valid URI), in the list, the endpoint and its deliveries; administrators see it whole.
#[tokio::test]
async fn read_only_callers_see_webhook_urls_masked() {
    let s = setup().await;
    let url = s.receiver.url("/hook/s3cr3t-path?token=s3cr3t-query");
    let res = s
        .app
        .with_key(Method::POST, "/webhook-endpoints", &s.org.key)
        .json(&json!({"url": url, "enabled_events": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let created: Value = res.json().await.unwrap();
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["url"], url.as_str());
    let viewer =
        crate::admin::member(&s.app, &s.org, "viewer@hooks.example", &["viewer"], &[]).await;
    let admin = s
        .app
        .session_token("hooks@example.com", &s.org.org_id, false)
        .await;
    let (status, key) = crate::common::call_as(
        &s.app,
        Method::POST,
        "/api-keys",
        &admin,
        Some(json!({"name": "ro", "access": "read_only"})),
    )
    .await;
    assert_eq!(status, 201, "{key}");
    let read_only = key["key"].as_str().unwrap().to_owned();
    let masked = s.receiver.url("/...");
    for path in [
        "/webhook-endpoints".to_owned(),
        format!("/webhook-endpoints/{id}"),
    ] {
        let (_, as_viewer) =
            crate::common::call_as(&s.app, Method::GET, &path, &viewer, None).await;
        let (_, as_key) = crate::common::call(&s.app, Method::GET, &path, &read_only, None).await;
        let (_, as_admin) = crate::common::call(&s.app, Method::GET, &path, &s.org.key, None).await;
        for (who, body, expected) in [
            ("viewer", &as_viewer, masked.as_str()),
            ("read-only key", &as_key, masked.as_str()),
            ("administrator", &as_admin, url.as_str()),
        ] {
            let seen = if body["data"].is_array() {
                &body["data"][0]["url"]
            } else {
                &body["url"]
            };
            assert_eq!(seen, expected, "{who} {path}: {body}");
            assert!(
                !body.to_string().contains("s3cr3t") || who == "administrator",
                "{who} {path}: {body}"
            );
        }
    }
    // A delivery attempt records the URL too.
    s.trigger("Hooks Masked").await;
    s.receiver.wait_for(1, WAIT).await;
    let delivery = s.wait_attempt(&id, 1).await;
    assert_eq!(delivery["url"], url.as_str());
    let (_, attempts) = crate::common::call_as(
        &s.app,
        Method::GET,
        &format!("/webhook-endpoints/{id}/deliveries"),
        &viewer,
        None,
    )
    .await;
    assert_eq!(attempts["data"][0]["url"], masked.as_str(), "{attempts}");
}

#[tokio::test]
async fn a_queue_outage_answers_503_and_loses_no_event() {
    let down = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = down.clone();
    let wrap = mailward_local_stack::PortWrapper(std::sync::Arc::new(move |ports| {
        mailward_local_stack::Ports {
            store: ports.store,
            queue: std::sync::Arc::new(mailward_api_tests::faulty_queue::FaultyQueue::new(
                ports.queue,
                flag.clone(),
            )),
        }
    }));
    let s = setup_wrapped(Some(wrap)).await;
    s.create_endpoint("/hook", json!([])).await;

    down.store(true, std::sync::atomic::Ordering::SeqCst);
    // What needs the queue answers 503 with Retry-After and changes nothing: the
    // organization's deletion (its purge is a queued job) is refused whole.
    let res = s
        .app
        .with_key(
            Method::DELETE,
            &format!("/organizations/{}", s.org.org_id),
            &s.org.key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 503);
    assert_eq!(res.headers()["retry-after"], "5");
    // What needs only the table still works; its event waits for the queue.
    s.trigger("During The Outage").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        s.receiver.requests().is_empty(),
        "nothing can be delivered yet"
    );

    down.store(false, std::sync::atomic::Ordering::SeqCst);
    let got = s.receiver.wait_for(1, WAIT).await;
    assert_eq!(got.len(), 1, "the event survived the outage");
    let event: Value = serde_json::from_slice(&got[0].body).unwrap();
    assert_eq!(event["type"], "organization.updated", "{event}");
    assert_eq!(
        event["data"]["object"]["name"], "During The Outage",
        "{event}"
    );
    // The organization was never marked for deletion: its key still works.
    let domains = crate::common::get(&s.app, "/domains", &s.org.key).await;
    assert_eq!(domains["page_info"]["total_count"], 0, "{domains}");
}
