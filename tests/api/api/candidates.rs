//! Sources beyond the catalogue: senders seen in several organizations' reports become
//! candidates that only staff see, with their evidence, and staff promote or reject them; an
//! organization names its own senders as custom sources that nobody else sees.

use crate::common::{add_domain, call, get_json};
use crate::staff::{STAFF, post, staff_desk, staff_get};
use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use mailward_reports::Limits;
use mailward_workers::ingest::ingest;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;

fn zones() -> Vec<Zone> {
    vec![
        Zone::new("test"),
        // 203.0.113.9 is out1.bulk-mailer.example, which points back: forward-confirmed.
        Zone::new("113.0.203.in-addr.arpa").ptr("9", "out1.bulk-mailer.example."),
        Zone::new("bulk-mailer.example").a("out1", "203.0.113.9"),
    ]
}

fn row(ip: &str, count: u32, domain: &str, envelope: &str, dkim: Option<&str>) -> String {
    let signature = dkim.map_or(String::new(), |d| {
        format!("<dkim><domain>{d}</domain><selector>s</selector><result>pass</result></dkim>")
    });
    format!(
        "<record><row><source_ip>{ip}</source_ip><count>{count}</count><policy_evaluated>\
<disposition>none</disposition><dkim>fail</dkim><spf>fail</spf></policy_evaluated></row>\
<identifiers><header_from>{domain}</header_from><envelope_from>{envelope}</envelope_from>\
</identifiers><auth_results>{signature}<spf><domain>{envelope}</domain><result>pass</result>\
</spf></auth_results></record>"
    )
}

/// Yesterday's report of `domain` with `rows`.
fn report(app: &TestApp, id: &str, domain: &str, rows: &[String]) -> Vec<u8> {
    let today = crate::common::today_start(app);
    format!(
        "<feedback><report_metadata><org_name>Receiver</org_name><report_id>{id}</report_id>\
<date_range><begin>{}</begin><end>{}</end></date_range></report_metadata>\
<policy_published><domain>{domain}</domain><p>none</p></policy_published>{}</feedback>",
        today - 86_400,
        today - 1,
        rows.concat()
    )
    .into_bytes()
}

