//! Organizations: update rules, MFA rule, onboarding dismissal, creation and deletion.

use mailward_api_tests::TestApp;
use mailward_domain::store::{Query, query_all};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

#[tokio::test]
async fn updates_validate_fields_and_record_an_event() {
    let app = TestApp::start_with(|s| s.publish_outbox = false).await;
    let s = app.sign_up("o@example.com", "Update Org").await;
    let path = format!("/organizations/{}", s.org_id);
    let res = app
        .with_key(Method::POST, &path, &s.key)
        .json(&json!({"name": "Renamed Org", "website": "https://example.com", "settings": {"email_notifications": {"tasks_digests": false}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let org: Value = res.json().await.unwrap();
    assert_eq!(org["name"], "Renamed Org");
    assert_eq!(org["website"], "https://example.com/");
    assert_eq!(
        org["settings"]["email_notifications"]["tasks_digests"],
        false
    );
    assert_eq!(
        org["settings"]["email_notifications"]["domain_failed"],
        true
    );

    // The change and its event committed together.
    let events = crate::common::outbox_events(&app).await;
    let updated: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "organization.updated")
        .collect();
    assert_eq!(updated.len(), 1);
    assert_eq!(updated[0]["previous_attributes"]["name"], "Update Org");
    assert_eq!(updated[0]["object"]["name"], "Renamed Org");

    for (body, param) in [
        (json!({"name": "x"}), "name"),
        (json!({"website": "javascript:alert(1)"}), "website"),
        (json!({"logo_url": "not a url"}), "logo_url"),
        (json!({"email": "nope"}), "email"),
        (json!({"phone_number": "call me"}), "phone_number"),
        (json!({"is_active": "yes"}), "is_active"),
        (
            json!({"settings": {"email_notifications": {"domain_failed": 1}}}),
            "settings.email_notifications.domain_failed",
        ),
        (
            json!({"settings": {"email_notifications": {"bogus": true}}}),
            "settings.email_notifications.bogus",
        ),
        (json!({"colour": "red"}), "colour"),
    ] {
        let res = app
            .with_key(Method::POST, &path, &s.key)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "{body}");
        assert_eq!(res.json::<Value>().await.unwrap()["param"], param, "{body}");
    }
    // null clears a nullable field.
    let res = app
        .with_key(Method::POST, &path, &s.key)
        .json(&json!({"website": null}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.json::<Value>().await.unwrap()["website"], Value::Null);
}

#[tokio::test]
async fn require_mfa_needs_an_admin_session_with_mfa() {
    let app = TestApp::start().await;
    let s = app.sign_up("mfa@example.com", "Mfa Org").await;
    let path = format!("/organizations/{}", s.org_id);
    let body = json!({"require_mfa": true});
    let res = app
        .with_key(Method::POST, &path, &s.key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert_eq!(
        res.json::<Value>().await.unwrap()["code"],
        "mfa_confirmation_required"
    );
    let no_mfa = app.session_token(&s.email, &s.org_id, false).await;
    let res = app
        .with_session(Method::POST, &path, &no_mfa)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert_eq!(
        res.json::<Value>().await.unwrap()["code"],
        "mfa_confirmation_required"
    );
    let mfa = app.session_token(&s.email, &s.org_id, true).await;
    let res = app
        .with_session(Method::POST, &path, &mfa)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.unwrap()["require_mfa"], true);
}

#[tokio::test]
async fn dismissing_onboarding_is_idempotent() {
    let app = TestApp::start().await;
    let s = app.sign_up("d@example.com", "Dismiss Org").await;
    let path = format!("/organizations/{}/onboarding/dismiss", s.org_id);
    let first: Value = app
        .with_key(Method::POST, &path, &s.key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    app.clock.advance(time::Duration::seconds(30));
    let second: Value = app
        .with_key(Method::POST, &path, &s.key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(first["onboarding_dismissed_at"].is_string());
    assert_eq!(
        first["onboarding_dismissed_at"],
        second["onboarding_dismissed_at"]
    );
}

#[tokio::test]
async fn another_organization_is_not_found() {
    let app = TestApp::start().await;
    let a = app.sign_up("x1@example.com", "Org X1").await;
    let b = app.sign_up("x2@example.com", "Org X2").await;
    for (method, path) in [
        (Method::POST, format!("/organizations/{}", b.org_id)),
        (Method::DELETE, format!("/organizations/{}", b.org_id)),
        (
            Method::POST,
            format!("/organizations/{}/onboarding/dismiss", b.org_id),
        ),
    ] {
        let res = app
            .with_key(method.clone(), &path, &a.key)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 404, "{method} {path}");
    }
}

#[tokio::test]
async fn an_api_key_creates_an_organization_and_gets_a_key_for_it() {
    let app = TestApp::start().await;
    let s = app.sign_up("msp@example.com", "Msp Org").await;
    let res = app
        .with_key(Method::POST, "/organizations", &s.key)
        .json(&json!({"name": "Client One", "invite_email": "boss@client.example"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    assert_eq!(res.json::<Value>().await.unwrap()["param"], "invite_email");
    let res = app
        .with_key(Method::POST, "/organizations", &s.key)
        .json(&json!({"name": "Client One", "invite_email": null, "pricing_type": "msp"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let created: Value = res.json().await.unwrap();
    assert_eq!(created["name"], "Client One");
    assert_eq!(created["pricing_type"], "msp");
    let new_org = created["id"].as_str().unwrap();
    let new_key = created["api_key"]["key"].as_str().unwrap();
    let res = app
        .with_key(
            Method::POST,
            &format!("/organizations/{new_org}/onboarding/dismiss"),
            new_key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    // The calling organization's admin can sign in to the new one.
    let token = app.session_token(&s.email, new_org, false).await;
    let res = app
        .with_session(
            Method::POST,
            &format!("/organizations/{new_org}/onboarding/dismiss"),
            &token,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn deleting_an_organization_revokes_its_credentials_at_once_and_then_purges_it() {
    let app = TestApp::start().await;
    let s = app.sign_up("del@example.com", "Delete Org").await;
    let keep = app.sign_up("keep@example.com", "Keep Org").await;
    let token = app.session_token(&s.email, &s.org_id, false).await;
    let res = app
        .with_key(
            Method::DELETE,
            &format!("/organizations/{}", s.org_id),
            &s.key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 202);
    let dismiss = format!("/organizations/{}/onboarding/dismiss", s.org_id);
    assert_eq!(
        app.with_key(Method::POST, &dismiss, &s.key)
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
    assert_eq!(
        app.with_session(Method::POST, &dismiss, &token)
            .send()
            .await
            .unwrap()
            .status(),
        401
    );

    // The background worker purges every item of the organization.
    let store = app.stack.state.store.clone();
    let mut remaining = usize::MAX;
    for _ in 0..100 {
        remaining = query_all(
            store.as_ref(),
            Query::partition(format!("ORG#{}", s.org_id)),
        )
        .await
        .unwrap()
        .len();
        if remaining == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(remaining, 0, "organization items purged");
    let lookup = mailward_store::api_keys::find_by_key(store.as_ref(), &s.key)
        .await
        .unwrap();
    assert!(lookup.is_none(), "key lookup purged");
    // Other organizations are untouched.
    let res = app
        .with_key(
            Method::POST,
            &format!("/organizations/{}/onboarding/dismiss", keep.org_id),
            &keep.key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

/// Tenant trust, finding 8: an organization creates at most 100 organizations through API keys;
/// the next is 409 `organization_limit_reached`, while a signed-in administrator still creates.
#[tokio::test]
async fn api_keys_create_a_bounded_number_of_organizations() {
    let app = TestApp::start_with(|s| s.publish_outbox = false).await;
    let s = app.sign_up("parent@example.com", "Parent Org").await;
    for n in 0..mailward_services::organizations::MAX_CHILDREN_BY_KEY {
        let res = app
            .with_key(Method::POST, "/organizations", &s.key)
            .json(&json!({"name": format!("Child {n}")}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 201, "child {n}");
    }
    let res = app
        .with_key(Method::POST, "/organizations", &s.key)
        .json(&json!({"name": "One too many"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 409);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["code"], "organization_limit_reached", "{body}");
    let session = app
        .session_token("parent@example.com", &s.org_id, false)
        .await;
    let res = app
        .with_session(Method::POST, "/organizations", &session)
        .json(&json!({"name": "Made by a person"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
}
