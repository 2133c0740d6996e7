//! Organization administration over HTTP: groups, members, invitations, usage, and who may do
//! what (roles, read-only keys, group limits).

use crate::common::{add_domain, call, call_as, get, outbox_events, quiet_app, strings};
use mailward_api_tests::{SignedUp, TestApp};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Creates a group; its JSON.
pub async fn group(app: &TestApp, key: &str, name: &str) -> Value {
    let (status, body) = call(
        app,
        Method::POST,
        "/groups",
        key,
        Some(json!({"name": name})),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    body
}

/// Signs up `email` elsewhere (so the account exists), adds it to `org` with `roles` and
/// `groups` (a stranger to `org`, so pending until it accepts) and accepts the emailed
/// invitation as the person does; returns a session token for it in `org`.
pub async fn member(
    app: &TestApp,
    org: &SignedUp,
    email: &str,
    roles: &[&str],
    groups: &[&str],
) -> String {
    app.sign_up(email, &format!("Home of {email}")).await;
    let (status, body) = call(
        app,
        Method::POST,
        "/members",
        &org.key,
        Some(json!({"email": email, "roles": roles, "groups": groups})),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["status"], "pending_acceptance", "{body}");
    accept(app, email).await;
    app.session_token(email, &org.org_id, false).await
}

/// Accepts the newest invitation emailed to `email` (`POST /invitations/accept`).
pub async fn accept(app: &TestApp, email: &str) {
    let res = app
        .request(Method::POST, "/invitations/accept")
        .json(&json!({"token": token_for(app, email)}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
}

/// The invitation token in the newest email to `to`.
pub fn token_for(app: &TestApp, to: &str) -> String {
    let mail = app
        .mails()
        .into_iter()
        .rev()
        .find(|m| m.contains(&format!("To: {to}\r\n")) && m.contains("mwinv_"))
        .expect("an invitation mail to the address");
    let start = mail.find("mwinv_").unwrap();
    mail[start..]
        .split(|c: char| c.is_whitespace() || c == '"')
        .next()
        .unwrap()
        .to_owned()
}

fn events_of(events: &[Value], prefix: &str) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"].as_str().unwrap().starts_with(prefix))
        .cloned()
        .collect()
}

#[tokio::test]
async fn groups_hold_domains_and_deleting_one_ungroups_them() {
    let app = quiet_app().await;
    let s = app.sign_up("owner@groups.example", "Groups Co").await;
    let other = app.sign_up("owner@rival.example", "Rival").await;
    let beta = group(&app, &s.key, "beta customer").await;
    app.clock.advance(time::Duration::seconds(1));
    let alpha = group(&app, &s.key, "Alpha customer").await;
    let foreign = group(&app, &other.key, "Not yours").await;
    assert_eq!(beta["external_customer_id"], Value::Null);

    // Sorting: newest first by default; by name case-insensitively.
    let list = get(&app, "/groups", &s.key).await;
    let names = strings(&list["data"], "name");
    assert_eq!(names, ["Alpha customer", "beta customer"]);
    let list = get(&app, "/groups?sort=name&order=desc", &s.key).await;
    assert_eq!(list["data"][0]["name"], "beta customer");
    assert_eq!(list["page_info"]["total_count"], 2);
    for (query, param) in [
        ("sort=size", "sort"),
        ("order=up", "order"),
        ("expand[]=owners", "expand[]"),
    ] {
        let (status, body) =
            call(&app, Method::GET, &format!("/groups?{query}"), &s.key, None).await;
        assert_eq!(
            (status, body["param"].as_str()),
            (StatusCode::BAD_REQUEST, Some(param)),
            "{query}"
        );
    }
    for bad in [
        json!({"name": ""}),
        json!({"name": "x".repeat(129)}),
        json!({"name": "a\u{7}b"}),
    ] {
        let (status, body) = call(&app, Method::POST, "/groups", &s.key, Some(bad)).await;
        assert_eq!(
            (status, body["param"].as_str()),
            (StatusCode::BAD_REQUEST, Some("name"))
        );
    }

    // Domains join groups by id; another organization's group is refused by name.
    let alpha_id = alpha["id"].as_str().unwrap();
    let (status, body) = call(
        &app,
        Method::POST,
        "/domains",
        &s.key,
        Some(json!({"url": "alpha.example", "group_id": foreign["id"]})),
    )
    .await;
    assert_eq!(
        (status, body["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("group_id"))
    );
    let (status, d1) = call(
        &app,
        Method::POST,
        "/domains",
        &s.key,
        Some(json!({"url": "alpha.example", "group_id": alpha_id})),
    )
    .await;
    assert_eq!(status, 201);
    let d2 = add_domain(&app, &s.key, "loose.example").await;
    let (status, _) = call(
        &app,
        Method::POST,
        &format!("/domains/{}", d2["id"].as_str().unwrap()),
        &s.key,
        Some(json!({"group_id": alpha_id})),
    )
    .await;
    assert_eq!(status, 200);
    let expanded = get(
        &app,
        &format!("/domains/{}?expand[]=group", d1["id"].as_str().unwrap()),
        &s.key,
    )
    .await;
    assert_eq!(expanded["group"]["name"], "Alpha customer");
    let filtered = get(&app, &format!("/domains?group_id={alpha_id}"), &s.key).await;
    assert_eq!(filtered["page_info"]["total_count"], 2);
    let with_domains = get(
        &app,
        &format!("/groups/{alpha_id}?expand[]=domains"),
        &s.key,
    )
    .await;
    assert_eq!(with_domains["domains"]["count"], 2);
    assert_eq!(with_domains["domains"]["average_score"], 0.0);
    assert_eq!(with_domains["domains"]["last_14_days_volume"], 0);
    let plain = get(&app, &format!("/groups/{alpha_id}"), &s.key).await;
    assert!(
        plain.get("domains").is_none(),
        "domains only with the expansion"
    );

    // Another organization's group is not found; anonymous reads need credentials.
    let (status, _) = call(
        &app,
        Method::GET,
        &format!("/groups/{}", foreign["id"].as_str().unwrap()),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 404);
    let anonymous = app
        .request(Method::GET, &format!("/groups/{alpha_id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);

    // Update: fields, nulls, and previous attributes in the event.
    let (status, updated) = call(&app, Method::POST, &format!("/groups/{alpha_id}"), &s.key,
        Some(json!({"name": "Alpha Ltd", "external_customer_id": "CUST-9", "backfill_tickets": true}))).await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!(updated["external_customer_id"], "CUST-9");
    let (_, updated) = call(
        &app,
        Method::POST,
        &format!("/groups/{alpha_id}"),
        &s.key,
        Some(json!({"external_customer_id": null})),
    )
    .await;
    assert_eq!(updated["external_customer_id"], Value::Null);
    assert_eq!(updated["name"], "Alpha Ltd");

    // Delete: the domains stay, ungrouped.
    let (status, _) = call(
        &app,
        Method::DELETE,
        &format!("/groups/{alpha_id}"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 204);
    let (status, _) = call(
        &app,
        Method::GET,
        &format!("/groups/{alpha_id}"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 404);
    let all = get(&app, "/domains", &s.key).await;
    assert_eq!(all["page_info"]["total_count"], 2);
    assert!(
        all["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["group_id"].is_null())
    );

    let group_events = events_of(&outbox_events(&app).await, "group.");
    // The outbox is sharded and the test clock stands still: compare without order.
    let mut mine: Vec<&str> = group_events
        .iter()
        .filter(|e| e["object"]["id"] == alpha["id"])
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    mine.sort_unstable();
    assert_eq!(
        mine,
        [
            "group.created",
            "group.deleted",
            "group.updated",
            "group.updated"
        ]
    );
    assert!(
        group_events.iter().any(|e| e["type"] == "group.updated"
            && e["previous_attributes"]["name"] == "Alpha customer")
    );
}

#[tokio::test]
async fn members_are_added_changed_and_removed_and_the_last_admin_stays() {
    let app = quiet_app().await;
    let s = app.sign_up("alice@members.example", "Members Co").await;
    let other = app.sign_up("zed@elsewhere.example", "Elsewhere").await;
    let g = group(&app, &s.key, "Team").await;
    let foreign_group = group(&app, &other.key, "Theirs").await;
    app.sign_up("bob@members.example", "Bob's own").await;
    // Members list oldest first: Bob joins a second later.
    app.clock.advance(time::Duration::seconds(1));

    // No account: 400 naming email. Bad roles and foreign groups: 400 naming them.
    let (status, body) = call(
        &app,
        Method::POST,
        "/members",
        &s.key,
        Some(json!({"email": "nobody@members.example", "roles": ["viewer"]})),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str(), body["param"].as_str()),
        (
            StatusCode::BAD_REQUEST,
            Some("parameter_invalid_or_missing"),
            Some("email")
        )
    );
    let (status, body) = call(
        &app,
        Method::POST,
        "/members",
        &s.key,
        Some(json!({"email": "bob@members.example", "roles": ["owner"]})),
    )
    .await;
    assert_eq!(
        (status, body["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("roles[0]")),
        "{body}"
    );
    let (status, body) = call(
        &app,
        Method::POST,
        "/members",
        &s.key,
        Some(json!({"email": "bob@members.example", "roles": []})),
    )
    .await;
    assert_eq!(
        (status, body["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("roles"))
    );
    let (status, body) = call(&app, Method::POST, "/members", &s.key,
        Some(json!({"email": "bob@members.example", "roles": ["viewer"], "groups": [foreign_group["id"]]}))).await;
    assert_eq!(
        (status, body["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("groups"))
    );

    // Tenant trust, finding 7: Bob shares no organization with Alice and members.example is
    // no verified domain of hers, so he is added pending his acceptance: 201 with the status,
    // an emailed invitation, and nothing granted until he accepts.
    let (status, bob) = call(
        &app,
        Method::POST,
        "/members",
        &s.key,
        Some(json!({"email": "Bob@Members.example", "roles": ["viewer"]})),
    )
    .await;
    assert_eq!(status, 201, "{bob}");
    assert_eq!(bob["email"], "bob@members.example");
    assert_eq!(bob["roles"], json!(["viewer"]));
    assert_eq!(bob["auth_provider"], "email_code");
    assert_eq!(bob["status"], "pending_acceptance");
    let bob_id = bob["id"].as_str().unwrap().to_owned();
    let listed = get(&app, "/members", &s.key).await;
    assert_eq!(strings(&listed, "email"), ["alice@members.example"]);
    let invitations = get(&app, "/invitations", &s.key).await;
    assert_eq!(
        invitations[0]["email"], "bob@members.example",
        "{invitations}"
    );
    let (status, twice) = call(
        &app,
        Method::POST,
        "/members",
        &s.key,
        Some(json!({"email": "bob@members.example", "roles": ["viewer"]})),
    )
    .await;
    assert_eq!(
        (status, twice["code"].as_str()),
        (StatusCode::CONFLICT, Some("invitation_exists"))
    );
    accept(&app, "bob@members.example").await;

    // A member now: 200 with roles and groups applied.
    let (status, again) = call(
        &app,
        Method::POST,
        "/members",
        &s.key,
        Some(json!({"email": "bob@members.example", "roles": ["editor"], "groups": [g["id"]]})),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(again["roles"], json!(["editor"]));
    assert_eq!(again["groups"], json!([g["id"]]));

    let list = get(&app, "/members", &s.key).await;
    let emails = strings(&list, "email");
    assert_eq!(emails, ["alice@members.example", "bob@members.example"]);
    let alice_id = list[0]["id"].as_str().unwrap().to_owned();

    // The last administrator is never demoted or removed.
    let (status, body) = call(
        &app,
        Method::POST,
        &format!("/members/{alice_id}"),
        &s.key,
        Some(json!({"roles": ["viewer"]})),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::CONFLICT, Some("last_admin"))
    );
    let (status, body) = call(
        &app,
        Method::DELETE,
        &format!("/members/{alice_id}"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::CONFLICT, Some("last_admin"))
    );
    // With a second administrator, the first may step down.
    let (status, _) = call(
        &app,
        Method::POST,
        &format!("/members/{bob_id}"),
        &s.key,
        Some(json!({"roles": ["admin"], "groups": []})),
    )
    .await;
    assert_eq!(status, 200);
    let (status, demoted) = call(
        &app,
        Method::POST,
        &format!("/members/{alice_id}"),
        &s.key,
        Some(json!({"roles": ["editor"]})),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(demoted["roles"], json!(["editor"]));
    let (status, body) = call(
        &app,
        Method::DELETE,
        &format!("/members/{bob_id}"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::CONFLICT, Some("last_admin"))
    );

    // Another organization's member id is not found.
    let theirs = get(&app, "/members", &other.key).await;
    let zed = theirs[0]["id"].as_str().unwrap();
    let (status, _) = call(
        &app,
        Method::POST,
        &format!("/members/{zed}"),
        &s.key,
        Some(json!({"roles": ["viewer"]})),
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = call(
        &app,
        Method::DELETE,
        &format!("/members/{zed}"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 404);

    // MFA statuses reflect sign-ins seen; removal ends the member's sessions at once.
    let bob_token = app
        .session_token("bob@members.example", &s.org_id, true)
        .await;
    let (status, _) = call_as(&app, Method::GET, "/domains", &bob_token, None).await;
    assert_eq!(status, 200);
    let statuses = get(&app, "/members/mfa/statuses", &s.key).await;
    let of = |email: &str| {
        statuses
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["email"] == email)
            .unwrap()
            .clone()
    };
    // A second factor was seen on Bob's session; neither has an authenticator enrolled
    // (identity.rs covers enrolment).
    assert!(of("bob@members.example")["mfa_seen_at"].is_string());
    assert_eq!(of("bob@members.example")["mfa_enabled"], false);
    assert!(of("alice@members.example")["mfa_seen_at"].is_null());
    assert_eq!(of("alice@members.example")["mfa_enabled"], false);
    assert_eq!(of("alice@members.example")["blocked_by_requirement"], false);
    let (status, _) = call(
        &app,
        Method::POST,
        &format!("/members/{alice_id}"),
        &s.key,
        Some(json!({"roles": ["admin"]})),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = call(
        &app,
        Method::DELETE,
        &format!("/members/{bob_id}"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 204);
    let (status, _) = call_as(&app, Method::GET, "/domains", &bob_token, None).await;
    assert_eq!(status, 401);

    let events = events_of(&outbox_events(&app).await, "member.");
    let mut kinds: Vec<&str> = events
        .iter()
        .filter(|e| e["object"]["id"] == bob_id.as_str())
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    kinds.sort_unstable();
    assert_eq!(
        kinds,
        [
            "member.added",
            "member.removed",
            "member.updated",
            "member.updated"
        ]
    );
    assert!(
        events.iter().any(|e| e["type"] == "member.updated"
            && e["previous_attributes"]["roles"] == json!(["viewer"]))
    );
}

#[tokio::test]
async fn invitations_are_emailed_accepted_once_and_refused_clearly() {
    let app = quiet_app().await;
    let s = app.sign_up("admin@invite.example", "Invite Co").await;
    let g = group(&app, &s.key, "Clients").await;
    app.sign_up("has.account@invite.example", "Own org").await;

    // ttl bounds, roles, existing accounts, foreign domains with a key.
    for ttl in [86_399, 2_592_001] {
        let (status, body) = call(
            &app,
            Method::POST,
            "/invitations",
            &s.key,
            Some(json!({"email": "new@invite.example", "roles": ["viewer"], "ttl_sec": ttl})),
        )
        .await;
        assert_eq!(
            (status, body["param"].as_str()),
            (StatusCode::BAD_REQUEST, Some("ttl_sec"))
        );
    }
    let (status, body) = call(
        &app,
        Method::POST,
        "/invitations",
        &s.key,
        Some(json!({"email": "not an address", "roles": ["viewer"]})),
    )
    .await;
    assert_eq!(
        (status, body["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("email"))
    );
    let (status, body) = call(
        &app,
        Method::POST,
        "/invitations",
        &s.key,
        Some(json!({"email": "has.account@invite.example", "roles": ["viewer"]})),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::CONFLICT, Some("invitation_invitee_exists"))
    );
    let (status, body) = call(
        &app,
        Method::POST,
        "/invitations",
        &s.key,
        Some(json!({"email": "someone@outside.example", "roles": ["viewer"]})),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("invitation_domain_not_allowed"))
    );
    // A signed-in administrator is exempt from the domain rule.
    let admin = app
        .session_token("admin@invite.example", &s.org_id, false)
        .await;
    let (status, outside) = call_as(
        &app,
        Method::POST,
        "/invitations",
        &admin,
        Some(json!({"email": "someone@outside.example", "roles": ["viewer"]})),
    )
    .await;
    assert_eq!(status, 201, "{outside}");

    // Created, emailed, listed; a second one to the same address is refused.
    let (status, inv) = call(&app, Method::POST, "/invitations", &s.key,
        Some(json!({"email": "new@invite.example", "roles": ["editor"], "groups": [g["id"]], "ttl_sec": 86_400}))).await;
    assert_eq!(status, 201, "{inv}");
    assert!(inv["sent_at"].is_string());
    let inv_id = inv["id"].as_str().unwrap().to_owned();
    let first_token = token_for(&app, "new@invite.example");
    let (status, body) = call(
        &app,
        Method::POST,
        "/invitations",
        &s.key,
        Some(json!({"email": "new@invite.example", "roles": ["viewer"]})),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::CONFLICT, Some("invitation_exists"))
    );
    let list = get(&app, "/invitations", &s.key).await;
    assert_eq!(list.as_array().unwrap().len(), 2);

    // Resend: a new token; the earlier one no longer works.
    let (status, _) = call(
        &app,
        Method::POST,
        &format!("/invitations/{inv_id}/resend"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 204);
    let token = token_for(&app, "new@invite.example");
    assert_ne!(token, first_token);
    let accept = |token: String| {
        let app = &app;
        async move {
            let res = app
                .request(Method::POST, "/invitations/accept")
                .json(&json!({"token": token}))
                .send()
                .await
                .unwrap();
            let status = res.status();
            (status, res.json::<Value>().await.unwrap())
        }
    };
    let (status, body) = accept(first_token).await;
    assert_eq!(
        (status, body["code"].as_str(), body["param"].as_str()),
        (
            StatusCode::BAD_REQUEST,
            Some("invitation_token_invalid"),
            Some("token")
        )
    );

    // Accepted once: an account with the invited roles and groups, which can sign in.
    let (status, joined) = accept(token.clone()).await;
    assert_eq!(status, 201, "{joined}");
    assert_eq!(joined["organization_id"], s.org_id.as_str());
    assert_eq!(joined["member"]["roles"], json!(["editor"]));
    assert_eq!(joined["member"]["groups"], json!([g["id"]]));
    let (status, _) = accept(token).await;
    assert_eq!(status, 400, "a token works once");
    let session = app
        .session_token("new@invite.example", &s.org_id, false)
        .await;
    let (status, _) = call_as(&app, Method::GET, "/domains", &session, None).await;
    assert_eq!(status, 200);
    let list = get(&app, "/invitations", &s.key).await;
    assert_eq!(
        list.as_array().unwrap().len(),
        1,
        "accepted invitations are no longer pending"
    );

    // Revoked: gone from the list; its token refused.
    let outside_token = token_for(&app, "someone@outside.example");
    let (status, _) = call(
        &app,
        Method::DELETE,
        &format!("/invitations/{}", outside["id"].as_str().unwrap()),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 204);
    let (status, _) = accept(outside_token).await;
    assert_eq!(status, 400);
    let (status, _) = call(
        &app,
        Method::DELETE,
        &format!("/invitations/{}", outside["id"].as_str().unwrap()),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 404);

    // Another organization cannot see, resend or revoke these invitations.
    let stranger = app.sign_up("admin@stranger.example", "Stranger").await;
    let (status, mine) = call_as(
        &app,
        Method::POST,
        "/invitations",
        &admin,
        Some(json!({"email": "kept@invite.example", "roles": ["viewer"]})),
    )
    .await;
    assert_eq!(status, 201);
    let mine_id = mine["id"].as_str().unwrap();
    for (method, path) in [
        (Method::POST, format!("/invitations/{mine_id}/resend")),
        (Method::DELETE, format!("/invitations/{mine_id}")),
    ] {
        assert_eq!(call(&app, method, &path, &stranger.key, None).await.0, 404);
    }
    assert_eq!(get(&app, "/invitations", &stranger.key).await, json!([]));
    assert!(
        strings(&get(&app, "/invitations", &s.key).await, "email")
            .contains(&"kept@invite.example".to_owned())
    );

    // Expired: refused after its ttl.
    let (status, short) = call_as(
        &app,
        Method::POST,
        "/invitations",
        &admin,
        Some(json!({"email": "late@invite.example", "roles": ["viewer"], "ttl_sec": 86_400})),
    )
    .await;
    assert_eq!(status, 201);
    let late_token = token_for(&app, "late@invite.example");
    app.clock.advance(time::Duration::seconds(86_401));
    let (status, _) = accept(late_token).await;
    assert_eq!(status, 400);
    let (status, _) = call(
        &app,
        Method::POST,
        &format!("/invitations/{}/resend", short["id"].as_str().unwrap()),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 404, "an expired invitation is no longer pending");
    let (status, body) = accept("mwinv_forged".into()).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invitation_token_invalid"))
    );
    let (status, _) = accept("".into()).await;
    assert_eq!(status, 400);

    // The mailer failing: upstream_failure, and the invitation listed without sent_at.
    app.set_mail_failing(true).await;
    let (status, body) = call_as(
        &app,
        Method::POST,
        "/invitations",
        &admin,
        Some(json!({"email": "unlucky@invite.example", "roles": ["viewer"]})),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("upstream_failure"))
    );
    let list = get(&app, "/invitations", &s.key).await;
    let unsent = list
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["email"] == "unlucky@invite.example")
        .unwrap()
        .clone();
    assert_eq!(unsent["sent_at"], Value::Null);
    let (status, body) = call(
        &app,
        Method::POST,
        &format!("/invitations/{}/resend", unsent["id"].as_str().unwrap()),
        &s.key,
        None,
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("upstream_failure"))
    );
    assert!(body["message"].as_str().unwrap().contains("still stands"));
    app.set_mail_failing(false).await;
    let (status, _) = call(
        &app,
        Method::POST,
        &format!("/invitations/{}/resend", unsent["id"].as_str().unwrap()),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 204);

    let events = outbox_events(&app).await;
    let invitation_events = events_of(&events, "invitation.");
    let count = |kind: &str| {
        invitation_events
            .iter()
            .filter(|e| e["type"] == kind)
            .count()
    };
    assert_eq!(count("invitation.created"), 5);
    assert_eq!(count("invitation.revoked"), 1);
    assert!(
        events_of(&events, "member.added")
            .iter()
            .any(|e| e["object"]["email"] == "new@invite.example")
    );
}

#[tokio::test]
async fn a_new_organization_invites_its_administrator() {
    let app = quiet_app().await;
    let s = app.sign_up("founder@msp.example", "MSP").await;
    app.sign_up("existing@client.example", "Client own").await;
    let founder = app
        .session_token("founder@msp.example", &s.org_id, false)
        .await;

    let (status, created) = call_as(
        &app,
        Method::POST,
        "/organizations",
        &founder,
        Some(json!({"name": "Client One", "invite_email": "boss@client.example"})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let org_id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["invitation_failure"], Value::Null);
    assert_eq!(created["parent_organization_id"], s.org_id.as_str());
    let in_new = app
        .session_token("founder@msp.example", &org_id, false)
        .await;
    let (_, pending) = call_as(&app, Method::GET, "/invitations", &in_new, None).await;
    assert_eq!(pending[0]["email"], "boss@client.example");
    assert_eq!(pending[0]["roles"], json!(["admin"]));
    let token = token_for(&app, "boss@client.example");
    let res = app
        .request(Method::POST, "/invitations/accept")
        .json(&json!({"token": token}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);

    // Tenant trust, finding 7: an existing account that shares no organization with the
    // founder is invited, not added: it joins by accepting.
    let (status, created) = call_as(
        &app,
        Method::POST,
        "/organizations",
        &founder,
        Some(json!({"name": "Client Two", "invite_email": "existing@client.example"})),
    )
    .await;
    assert_eq!(status, 201);
    let two = created["id"].as_str().unwrap().to_owned();
    let in_two = app.session_token("founder@msp.example", &two, false).await;
    let (_, members) = call_as(&app, Method::GET, "/members", &in_two, None).await;
    assert_eq!(members.as_array().unwrap().len(), 1, "{members}");
    let (_, pending) = call_as(&app, Method::GET, "/invitations", &in_two, None).await;
    assert_eq!(pending[0]["email"], "existing@client.example");
    accept(&app, "existing@client.example").await;
    let (_, members) = call_as(&app, Method::GET, "/members", &in_two, None).await;
    assert_eq!(members.as_array().unwrap().len(), 2);
    // One who shares an organization with the founder (the boss joined Client One) is made
    // an administrator directly.
    let (status, created) = call_as(
        &app,
        Method::POST,
        "/organizations",
        &founder,
        Some(json!({"name": "Client Two B", "invite_email": "boss@client.example"})),
    )
    .await;
    assert_eq!(status, 201);
    let two_b = created["id"].as_str().unwrap().to_owned();
    let boss = app
        .session_token("boss@client.example", &two_b, false)
        .await;
    let (_, members) = call_as(&app, Method::GET, "/members", &boss, None).await;
    assert_eq!(members.as_array().unwrap().len(), 2);

    // The mailer failing: the organization exists and says so.
    app.set_mail_failing(true).await;
    let (status, created) = call_as(
        &app,
        Method::POST,
        "/organizations",
        &founder,
        Some(json!({"name": "Client Three", "invite_email": "who@client3.example"})),
    )
    .await;
    app.set_mail_failing(false).await;
    assert_eq!(status, 201);
    assert_eq!(created["invitation_failure"]["code"], "upstream_failure");
    let (status, body) = call_as(
        &app,
        Method::POST,
        "/organizations",
        &founder,
        Some(json!({"name": "Client Four", "invite_email": "nope"})),
    )
    .await;
    assert_eq!(
        (status, body["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invite_email"))
    );

    // Usage counts the organizations created from this one.
    let usage = get(&app, "/usage?expand[]=organizations", &s.key).await;
    let names = strings(&usage["organizations"], "name");
    assert_eq!(
        names,
        ["Client One", "Client Three", "Client Two", "Client Two B"]
    );
}

#[tokio::test]
async fn usage_counts_domains_by_state_and_line_item() {
    let app = quiet_app().await;
    let s = app.sign_up("billing@usage.example", "Usage Co").await;
    let d1 = add_domain(&app, &s.key, "one.example").await;
    add_domain(&app, &s.key, "two.example").await;
    let (status, _) = call(
        &app,
        Method::POST,
        &format!("/domains/{}", d1["id"].as_str().unwrap()),
        &s.key,
        Some(json!({"is_parked": true})),
    )
    .await;
    assert_eq!(status, 200);
    let (status, usage) = call(&app, Method::GET, "/usage", &s.key, None).await;
    assert_eq!(status, 200);
    assert_eq!(
        (
            usage["active_domains"].as_u64(),
            usage["inactive_domains"].as_u64(),
            usage["parked_domains"].as_u64()
        ),
        (Some(0), Some(1), Some(1))
    );
    assert!(usage.get("line_items").is_none() && usage.get("aligned_messages").is_none());
    let usage = get(
        &app,
        "/usage?expand[]=line_items&expand[]=domains&expand[]=aligned_messages",
        &s.key,
    )
    .await;
    assert_eq!(
        usage["line_items"],
        json!([{"code": "DOMAIN-INACTIVE", "quantity": 1}, {"code": "DOMAIN-PARKED", "quantity": 1}])
    );
    assert_eq!(usage["aligned_messages"], 0);
    let states: Vec<(&str, &str)> = usage["domains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["url"].as_str().unwrap(), d["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        states,
        [("one.example", "parked"), ("two.example", "inactive")]
    );
    let (status, body) = call(&app, Method::GET, "/usage?expand[]=invoices", &s.key, None).await;
    assert_eq!(
        (status, body["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("expand[]"))
    );
}

#[tokio::test]
async fn a_member_limited_to_groups_sees_and_changes_only_their_domains() {
    let app = quiet_app().await;
    let s = app.sign_up("admin@matrix.example", "Matrix").await;
    let mine = group(&app, &s.key, "Mine").await;
    let theirs = group(&app, &s.key, "Theirs").await;
    let mine_id = mine["id"].as_str().unwrap();
    let (_, d_mine) = call(
        &app,
        Method::POST,
        "/domains",
        &s.key,
        Some(json!({"url": "mine.example", "group_id": mine_id})),
    )
    .await;
    let (_, d_theirs) = call(
        &app,
        Method::POST,
        "/domains",
        &s.key,
        Some(json!({"url": "theirs.example", "group_id": theirs["id"]})),
    )
    .await;
    let d_loose = add_domain(&app, &s.key, "loose.example").await;
    let editor = member(&app, &s, "ed@matrix.example", &["editor"], &[mine_id]).await;
    let viewer = member(&app, &s, "vi@matrix.example", &["viewer"], &[mine_id]).await;
    let admin = app
        .session_token("admin@matrix.example", &s.org_id, false)
        .await;

    for token in [&editor, &viewer] {
        let (_, list) = call_as(&app, Method::GET, "/domains?expand[]=group", token, None).await;
        let urls = strings(&list["data"], "url");
        assert_eq!(urls, ["mine.example"]);
        assert_eq!(list["data"][0]["group"]["name"], "Mine");
        for hidden in [&d_theirs, &d_loose] {
            let path = format!("/domains/{}", hidden["id"].as_str().unwrap());
            assert_eq!(call_as(&app, Method::GET, &path, token, None).await.0, 404);
            assert_eq!(
                call_as(
                    &app,
                    Method::GET,
                    &format!("{path}/dns-records"),
                    token,
                    None
                )
                .await
                .0,
                404
            );
            assert_eq!(
                call_as(&app, Method::GET, &format!("{path}/plan"), token, None)
                    .await
                    .0,
                404
            );
        }
        let (_, groups) = call_as(&app, Method::GET, "/groups", token, None).await;
        assert_eq!(groups["page_info"]["total_count"], 1);
        assert_eq!(
            call_as(
                &app,
                Method::GET,
                &format!("/groups/{}", theirs["id"].as_str().unwrap()),
                token,
                None
            )
            .await
            .0,
            404
        );
        for org_wide in ["/members", "/usage", "/activity-log", "/invitations"] {
            assert_eq!(
                call_as(&app, Method::GET, org_wide, token, None).await.0,
                403,
                "{org_wide}"
            );
        }
        let (_, tasks) = call_as(
            &app,
            Method::GET,
            "/tasks?statuses=open,pending,done",
            token,
            None,
        )
        .await;
        assert!(
            tasks["data"]
                .as_array()
                .unwrap()
                .iter()
                .all(|t| t["domain_id"] == d_mine["id"])
        );
    }

    // The limited editor writes inside its group only.
    let mine_path = format!("/domains/{}", d_mine["id"].as_str().unwrap());
    assert_eq!(
        call_as(
            &app,
            Method::POST,
            &mine_path,
            &editor,
            Some(json!({"is_parked": true}))
        )
        .await
        .0,
        200
    );
    let theirs_path = format!("/domains/{}", d_theirs["id"].as_str().unwrap());
    assert_eq!(
        call_as(
            &app,
            Method::POST,
            &theirs_path,
            &editor,
            Some(json!({"is_parked": true}))
        )
        .await
        .0,
        404
    );
    assert_eq!(
        call_as(&app, Method::DELETE, &theirs_path, &editor, None)
            .await
            .0,
        404
    );
    let (status, body) = call_as(
        &app,
        Method::POST,
        "/domains",
        &editor,
        Some(json!({"url": "new.example"})),
    )
    .await;
    assert_eq!(
        (status, body["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("group_id"))
    );
    let (status, body) = call_as(
        &app,
        Method::POST,
        "/domains",
        &editor,
        Some(json!({"url": "new.example", "group_id": theirs["id"]})),
    )
    .await;
    assert_eq!(
        (status, body["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("group_id"))
    );
    assert_eq!(
        call_as(
            &app,
            Method::POST,
            "/domains",
            &editor,
            Some(json!({"url": "new.example", "group_id": mine_id}))
        )
        .await
        .0,
        201
    );
    let (status, body) = call_as(
        &app,
        Method::POST,
        &mine_path,
        &editor,
        Some(json!({"group_id": null})),
    )
    .await;
    assert_eq!(
        (status, body["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("group_id")),
        "cannot orphan a domain out of sight"
    );
    assert_eq!(
        call_as(
            &app,
            Method::POST,
            "/groups",
            &editor,
            Some(json!({"name": "More"}))
        )
        .await
        .0,
        403
    );
    // The viewer never writes, even inside its group.
    assert_eq!(
        call_as(
            &app,
            Method::POST,
            &mine_path,
            &viewer,
            Some(json!({"is_parked": false}))
        )
        .await
        .0,
        403
    );

    // The unlimited administrator sees everything; removing the group limit widens the view.
    let (_, all) = call_as(&app, Method::GET, "/domains", &admin, None).await;
    assert_eq!(all["page_info"]["total_count"], 4);
    let members = get(&app, "/members", &s.key).await;
    let ed_id = members
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["email"] == "ed@matrix.example")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // A group some member is limited to alone cannot be deleted until they move.
    let (status, body) = call(
        &app,
        Method::DELETE,
        &format!("/groups/{mine_id}"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::CONFLICT, Some("group_has_members"))
    );
    assert_eq!(
        call(
            &app,
            Method::POST,
            &format!("/members/{ed_id}"),
            &s.key,
            Some(json!({"groups": []}))
        )
        .await
        .0,
        200
    );
    let (_, widened) = call_as(&app, Method::GET, "/domains", &editor, None).await;
    assert_eq!(widened["page_info"]["total_count"], 4);
}

/// Every write route of the API that needs a writing credential, with a body to send.
fn write_routes() -> Vec<(&'static str, &'static str, Option<Value>)> {
    vec![
        ("POST", "/api-keys", Some(json!({"name": "x"}))),
        ("DELETE", "/api-keys/{id}", None),
        ("POST", "/api-keys/{id}/rotate", None),
        ("POST", "/domains", Some(json!({"url": "x.example"}))),
        ("POST", "/organizations/{id}/exports", None),
        (
            "POST",
            "/domains/bulk",
            Some(json!({"domains": [{"url": "y.example"}]})),
        ),
        ("POST", "/domains/{id}", Some(json!({"is_parked": true}))),
        ("DELETE", "/domains/{id}", None),
        ("POST", "/domains/{id}/verify", None),
        ("POST", "/domains/{id}/verify/dkim", None),
        ("POST", "/domains/{id}/verify/spf", None),
        ("POST", "/groups", Some(json!({"name": "g"}))),
        ("POST", "/groups/{id}", Some(json!({"name": "g"}))),
        ("DELETE", "/groups/{id}", None),
        (
            "POST",
            "/invitations",
            Some(json!({"email": "a@readonly.example", "roles": ["viewer"]})),
        ),
        ("DELETE", "/invitations/{id}", None),
        ("POST", "/invitations/{id}/resend", None),
        (
            "POST",
            "/members",
            Some(json!({"email": "a@readonly.example", "roles": ["viewer"]})),
        ),
        ("POST", "/members/{id}", Some(json!({"roles": ["admin"]}))),
        ("DELETE", "/members/{id}", None),
        ("POST", "/organizations", Some(json!({"name": "New org"}))),
        (
            "POST",
            "/organizations/{id}",
            Some(json!({"name": "Renamed"})),
        ),
        ("DELETE", "/organizations/{id}", None),
        ("POST", "/tasks/{id}", Some(json!({"status": "dismissed"}))),
        (
            "POST",
            "/domains/{id}/sources/{source_id}",
            Some(json!({"confirmation_status": "confirmed"})),
        ),
        (
            "POST",
            "/domains/{id}/sender-requirements",
            Some(json!({"provider": "gmail", "spam_rate_pct": 0.1})),
        ),
        (
            "POST",
            "/webhook-endpoints",
            Some(json!({"url": "https://hooks.example/x"})),
        ),
        (
            "POST",
            "/webhook-endpoints/{id}",
            Some(json!({"description": "d"})),
        ),
        ("DELETE", "/webhook-endpoints/{id}", None),
        ("POST", "/webhook-endpoints/{id}/rotate-secret", None),
        (
            "POST",
            "/support/tickets",
            Some(json!({"subject": "Help", "body": "Please"})),
        ),
        (
            "POST",
            "/support/tickets/{id}/replies",
            Some(json!({"body": "More"})),
        ),
        (
            "POST",
            "/support/presigned-url",
            Some(json!({"file_name": "a.png", "mime_type": "image/png"})),
        ),
        (
            "POST",
            "/prospecting-reports",
            Some(json!({"generated_for": "X", "domains": ["example.invalid"]})),
        ),
        ("DELETE", "/prospecting-reports/{id}", None),
        ("POST", "/domains/{id}/hosted-dmarc", None),
        ("POST", "/domains/{id}/mta-sts", None),
        (
            "PUT",
            "/domains/{id}/mta-sts",
            Some(json!({"mode": "enforce"})),
        ),
        ("DELETE", "/domains/{id}/mta-sts", None),
        ("POST", "/domains/{id}/mta-sts/retry", None),
        (
            "POST",
            "/domains/{id}/bimi/assets",
            Some(json!({"certificate_pem": "-----BEGIN CERTIFICATE-----"})),
        ),
        (
            "POST",
            "/dns-connections",
            Some(
                json!({"provider": "route53", "name": "DNS", "credentials": {"role_arn": "arn:aws:iam::123456789012:role/dns"}}),
            ),
        ),
        ("DELETE", "/dns-connections/{id}", None),
        (
            "POST",
            "/mailbox-connections",
            Some(
                json!({"name": "Reports", "provider": "imap", "host": "imap.example.com", "user": "dmarc@example.com", "auth": {"type": "password", "password": "x"}}),
            ),
        ),
        (
            "POST",
            "/mailbox-connections/{id}",
            Some(json!({"paused": true})),
        ),
        ("DELETE", "/mailbox-connections/{id}", None),
        ("POST", "/mailbox-connections/{id}/poll", None),
        (
            "POST",
            "/alert-rules",
            Some(
                json!({"name": "Rule", "condition": {"type": "dns_conflict"}, "destinations": [{"type": "email", "emails": ["ops@example.com"]}]}),
            ),
        ),
        (
            "POST",
            "/alert-rules/{id}",
            Some(json!({"name": "Renamed"})),
        ),
        ("DELETE", "/alert-rules/{id}", None),
        ("POST", "/alert-rules/{id}/test", None),
        (
            "POST",
            "/report-settings",
            Some(json!({"cadence": "weekly", "recipients": ["ops@example.com"]})),
        ),
        (
            "POST",
            "/report-settings/{id}",
            Some(json!({"enabled": false})),
        ),
        ("DELETE", "/report-settings/{id}", None),
        ("POST", "/report-settings/{id}/send", None),
        (
            "POST",
            "/dns-connections/{id}/publish",
            Some(json!({"domain_id": "00000000-0000-0000-0000-000000000000"})),
        ),
        (
            "POST",
            "/domains/{id}/dkim-keys",
            Some(json!({"selector": "s1", "record_type": "CNAME", "value": "s1.example.net"})),
        ),
        (
            "POST",
            "/domains/{id}/dkim-keys/{key_id}",
            Some(json!({"selector": "s1", "record_type": "CNAME", "value": "s1.example.net"})),
        ),
        ("DELETE", "/domains/{id}/dkim-keys/{key_id}", None),
        (
            "POST",
            "/sso",
            Some(json!({"issuer": "https://idp.example", "client_id": "c", "client_secret": "s"})),
        ),
        ("POST", "/sso/verify", None),
        ("DELETE", "/sso", None),
        ("POST", "/scim-tokens", Some(json!({"name": "idp"}))),
        ("DELETE", "/scim-tokens/{id}", None),
        (
            "POST",
            "/billing/checkout",
            Some(json!({"plan": "it_teams"})),
        ),
        ("POST", "/billing/portal", None),
        (
            "POST",
            "/sources",
            Some(json!({"name": "Relay", "sending_domains": ["relay.example"]})),
        ),
        ("POST", "/sources/{id}", Some(json!({"name": "Relay"}))),
        ("DELETE", "/sources/{id}", None),
    ]
}

/// Writes any member may make (documented on each route), and public routes.
fn open_writes() -> Vec<(&'static str, &'static str)> {
    vec![
        ("POST", "/domains/{id}/preview"),
        ("POST", "/organizations/{id}/onboarding/dismiss"),
        ("POST", "/tools/dns-lookup"),
        // Analysis only: nothing is stored.
        ("POST", "/tools/header-analyze"),
        ("POST", "/prospecting-reports/preview"),
        // Public: RFC 8460's HTTPS delivery; the path names the domain as its report address
        // does (see report_trust.rs).
        ("POST", "/tlsrpt/{token}"),
        ("POST", "/signup"),
        ("POST", "/signup/verify"),
        ("POST", "/invitations/accept"),
        ("POST", "/support/tickets/{id}/read"),
        // Public: the signed link of a notification mail, not a credential.
        ("POST", "/notifications/unsubscribe"),
        // The authorization server: public sign-in steps and OAuth endpoints, and a person
        // revoking their own connection (API keys get 403 session_required; see mcp.rs).
        ("POST", "/oauth/register"),
        ("POST", "/oauth/authorize"),
        ("POST", "/oauth/token"),
        ("POST", "/oauth/revoke"),
        ("POST", "/oauth/session/start"),
        ("POST", "/oauth/session"),
        ("DELETE", "/oauth/connections/{id}"),
        // A person's own sessions and authenticator app (any role; API keys get 403
        // session_required; see identity.rs).
        ("DELETE", "/oauth/session"),
        ("DELETE", "/oauth/sessions/{id}"),
        ("POST", "/account/mfa/totp"),
        ("POST", "/account/mfa/totp/confirm"),
        ("POST", "/account/mfa/totp/disable"),
        ("POST", "/account/mfa/verify"),
        ("POST", "/account/mfa/recovery-codes"),
        // SCIM takes its own token only (sessions and API keys get 401; see scim.rs).
        ("POST", "/scim/v2/Users"),
        ("PUT", "/scim/v2/Users/{id}"),
        ("PATCH", "/scim/v2/Users/{id}"),
        ("DELETE", "/scim/v2/Users/{id}"),
        ("POST", "/scim/v2/Groups"),
        ("PUT", "/scim/v2/Groups/{id}"),
        ("PATCH", "/scim/v2/Groups/{id}"),
        ("DELETE", "/scim/v2/Groups/{id}"),
        // Stripe's webhook: its signature, not a credential (see billing.rs).
        ("POST", "/billing/stripe-webhook"),
        // The staff surface takes staff tokens only (customer credentials get 401; see
        // staff.rs); its sign-in takes the emailed code and the authenticator app.
        ("POST", "/staff/session"),
        ("POST", "/staff/sources/{id}/proposals"),
        ("POST", "/staff/sources/{id}/curation/{kind}/approve"),
        ("POST", "/staff/sources/{id}/curation/{kind}/reject"),
        ("POST", "/staff/organizations/{id}/delete"),
        ("POST", "/staff/candidates/{name}/promote"),
        ("POST", "/staff/candidates/{name}/reject"),
        ("POST", "/staff/organizations/{id}/suspend"),
        ("POST", "/staff/organizations/{id}/unsuspend"),
        (
            "POST",
            "/staff/organizations/{id}/tickets/{ticket_id}/reply",
        ),
        (
            "POST",
            "/staff/organizations/{id}/tickets/{ticket_id}/presigned-url",
        ),
        // MCP takes OAuth tokens only; its writing tools refuse viewers (see mcp.rs).
        ("POST", "/mcp"),
        ("POST", "/mcp/directory"),
        ("POST", "/mcp/public"),
    ]
}

/// The organization-wide writes among [`write_routes`]: the organization and its children, API
/// keys, webhook endpoints, DNS and mailbox connections, members, invitations, creating and deleting groups.
/// The rest act on a domain, a task, a group, a report or a ticket the caller can see.
fn organization_wide(method: &str, path: &str) -> bool {
    [
        "/api-keys",
        "/organizations",
        "/webhook-endpoints",
        "/members",
        "/invitations",
        "/sso",
        "/scim-tokens",
        "/billing/",
        "/sources",
        "/mailbox-connections",
    ]
    .iter()
    .any(|p| path.starts_with(p))
        || matches!(
            (method, path),
            ("POST", "/groups")
                | ("DELETE", "/groups/{id}")
                | ("POST", "/dns-connections")
                | ("DELETE", "/dns-connections/{id}")
        )
}

/// Every write route of the OpenAPI document is in [`write_routes`] or [`open_writes`], and
/// every route of those tables is documented.
fn all_writes_listed(doc: &Value) {
    let bodies = write_routes();
    let exempt = open_writes();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for method in ops.as_object().unwrap().keys() {
            let method = method.to_ascii_uppercase();
            if !matches!(method.as_str(), "POST" | "PUT" | "PATCH" | "DELETE") {
                continue;
            }
            let known = bodies.iter().any(|(m, p, _)| *m == method && p == path)
                || exempt.iter().any(|(m, p)| *m == method && p == path);
            assert!(
                known,
                "{method} {path} is a write route missing from this test"
            );
        }
    }
    for (method, path, _) in &bodies {
        let documented = doc["paths"][*path][method.to_ascii_lowercase()].is_object();
        assert!(documented, "{method} {path} is not in the OpenAPI document");
    }
}

/// A route path with its ids filled in (`/organizations/{id}`: the caller's own).
fn filled(path: &str, org_id: &str, id: uuid::Uuid) -> String {
    path.replace(
        "{id}",
        &if path.starts_with("/organizations/") {
            org_id.to_owned()
        } else {
            id.to_string()
        },
    )
    .replace("{source_id}", &uuid::Uuid::new_v4().to_string())
    .replace("{key_id}", &uuid::Uuid::new_v4().to_string())
}

/// Every write route of the API (read from the OpenAPI document, so a new route must join this
/// table) refuses viewers and read-only keys with 403 `forbidden`, before looking anything up.
#[tokio::test]
async fn viewers_and_read_only_keys_never_write() {
    let app = quiet_app().await;
    let s = app.sign_up("admin@readonly.example", "Read Only Co").await;
    let viewer = member(&app, &s, "viewer@readonly.example", &["viewer"], &[]).await;
    // Keys are created from an administrator's session.
    let admin = app
        .session_token("admin@readonly.example", &s.org_id, false)
        .await;
    let (status, key) = call_as(
        &app,
        Method::POST,
        "/api-keys",
        &admin,
        Some(json!({"name": "ro", "access": "read_only"})),
    )
    .await;
    assert_eq!(status, 201, "{key}");
    let read_only = key["key"].as_str().unwrap().to_owned();
    let id = uuid::Uuid::new_v4();
    let doc: Value = app
        .request(Method::GET, "/swagger.json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    all_writes_listed(&doc);
    for (method, path, body) in &write_routes() {
        let path = filled(path, &s.org_id, id);
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let (status, err) = call(&app, method.clone(), &path, &read_only, body.clone()).await;
        assert_eq!(
            (status, err["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("forbidden")),
            "read-only key: {method} {path}: {err}"
        );
        let (status, err) = call_as(&app, method.clone(), &path, &viewer, body.clone()).await;
        assert_eq!(
            (status, err["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("forbidden")),
            "viewer: {method} {path}: {err}"
        );
    }
}

/// A member limited to one customer's group is an administrator of that group only: every
/// organization-wide write (read from the OpenAPI document, so a new route must be classed) is
/// 403 `forbidden` for them, with a session or through the same operations MCP and the CLI call,
/// and the organization is unchanged.
#[tokio::test]
async fn a_group_limited_admin_gets_403_on_every_organization_wide_write() {
    let app = quiet_app().await;
    let s = app.sign_up("owner@msp.example", "MSP Co").await;
    let customer = group(&app, &s.key, "Customer A").await;
    let limited = member(
        &app,
        &s,
        "tech@msp.example",
        &["admin"],
        &[customer["id"].as_str().unwrap()],
    )
    .await;
    let doc: Value = app
        .request(Method::GET, "/swagger.json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    all_writes_listed(&doc);
    let id = uuid::Uuid::new_v4();
    let mut checked = 0;
    for (method, path, body) in write_routes() {
        if !organization_wide(method, path) {
            continue;
        }
        let path = filled(path, &s.org_id, id);
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let (status, err) = call_as(&app, method.clone(), &path, &limited, body.clone()).await;
        assert_eq!(
            (status, err["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("forbidden")),
            "group-limited admin: {method} {path}: {err}"
        );
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} organization-wide writes");
    // Nothing changed: the organization keeps its name, and holds only the signup key.
    // (An update changing nothing answers the organization as it is.)
    let (_, org) = call(
        &app,
        Method::POST,
        &format!("/organizations/{}", s.org_id),
        &s.key,
        Some(json!({})),
    )
    .await;
    assert_eq!(org["name"], "MSP Co", "{org}");
    let owner = app
        .session_token("owner@msp.example", &s.org_id, false)
        .await;
    let (_, keys) = call_as(&app, Method::GET, "/api-keys", &owner, None).await;
    assert_eq!(keys["data"].as_array().unwrap().len(), 1, "{keys}");
    // Within the group the same person still administers: a domain of the group is theirs.
    let (status, created) = call_as(
        &app,
        Method::POST,
        "/domains",
        &limited,
        Some(json!({"url": "customer-a.example", "group_id": customer["id"]})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
}

/// Tenant trust, finding 7 (its rate limit): adding members and inviting people count in one
/// `invite` bucket per caller, so existing addresses cannot be tried in bulk.
#[tokio::test]
async fn adding_and_inviting_people_count_in_the_invite_bucket() {
    let app = TestApp::start_with(|s| {
        s.publish_outbox = false;
        s.rate_limits.push((
            mailward_services::config::Scope::Invite,
            "3/3600".parse().unwrap(),
        ));
    })
    .await;
    let s = app.sign_up("boss@invite.example", "Invite Co").await;
    for n in 0..2 {
        let (status, body) = call(
            &app,
            Method::POST,
            "/members",
            &s.key,
            Some(json!({"email": format!("nobody{n}@invite.example"), "roles": ["viewer"]})),
        )
        .await;
        assert_eq!(status, 400, "{body}");
    }
    let (status, body) = call(
        &app,
        Method::POST,
        "/invitations",
        &s.key,
        Some(json!({"email": "new@invite.example", "roles": ["viewer"]})),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = call(
        &app,
        Method::POST,
        "/members",
        &s.key,
        Some(json!({"email": "another@invite.example", "roles": ["viewer"]})),
    )
    .await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["scope"], "invite", "{body}");
}

/// Tenant trust, finding 7: an existing account joins without its consent only when it
/// already shares an organization with the caller or its address is at a verified domain of
/// the organization (here: monitoring set up, the organization's report address seen in the
/// domain's DMARC record).
#[tokio::test]
async fn members_join_without_consent_only_from_a_shared_organization_or_a_verified_domain() {
    let (dns, app) =
        crate::common::app_on(vec![mailward_dns_fixture::Zone::new("verified.example")]).await;
    let s = app.sign_up("alice@home.example", "Home").await;
    let domain = add_domain(&app, &s.key, "verified.example").await;
    app.sign_up("carol@verified.example", "Carol's own").await;
    let add = |email: &'static str| {
        let key = s.key.clone();
        let app = &app;
        async move {
            call(
                app,
                Method::POST,
                "/members",
                &key,
                Some(json!({"email": email, "roles": ["editor"]})),
            )
            .await
        }
    };
    // Not verified yet: pending.
    let (status, carol) = add("carol@verified.example").await;
    assert_eq!(
        (status, &carol["status"]),
        (StatusCode::CREATED, &json!("pending_acceptance"))
    );
    let (_, invitations) = call(&app, Method::GET, "/invitations", &s.key, None).await;
    let id = invitations[0]["id"].as_str().unwrap().to_owned();
    let (status, _) = call(
        &app,
        Method::DELETE,
        &format!("/invitations/{id}"),
        &s.key,
        None,
    )
    .await;
    assert!(status.is_success(), "{status}");
    // The domain publishes the organization's report address: verified, so an address there
    // joins at once.
    let rua = domain["monitoring_email"].as_str().unwrap();
    dns.set_txt(
        "_dmarc.verified.example",
        &format!("v=DMARC1; p=none; rua=mailto:{rua}"),
    )
    .unwrap();
    crate::common::next_pass(&app).await;
    let (status, carol) = add("carol@verified.example").await;
    assert_eq!(
        (status, &carol["status"]),
        (StatusCode::CREATED, &json!("active")),
        "{carol}"
    );

    // Someone who shares an organization with the caller joins another of its organizations
    // at once: Carol, now a member here, added to a new organization Alice creates.
    let alice = app
        .session_token("alice@home.example", &s.org_id, false)
        .await;
    let (status, created) = call_as(
        &app,
        Method::POST,
        "/organizations",
        &alice,
        Some(json!({"name": "Second Home"})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let second = created["id"].as_str().unwrap();
    let in_second = app.session_token("alice@home.example", second, false).await;
    let (status, carol) = call_as(
        &app,
        Method::POST,
        "/members",
        &in_second,
        Some(json!({"email": "carol@verified.example", "roles": ["viewer"]})),
    )
    .await;
    assert_eq!(
        (status, &carol["status"]),
        (StatusCode::CREATED, &json!("active")),
        "{carol}"
    );
}
