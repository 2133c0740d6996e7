//! Support over HTTP: upload forms and the local stack's policy enforcement, tickets with
//! attachments, support replies and the unread count, and who sees which tickets.

use crate::admin::{group, member};
use crate::common::{call, call_as, get, quiet_app};
use mailward_api_tests::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Asks for an upload form; its JSON (200 asserted).
async fn form(app: &TestApp, key: &str, file_name: &str, mime: &str) -> Value {
    let (status, body) = call(
        app,
        Method::POST,
        "/support/presigned-url",
        key,
        Some(json!({"file_name": file_name, "mime_type": mime})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body
}

/// The signed POST policy of an S3 upload form: the key, the type and 1 byte to `max_bytes`.
fn s3_form_carries_its_conditions(form: &Value) {
    use base64::Engine as _;
    let policy = form["fields"]["policy"].as_str().expect("a policy field");
    let policy: Value = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(policy)
            .unwrap(),
    )
    .unwrap();
    let conditions = policy["conditions"].as_array().unwrap();
    assert!(
        conditions.contains(&json!({"key": form["key"]})),
        "{policy}"
    );
    assert!(
        conditions.contains(&json!({"Content-Type": "application/pdf"})),
        "{policy}"
    );
    assert!(
        conditions.contains(&json!(["content-length-range", 1, form["max_bytes"]])),
        "{policy}"
    );
    assert!(form["fields"]["x-amz-signature"].is_string());
}

/// Posts the form with `bytes` as the file, after letting the test change fields.
async fn upload(
    app: &TestApp,
    form: &Value,
    bytes: Vec<u8>,
    change: impl FnOnce(&mut serde_json::Map<String, Value>),
) -> (StatusCode, Value) {
    let mut fields = form["fields"].as_object().unwrap().clone();
    change(&mut fields);
    let mut multipart = reqwest::multipart::Form::new();
    for (name, value) in fields {
        multipart = multipart.text(name, value.as_str().unwrap().to_owned());
    }
    multipart = multipart.part(
        "file",
        reqwest::multipart::Part::bytes(bytes).file_name("upload.bin"),
    );
    let res = app
        .http
        .post(form["url"].as_str().unwrap())
        .multipart(multipart)
        .send()
        .await
        .unwrap();
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn upload_forms_enforce_type_size_key_and_expiry() {
    let app = quiet_app().await;
    let s = app.sign_up("help@support.example", "Support Co").await;
    for (body, param) in [
        (
            json!({"file_name": "", "mime_type": "image/png"}),
            "file_name",
        ),
        (
            json!({"file_name": "x".repeat(256), "mime_type": "image/png"}),
            "file_name",
        ),
        (
            json!({"file_name": "../etc/passwd", "mime_type": "image/png"}),
            "file_name",
        ),
        (
            json!({"file_name": "page.html", "mime_type": "text/html"}),
            "mime_type",
        ),
        (json!({"file_name": "a.png"}), "mime_type"),
    ] {
        let (status, err) = call(
            &app,
            Method::POST,
            "/support/presigned-url",
            &s.key,
            Some(body),
        )
        .await;
        assert_eq!(
            (status, err["param"].as_str()),
            (StatusCode::BAD_REQUEST, Some(param)),
            "{err}"
        );
    }
    let long_name = format!("{}.pdf", "n".repeat(251));
    let f = form(&app, &s.key, &long_name, "application/pdf").await;
    assert_eq!(f["method"], "POST");
    assert_eq!(f["max_bytes"], 10 * 1024 * 1024);
    assert!(
        f["key"]
            .as_str()
            .unwrap()
            .starts_with(&format!("support/{}/", s.org_id))
    );

    // Exactly 10 MB passes; one byte more, an empty file, or changed fields do not.
    let f = form(&app, &s.key, "big scan.pdf", "application/pdf").await;
    if mailward_api_tests::backend_is_aws() {
        // moto's S3 accepts any POST (it checks neither the policy nor the signature): on
        // S3 the signed policy is what refuses, so the form must carry the conditions.
        s3_form_carries_its_conditions(&f);
        let (status, err) = upload(&app, &f, vec![1; 10 * 1024 * 1024], |_| {}).await;
        assert_eq!(status, 204, "{err}");
        return;
    }
    let (status, err) = upload(&app, &f, vec![1; 10 * 1024 * 1024 + 1], |_| {}).await;
    assert_eq!(
        (status, err["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("EntityTooLarge"))
    );
    let (status, _) = upload(&app, &f, Vec::new(), |_| {}).await;
    assert_eq!(status, 400);
    let (status, _) = upload(&app, &f, vec![1; 100], |m| {
        m.insert("Content-Type".into(), json!("text/html"));
    })
    .await;
    assert_eq!(status, 403);
    let (status, _) = upload(&app, &f, vec![1; 100], |m| {
        m.insert(
            "key".into(),
            json!(format!("support/{}/other.pdf", s.org_id)),
        );
    })
    .await;
    assert_eq!(status, 403);
    let (status, _) = upload(&app, &f, vec![1; 100], |m| {
        m.insert("policy".into(), json!("e30"));
    })
    .await;
    assert_eq!(status, 403);
    let (status, err) = upload(&app, &f, vec![1; 10 * 1024 * 1024], |_| {}).await;
    assert_eq!(status, 204, "{err}");
    let stored = app
        .stack
        .state
        .objects
        .as_ref()
        .unwrap()
        .head(f["key"].as_str().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.size, stored.content_type.as_deref()),
        (10 * 1024 * 1024, Some("application/pdf"))
    );

    // A form expires after 15 minutes.
    let late = form(&app, &s.key, "late.png", "image/png").await;
    app.clock.advance(time::Duration::minutes(16));
    let (status, _) = upload(&app, &late, vec![1; 10], |_| {}).await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn tickets_carry_attachments_replies_and_unread_counts() {
    let app = quiet_app().await;
    let s = app.sign_up("help@tickets.example", "Tickets Co").await;
    let other = app
        .sign_up("help@other-tickets.example", "Other Tickets")
        .await;
    let f = form(&app, &s.key, "screenshot.png", "image/png").await;
    let (status, _) = upload(&app, &f, b"\x89PNG fake but small".to_vec(), |_| {}).await;
    assert_eq!(status, 204);
    let theirs = form(&app, &other.key, "theirs.png", "image/png").await;
    upload(&app, &theirs, vec![1; 10], |_| {}).await;

    for (body, param) in [
        (json!({"subject": "", "body": "x"}), "subject"),
        (json!({"subject": "Help", "body": "   "}), "body"),
        (
            json!({"subject": "Help", "body": "x", "attachments": [theirs["key"]]}),
            "attachments",
        ),
        (
            json!({"subject": "Help", "body": "x", "attachments": [format!("support/{}/never-uploaded.png", s.org_id)]}),
            "attachments",
        ),
        (
            json!({"subject": "Help", "body": "x", "attachments": vec![f["key"].clone(); 6]}),
            "attachments",
        ),
    ] {
        let (status, err) = call(&app, Method::POST, "/support/tickets", &s.key, Some(body)).await;
        assert_eq!(
            (status, err["param"].as_str()),
            (StatusCode::BAD_REQUEST, Some(param)),
            "{err}"
        );
    }
    let (status, ticket) = call(
        &app,
        Method::POST,
        "/support/tickets",
        &s.key,
        Some(json!({
            "subject": "DMARC reports missing",
            "body": "No reports since Monday; screenshot attached.",
            "attachments": [f["key"]],
        })),
    )
    .await;
    assert_eq!(status, 201, "{ticket}");
    assert_eq!(ticket["status"], "open");
    assert_eq!(ticket["messages"][0]["attachments"], json!([f["key"]]));
    assert_eq!(ticket["messages"][0]["author_type"], "API_KEY");
    let id = ticket["id"].as_str().unwrap().to_owned();
    assert_eq!(get(&app, "/support/unread-count", &s.key).await["count"], 0);

    // Support answers (staff tooling) and closes it: unread until someone reads it.
    // (A second later: messages of the same millisecond have no defined order.)
    app.clock.advance(time::Duration::seconds(1));
    let ticket_id = id.parse().unwrap();
    mailward_services::support::staff_reply(
        &app.stack.state,
        s.org_id.parse().unwrap(),
        ticket_id,
        "We are on it.",
        &[],
        true,
    )
    .await
    .unwrap();
    assert_eq!(get(&app, "/support/unread-count", &s.key).await["count"], 1);
    let list = get(&app, "/support/tickets", &s.key).await;
    assert_eq!(list["data"][0]["unread_count"], 1);
    assert_eq!(list["data"][0]["status"], "closed");
    assert!(list["data"][0].get("messages").is_none());
    assert_eq!(
        get(&app, "/support/tickets?status=open", &s.key).await["page_info"]["total_count"],
        0
    );
    let read = get(&app, &format!("/support/tickets/{id}"), &s.key).await;
    assert_eq!(read["messages"].as_array().unwrap().len(), 2);
    assert_eq!(read["messages"][1]["author_type"], "SERVICE_STAFF");
    assert_eq!(read["messages"][1]["read_at"], Value::Null);
    assert_eq!(
        get(&app, "/support/unread-count", &s.key).await["count"],
        1,
        "reading does not mark read"
    );

    // A viewer may mark it read but not reply.
    let viewer = member(&app, &s, "viewer@tickets.example", &["viewer"], &[]).await;
    let (status, count) = call_as(
        &app,
        Method::POST,
        &format!("/support/tickets/{id}/read"),
        &viewer,
        None,
    )
    .await;
    assert_eq!((status, count["count"].as_u64()), (StatusCode::OK, Some(0)));
    let (status, _) = call_as(
        &app,
        Method::POST,
        &format!("/support/tickets/{id}/replies"),
        &viewer,
        Some(json!({"body": "me too"})),
    )
    .await;
    assert_eq!(status, 403);
    // A reply opens the closed ticket again.
    let (status, reply) = call(
        &app,
        Method::POST,
        &format!("/support/tickets/{id}/replies"),
        &s.key,
        Some(json!({"body": "Thanks!"})),
    )
    .await;
    assert_eq!(status, 201, "{reply}");
    assert_eq!(
        get(&app, &format!("/support/tickets/{id}"), &s.key).await["status"],
        "open"
    );

    // Another organization sees none of it.
    for path in [
        format!("/support/tickets/{id}"),
        format!("/support/tickets/{id}/read"),
    ] {
        let method = if path.ends_with("/read") {
            Method::POST
        } else {
            Method::GET
        };
        assert_eq!(call(&app, method, &path, &other.key, None).await.0, 404);
    }
    assert_eq!(
        get(&app, "/support/tickets", &other.key).await["page_info"]["total_count"],
        0
    );
    let (status, _) = call(
        &app,
        Method::POST,
        &format!("/support/tickets/{id}/replies"),
        &other.key,
        Some(json!({"body": "hi"})),
    )
    .await;
    assert_eq!(status, 404);

    // A member limited to groups sees only the tickets they opened.
    let g = group(&app, &s.key, "Customers").await;
    let limited = member(
        &app,
        &s,
        "limited@tickets.example",
        &["editor"],
        &[g["id"].as_str().unwrap()],
    )
    .await;
    assert_eq!(
        call_as(
            &app,
            Method::GET,
            &format!("/support/tickets/{id}"),
            &limited,
            None
        )
        .await
        .0,
        404
    );
    let (status, own) = call_as(
        &app,
        Method::POST,
        "/support/tickets",
        &limited,
        Some(json!({"subject": "Mine", "body": "Question"})),
    )
    .await;
    assert_eq!(status, 201);
    let (_, visible) = call_as(&app, Method::GET, "/support/tickets", &limited, None).await;
    assert_eq!(visible["data"].as_array().unwrap().len(), 1);
    assert_eq!(visible["data"][0]["id"], own["id"]);
    assert_eq!(
        get(&app, "/support/tickets", &s.key).await["page_info"]["total_count"],
        2
    );
}
