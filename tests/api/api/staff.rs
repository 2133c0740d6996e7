//! The staff surface: staff sign in with the emailed code and their authenticator app, work
//! the support queue across organizations (reply with an attachment), find and suspend an
//! organization (its API then reads only) and lift it; each action is in the organization's
//! activity log as SERVICE_STAFF. Runs on SQLite and on the AWS adapters in moto.

use crate::common::{add_domain, call, get};
use crate::identity::{app_code, enrol};
use mailward_api_tests::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

pub const STAFF: &str = "desk@staff.mailward.example";

pub async fn post(
    app: &TestApp,
    path: &str,
    token: Option<&str>,
    body: Value,
) -> (StatusCode, Value) {
    crate::identity::post_json(app, path, token, body).await
}

pub async fn staff_get(app: &TestApp, path: &str, token: &str) -> (StatusCode, Value) {
    let res = app
        .request(Method::GET, path)
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// Starts a sign-in for `email` and sends its emailed code to `POST /staff/session`.
async fn staff_code_step(app: &TestApp, email: &str) -> (StatusCode, Value, Value) {
    let (status, started) = post(app, "/oauth/session/start", None, json!({"email": email})).await;
    assert_eq!(status, 202);
    let body = json!({"signin_id": started["signin_id"], "code": app.code_for(email)});
    let (status, answer) = post(app, "/staff/session", None, body).await;
    (status, answer, started["signin_id"].clone())
}

/// A staff token for [`STAFF`], whose authenticator's secret is `secret`.
async fn staff_token(app: &TestApp, secret: &str) -> String {
    let (status, answer, signin_id) = staff_code_step(app, STAFF).await;
    assert_eq!(
        (status, &answer["code"]),
        (StatusCode::FORBIDDEN, &json!("mfa_required"))
    );
    let body = json!({"signin_id": signin_id, "mfa_code": app_code(app, secret)});
    let (status, session) = post(app, "/staff/session", None, body).await;
    assert_eq!(status, 200, "{session}");
    assert_eq!(session["email"], STAFF);
    session["token"].as_str().unwrap().to_owned()
}

/// The staff member's account with an authenticator app, signed in to the staff surface: the
/// staff token and a dashboard session of the desk's own organization.
pub async fn staff_desk(app: &TestApp) -> (String, String) {
    let desk = app.sign_up(STAFF, "Mailward Support Desk").await;
    let desk_session = app.session_token(STAFF, &desk.org_id, false).await;
    let (secret, _) = enrol(app, &desk_session).await;
    // The next step of the authenticator app (the enrolment used this one).
    app.clock.advance(time::Duration::seconds(30));
    (staff_token(app, &secret).await, desk_session)
}

#[tokio::test]
async fn staff_answer_a_ticket_and_suspend_an_organization_on_the_record() {
    let app = TestApp::start_with(|s| {
        s.staff_emails = vec![STAFF.to_owned()];
        s.support_email = Some("help@staff.mailward.example".into());
    })
    .await;
    // The staff member's own account, with an authenticator app.
    let (token, desk_session) = staff_desk(&app).await;
    // A customer with a domain and a question.
    let customer = app.sign_up("it@customer.example", "Customer Shop").await;
    add_domain(&app, &customer.key, "shop.customer.example").await;
    let ask = json!({"subject": "DMARC reports missing", "body": "Nothing since Monday."});
    let (status, ticket) = call(
        &app,
        Method::POST,
        "/support/tickets",
        &customer.key,
        Some(ask),
    )
    .await;
    assert_eq!(status, 201, "{ticket}");
    let ticket_id = ticket["id"].as_str().unwrap().to_owned();

    // A customer without an authenticator, or not on the list, gets no staff session.
    let (status, answer, _) = staff_code_step(&app, "it@customer.example").await;
    assert_eq!(
        (status, &answer["code"]),
        (StatusCode::FORBIDDEN, &json!("staff_only"))
    );
    // Each credential opens its own routes only.
    assert_eq!(staff_get(&app, "/domains", &token).await.0, 401);
    let (status, _) = call(&app, Method::GET, "/staff/tickets", &customer.key, None).await;
    assert_eq!(status, 401);
    assert_eq!(
        staff_get(&app, "/staff/tickets", &desk_session).await.0,
        401
    );

    // The queue across organizations, then the ticket.
    let (status, queue) = staff_get(&app, "/staff/tickets?status=open", &token).await;
    assert_eq!(status, 200, "{queue}");
    let listed = queue["data"].as_array().unwrap();
    let mine = listed
        .iter()
        .find(|t| t["id"] == ticket_id.as_str())
        .expect("queued");
    assert_eq!(mine["organization_name"], "Customer Shop");
    let path = format!(
        "/staff/organizations/{}/tickets/{ticket_id}",
        customer.org_id
    );
    let (status, read) = staff_get(&app, &path, &token).await;
    assert_eq!(status, 200);
    assert_eq!(read["messages"][0]["body"], "Nothing since Monday.");
    assert_eq!(
        staff_get(&app, "/staff/tickets?status=lost", &token)
            .await
            .0,
        400
    );

    // A reply with a screenshot, uploaded under the organization's support prefix.
    let form_request = json!({"file_name": "dns.png", "mime_type": "image/png"});
    let (status, form) = post(
        &app,
        &format!("{path}/presigned-url"),
        Some(&token),
        form_request,
    )
    .await;
    assert_eq!(status, 200, "{form}");
    let mut multipart = reqwest::multipart::Form::new();
    for (name, value) in form["fields"].as_object().unwrap() {
        multipart = multipart.text(name.clone(), value.as_str().unwrap().to_owned());
    }
    let png = reqwest::multipart::Part::bytes(vec![0x89, b'P', b'N', b'G']).file_name("dns.png");
    let upload = app
        .http
        .post(form["url"].as_str().unwrap())
        .multipart(multipart.part("file", png));
    assert!(upload.send().await.unwrap().status().is_success());
    let reply = json!({"body": "Your rua tag points elsewhere.", "attachments": [form["key"]]});
    let (status, message) = post(&app, &format!("{path}/reply"), Some(&token), reply).await;
    assert_eq!(status, 201, "{message}");
    assert_eq!(message["author_type"], "SERVICE_STAFF");
    assert_eq!(
        get(&app, "/support/unread-count", &customer.key).await["count"],
        1
    );
    let seen = get(
        &app,
        &format!("/support/tickets/{ticket_id}"),
        &customer.key,
    )
    .await;
    assert_eq!(seen["messages"][1]["attachments"][0], form["key"]);

    // Support heard of the ticket by mail, and the customer of the reply.
    let mut heard = (false, false);
    for _ in 0..200 {
        let mails = app.mails();
        heard = (
            mails.iter().any(|m| {
                m.contains("To: help@staff.mailward.example") && m.contains("Nothing since Monday.")
            }),
            mails.iter().any(|m| {
                m.contains("To: it@customer.example")
                    && m.contains("Your rua tag points elsewhere.")
            }),
        );
        if heard == (true, true) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(heard, (true, true), "support's and the customer's mail");

    // Found by a member's address, a watched domain and part of the name.
    for q in [
        "it@customer.example",
        "shop.customer.example",
        "customer sh",
    ] {
        let (status, found) = staff_get(&app, &format!("/staff/organizations?q={q}"), &token).await;
        assert_eq!(status, 200);
        let ids: Vec<&Value> = found["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| &o["id"])
            .collect();
        assert_eq!(ids, vec![&json!(customer.org_id)], "{q}: {found}");
    }

    // Suspended: reads go on, changes are refused with the reason.
    let org_path = format!("/staff/organizations/{}", customer.org_id);
    let (status, _) = post(
        &app,
        &format!("{org_path}/suspend"),
        Some(&token),
        json!({"reason": ""}),
    )
    .await;
    assert_eq!(status, 400);
    let why = json!({"reason": "chargeback under review"});
    let (status, org) = post(&app, &format!("{org_path}/suspend"), Some(&token), why).await;
    assert_eq!(status, 200, "{org}");
    assert_eq!(org["suspension"]["by"], STAFF);
    assert_eq!(
        org["is_active"], true,
        "the customer's own switch is untouched"
    );
    let add = json!({"url": "second.customer.example"});
    let (status, refused) = call(
        &app,
        Method::POST,
        "/domains",
        &customer.key,
        Some(add.clone()),
    )
    .await;
    assert_eq!(
        (status, &refused["code"]),
        (StatusCode::FORBIDDEN, &json!("organization_suspended"))
    );
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("chargeback under review")
    );
    assert_eq!(
        get(&app, "/domains", &customer.key).await["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // Lifted: changes work again.
    let (status, org) = post(
        &app,
        &format!("{org_path}/unsuspend"),
        Some(&token),
        json!({}),
    )
    .await;
    assert_eq!((status, &org["suspension"]), (StatusCode::OK, &Value::Null));
    let (status, _) = call(&app, Method::POST, "/domains", &customer.key, Some(add)).await;
    assert_eq!(status, 201);

    // Every staff action is on the organization's record, as SERVICE_STAFF.
    let log = get(
        &app,
        "/activity-log?actor_type=SERVICE_STAFF&per_page=100",
        &customer.key,
    )
    .await;
    let mut actions: Vec<&str> = log["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    actions.sort_unstable();
    assert_eq!(
        actions,
        [
            "organization.suspended",
            "organization.suspension_lifted",
            "support.replied"
        ],
        "{log}"
    );

    // Staff start the deletion: the customer's credentials stop at once, the purge follows.
    let delete = format!("{org_path}/delete");
    let (status, err) = post(&app, &delete, Some(&token), json!({"reason": " "})).await;
    assert_eq!(
        (status, err["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("reason"))
    );
    let (status, _) = call(
        &app,
        Method::POST,
        &delete,
        &customer.key,
        Some(json!({"reason": "x"})),
    )
    .await;
    assert_eq!(
        status, 401,
        "a customer credential never opens a staff route"
    );
    let why = json!({"reason": "the customer asked by phone"});
    let (status, _) = post(&app, &delete, Some(&token), why.clone()).await;
    assert_eq!(status, 202);
    assert_eq!(post(&app, &delete, Some(&token), why).await.0, 202);
    let (status, _) = call(&app, Method::GET, "/domains", &customer.key, None).await;
    assert_eq!(status, 401);
    let mut gone = false;
    for _ in 0..600 {
        let (_, found) = staff_get(&app, "/staff/organizations?q=Customer%20Shop", &token).await;
        if found["data"].as_array().is_some_and(Vec::is_empty) {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(gone, "the organization was purged");
    let unknown = format!("/staff/organizations/{}/delete", uuid::Uuid::new_v4());
    let (status, _) = post(&app, &unknown, Some(&token), json!({"reason": "x"})).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn staff_curate_a_sources_instructions_and_only_approval_publishes_them() {
    let app = TestApp::start_with(|s| s.staff_emails = vec![STAFF.to_owned()]).await;
    let (token, _) = staff_desk(&app).await;
    let customer = app.sign_up("it@curation.example", "Curation Shop").await;
    let sources = get(&app, "/sources", &customer.key).await;
    let source = &sources.as_array().unwrap()[0];
    let id = source["id"].as_str().unwrap().to_owned();
    let before = get(&app, &format!("/sources/{id}"), &customer.key).await;
    assert_eq!(before["instructions_curation"], Value::Null);

    let proposal = json!({
        "kind": "dkim",
        "steps": ["Open Settings > Domains", "Publish the two CNAME records below"],
        "dns_records": [{"type": "CNAME", "name": "s1._domainkey", "value": "s1.dkim.vendor.example"}],
        "provenance": {"doc_url": "https://vendor.example/docs/dkim", "doc_title": "Set up DKIM",
            "doc_discovered": "vendor docs index", "model": "reviewer-model", "confidence": 0.82,
            "critic_notes": "selector names checked", "generated_at": "2026-11-20T10:00:00Z"}
    });
    let path = format!("/staff/sources/{id}");
    let mut bad = proposal.clone();
    bad["kind"] = json!("bimi");
    assert_eq!(
        post(&app, &format!("{path}/proposals"), Some(&token), bad)
            .await
            .0,
        400
    );
    let (status, _) = call(
        &app,
        Method::POST,
        &format!("{path}/proposals"),
        &customer.key,
        Some(proposal.clone()),
    )
    .await;
    assert_eq!(status, 401, "customers never curate");
    let (status, pending) = post(&app, &format!("{path}/proposals"), Some(&token), proposal).await;
    assert_eq!(status, 200, "{pending}");
    assert_eq!(
        pending["instructions_curation"]["dkim"]["status"],
        "PENDING"
    );
    assert_eq!(
        pending["instructions_curation"]["dkim"]["provenance"]["confidence"],
        0.82
    );
    // Pending: customers see the instructions in force and no curation.
    let still = get(&app, &format!("/sources/{id}"), &customer.key).await;
    assert_eq!(still["dkim_instructions"], before["dkim_instructions"]);
    assert_eq!(still["instructions_curation"], Value::Null);

    app.clock.advance(time::Duration::hours(1));
    let (status, approved) = post(
        &app,
        &format!("{path}/curation/dkim/approve"),
        Some(&token),
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{approved}");
    assert_eq!(
        approved["instructions_curation"]["dkim"]["status"],
        "APPROVED"
    );
    assert_eq!(
        approved["instructions_curation"]["dkim"]["reviewed_by"],
        STAFF
    );
    let published = get(&app, &format!("/sources/{id}"), &customer.key).await;
    assert_eq!(
        published["dkim_instructions"]["dns_records"][0]["value"],
        "s1.dkim.vendor.example"
    );
    assert_ne!(published["updated_at"], before["updated_at"]);
    assert_eq!(published["instructions_curation"], Value::Null);
    // Nothing left to review.
    let (status, _) = post(
        &app,
        &format!("{path}/curation/dkim/reject"),
        Some(&token),
        json!({}),
    )
    .await;
    assert_eq!(status, 409);
}