/// Polls `path` (moving the clock past the identification job's delay) until `done` holds.
async fn until(app: &TestApp, path: &str, key: &str, done: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    for _ in 0..1200 {
        app.clock.advance(time::Duration::seconds(10));
        // Staff tokens are bearer tokens (JWTs); API keys go as basic credentials.
        let req = if key.starts_with("eyJ") {
            app.request(Method::GET, path).bearer_auth(key)
        } else {
            app.with_key(Method::GET, path, key)
        };
        let res = req.send().await.unwrap();
        last = res.json().await.unwrap_or(Value::Null);
        if done(&last) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{path} never got there: {last}");
}

fn names(list: &Value) -> Vec<String> {
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn unknown_senders_become_candidates_staff_promote_and_organizations_name_their_own() {
    let dns = FixtureServer::start(zones()).await.unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        s.publish_outbox = false;
        s.staff_emails = vec![STAFF.to_owned()];
    })
    .await;
    let (token, _) = staff_desk(&app).await;
    let alpha = app.sign_up("it@alpha.example", "Alpha").await;
    let beta = app.sign_up("it@beta.example", "Beta").await;
    let alpha_domain = add_domain(&app, &alpha.key, "alpha.example").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let beta_domain = add_domain(&app, &beta.key, "beta.example").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Alpha: the bulk mailer, an in-house relay the catalogue cannot know, its own server.
    let alpha_rows = [
        row(
            "203.0.113.9",
            10,
            "alpha.example",
            "bounce.bulk-mailer.example",
            None,
        ),
        row(
            "198.51.100.30",
            4,
            "alpha.example",
            "relay.crm-inhouse.example",
            None,
        ),
        row(
            "192.0.2.20",
            3,
            "alpha.example",
            "bounce.alpha.example",
            None,
        ),
    ];
    // Beta: the bulk mailer again, and SendGrid (in the catalogue).
    let beta_rows = [
        row(
            "203.0.113.9",
            6,
            "beta.example",
            "bounce.bulk-mailer.example",
            Some("bulk-mailer.example"),
        ),
        row(
            "192.0.2.10",
            20,
            "beta.example",
            "bounces.sendgrid.net",
            Some("sendgrid.net"),
        ),
    ];
    for (org, id, domain, rows) in [
        (&alpha, "a-1", "alpha.example", &alpha_rows[..]),
        (&beta, "b-1", "beta.example", &beta_rows[..]),
    ] {
        ingest(
            &app.stack.state,
            &report(&app, id, domain, rows),
            &crate::common::for_org(org),
            &Limits::default(),
        )
        .await
        .unwrap();
    }
    for (key, id, n) in [(&alpha.key, &alpha_domain, 3), (&beta.key, &beta_domain, 2)] {
        let path = format!("/domains/{id}/sources");
        until(&app, &path, key, |l| {
            l.as_array().is_some_and(|a| a.len() == n)
        })
        .await;
    }

    // Staff see the senders no source identifies, summed across organizations; never a
    // customer's own domain, never a catalogue source, never which organizations.
    let list = until(&app, "/staff/candidates", &token, |l| {
        l["data"].as_array().is_some_and(|a| a.len() == 2)
    })
    .await;
    assert_eq!(names(&list), ["bulk-mailer.example", "crm-inhouse.example"]);
    let bulk = &list["data"][0];
    assert_eq!(bulk["status"], "PENDING_REVIEW");
    assert_eq!(
        (&bulk["organizations"], &bulk["domains"], &bulk["volume"]),
        (&json!(2), &json!(2), &json!(16))
    );
    assert_eq!(bulk["ptr_names"], json!(["out1.bulk-mailer.example"]));
    assert_eq!(
        bulk["envelope_domains"],
        json!(["bounce.bulk-mailer.example"])
    );
    assert_eq!(bulk["dkim_domains"], json!(["bulk-mailer.example"]));
    assert!(
        !list.to_string().contains(&alpha.org_id),
        "no organization is named"
    );
    let (status, one) = staff_get(&app, "/staff/candidates/crm-inhouse.example", &token).await;
    assert_eq!((status, &one["volume"]), (StatusCode::OK, &json!(4)));
    assert_eq!(
        staff_get(&app, "/staff/candidates/nobody.example", &token)
            .await
            .0,
        404
    );
    assert_eq!(
        staff_get(&app, "/staff/candidates/not%20a%20name", &token)
            .await
            .0,
        400
    );
    assert_eq!(
        staff_get(&app, "/staff/candidates?status=LOST", &token)
            .await
            .0,
        400
    );

    // Customers and anonymous callers never see candidates, nor reach the staff routes.
    for key in [Some(alpha.key.as_str()), None] {
        for path in ["/sources", "/sources?status=PENDING_REVIEW"] {
            let req = match key {
                Some(key) => app.with_key(Method::GET, path, key),
                None => app.request(Method::GET, path),
            };
            let body = req.send().await.unwrap().text().await.unwrap();
            assert!(
                !body.contains("bulk-mailer") && !body.contains("crm-inhouse"),
                "{path}"
            );
        }
    }
    let pending = get_json(
        &app,
        Method::GET,
        "/sources?status=PENDING_REVIEW",
        &beta.key,
    )
    .await;
    assert_eq!(pending, json!([]));
    let (status, _) = call(&app, Method::GET, "/staff/candidates", &alpha.key, None).await;
    assert_eq!(status, 401);

    // Staff reject the relay (once).
    let reject = "/staff/candidates/crm-inhouse.example/reject";
    let (status, rejected) = post(&app, reject, Some(&token), json!({})).await;
    assert_eq!(
        (status, &rejected["status"]),
        (StatusCode::OK, &json!("REJECTED"))
    );
    assert_eq!(rejected["reviewed_by"], STAFF);
    assert_eq!(post(&app, reject, Some(&token), json!({})).await.0, 409);
    let (_, pending) = staff_get(&app, "/staff/candidates", &token).await;
    assert_eq!(names(&pending), ["bulk-mailer.example"]);

    // Alpha names the relay as its own source: bad input first, each field named.
    for (body, param) in [
        (json!({"sending_domains": ["crm-inhouse.example"]}), "name"),
        (json!({"name": "CRM"}), "sending_domains"),
        (
            json!({"name": "CRM", "sending_domains": ["not a name"]}),
            "sending_domains",
        ),
        (
            json!({"name": "CRM", "envelope_froms": ["a.example"], "category": "X"}),
            "category",
        ),
        (
            json!({"name": "CRM", "envelope_froms": ["a.example"], "homepage": "http://a.example"}),
            "homepage",
        ),
        (
            json!({"name": "CRM", "envelope_froms": ["a.example"], "dkim_selectors": ["a b"]}),
            "dkim_selectors",
        ),
    ] {
        let (status, err) = call(&app, Method::POST, "/sources", &alpha.key, Some(body)).await;
        assert_eq!(
            (status, err["param"].as_str()),
            (StatusCode::BAD_REQUEST, Some(param)),
            "{err}"
        );
    }
    let define = json!({"name": "In-house CRM", "category": "SENDING_TOOL",
        "sending_domains": ["crm-inhouse.example"], "dkim_selectors": ["crm1"]});
    let (status, custom) = call(&app, Method::POST, "/sources", &alpha.key, Some(define)).await;
    assert_eq!(status, 201, "{custom}");
    assert_eq!(
        (&custom["is_custom"], &custom["origin"]),
        (&json!(true), &json!("CUSTOM"))
    );
    let custom_id = custom["id"].as_str().unwrap().to_owned();
    let custom_path = format!("/sources/{custom_id}");
    // Only Alpha sees it.
    assert_eq!(
        call(&app, Method::GET, &custom_path, &beta.key, None)
            .await
            .0,
        404
    );
    assert_eq!(
        app.request(Method::GET, &custom_path)
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    let beta_list = get_json(&app, Method::GET, "/sources", &beta.key).await;
    assert!(!beta_list.to_string().contains("In-house CRM"));
    let alpha_list = get_json(&app, Method::GET, "/sources?origin=CUSTOM", &alpha.key).await;
    assert_eq!(alpha_list.as_array().unwrap().len(), 1);
    let (status, _) = call(
        &app,
        Method::POST,
        &custom_path,
        &beta.key,
        Some(json!({"name": "x"})),
    )
    .await;
    assert_eq!(status, 404);
    // Alpha's relay is now known by that name, and leaves the candidates' evidence.
    let path = format!("/domains/{alpha_domain}/sources");
    let senders = until(&app, &path, &alpha.key, |l| {
        l.as_array()
            .is_some_and(|a| a.iter().any(|s| s["source_id"] == custom_id.as_str()))
    })
    .await;
    let relay = senders
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["source_id"] == custom_id.as_str())
        .unwrap();
    assert_eq!(relay["source_name"], "In-house CRM");
    assert_eq!(relay["totals"]["non_compliant"], 4);
    let relay = until(&app, "/staff/candidates/crm-inhouse.example", &token, |c| {
        c["volume"] == 0
    })
    .await;
    assert_eq!(relay["status"], "REJECTED");

    // Staff promote the bulk mailer: a catalogue source for everyone, and both organizations'
    // unknown sender becomes it.
    let promote = "/staff/candidates/bulk-mailer.example/promote";
    let bad = json!({"name": "Bulk Mailer", "category": "NOPE"});
    let (status, err) = post(&app, promote, Some(&token), bad).await;
    assert_eq!(
        (status, err["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("category"))
    );
    let body = json!({"name": "Bulk Mailer", "category": "EMAIL_RELAY",
        "homepage": "https://bulk-mailer.example/"});
    let (status, source) = post(&app, promote, Some(&token), body.clone()).await;
    assert_eq!(status, 200, "{source}");
    assert_eq!(
        (&source["origin"], &source["status"]),
        (&json!("PROMOTED"), &json!("ACTIVE"))
    );
    assert_eq!(source["external_id"], "bulk-mailer");
    assert_eq!(source["base_domains"], json!(["bulk-mailer.example"]));
    assert_eq!(post(&app, promote, Some(&token), body).await.0, 409);
    let id = source["id"].as_str().unwrap().to_owned();
    let public = app
        .request(Method::GET, &format!("/sources/{id}"))
        .send()
        .await
        .unwrap();
    let public: Value = public.json().await.unwrap();
    assert_eq!(public["name"], "Bulk Mailer");
    assert_eq!(public["instructions_curation"], Value::Null);
    for (key, domain) in [(&alpha.key, &alpha_domain), (&beta.key, &beta_domain)] {
        let path = format!("/domains/{domain}/sources");
        until(&app, &path, key, |l| {
            l.as_array()
                .is_some_and(|a| a.iter().any(|s| s["source_id"] == id.as_str()))
        })
        .await;
    }
    let (_, active) = staff_get(&app, "/staff/candidates?status=ACTIVE", &token).await;
    assert_eq!(names(&active), ["bulk-mailer.example"]);
    assert_eq!(active["data"][0]["source_id"], id.as_str());

    // Alpha removes its source: the relay is unknown again, evidence for staff once more.
    assert_eq!(
        call(&app, Method::DELETE, &custom_path, &alpha.key, None)
            .await
            .0,
        204
    );
    assert_eq!(
        call(&app, Method::GET, &custom_path, &alpha.key, None)
            .await
            .0,
        404
    );
    until(&app, "/staff/candidates/crm-inhouse.example", &token, |c| {
        c["volume"] == 4
    })
    .await;
}
