//! API keys: created and listed by signed-in administrators; rotated and deleted with immediate
//! effect.

use mailward_api_tests::TestApp;
use reqwest::Method;
use serde_json::{Value, json};

#[tokio::test]
async fn an_admin_creates_lists_rotates_and_deletes_keys() {
    let app = TestApp::start().await;
    let s = app.sign_up("admin@example.com", "Keys Org").await;
    let token = app.session_token(&s.email, &s.org_id, false).await;
    let dismiss = format!("/organizations/{}/onboarding/dismiss", s.org_id);

    let res = app
        .with_session(Method::POST, "/api-keys", &token)
        .json(&json!({"name": "CI", "access": "read_only"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let created: Value = res.json().await.unwrap();
    let ci_key = created["key"].as_str().unwrap().to_owned();
    let ci_id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["access"], "read_only");
    assert_eq!(
        created["last_four"].as_str().unwrap(),
        &ci_key[ci_key.len() - 4..]
    );

    let res = app
        .with_session(Method::GET, "/api-keys?per_page=1", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let list: Value = res.json().await.unwrap();
    assert_eq!(list["page_info"]["total_count"], 2);
    assert_eq!(list["page_info"]["has_more"], true);
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
    assert!(
        list["data"][0].get("key").is_none(),
        "listing never shows keys"
    );

    // A read-only key reads but cannot rotate.
    assert_eq!(
        app.with_key(Method::POST, &dismiss, &ci_key)
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let res = app
        .with_key(Method::POST, &format!("/api-keys/{ci_id}/rotate"), &ci_key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);

    // Rotation: the old key answers 401 at once, the new one works.
    let res = app
        .with_key(
            Method::POST,
            &format!("/api-keys/{}/rotate", s.key_id),
            &s.key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let rotated: Value = res.json().await.unwrap();
    let new_key = rotated["key"].as_str().unwrap().to_owned();
    assert_ne!(new_key, s.key);
    assert_eq!(rotated["id"].as_str().unwrap(), s.key_id);
    assert!(rotated["rotated_at"].is_string());
    let res = app
        .with_key(Method::POST, &dismiss, &s.key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    assert!(
        res.json::<Value>().await.unwrap()["message"]
            .as_str()
            .unwrap()
            .contains("rotated")
    );
    assert_eq!(
        app.with_key(Method::POST, &dismiss, &new_key)
            .send()
            .await
            .unwrap()
            .status(),
        200
    );

    // Deletion: the key answers 401 at once.
    let res = app
        .with_session(Method::DELETE, &format!("/api-keys/{ci_id}"), &token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    assert_eq!(
        app.with_key(Method::POST, &dismiss, &ci_key)
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
    let res = app
        .with_session(Method::DELETE, &format!("/api-keys/{ci_id}"), &token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn api_keys_cannot_mint_keys_and_bad_bodies_are_named() {
    let app = TestApp::start().await;
    let s = app.sign_up("k@example.com", "Mint Org").await;
    let res = app
        .with_key(Method::POST, "/api-keys", &s.key)
        .json(&json!({"name": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let res = app
        .with_key(Method::GET, "/api-keys", &s.key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);

    let token = app.session_token(&s.email, &s.org_id, false).await;
    for (body, param) in [
        (json!({"name": ""}), "name"),
        (json!({"name": "x".repeat(101)}), "name"),
        (json!({"name": "ok", "access": "root"}), "access"),
        (json!({}), "name"),
    ] {
        let res = app
            .with_session(Method::POST, "/api-keys", &token)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "{body}");
        assert_eq!(res.json::<Value>().await.unwrap()["param"], param, "{body}");
    }
    let res = app
        .with_session(Method::GET, "/api-keys?per_page=500", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    assert_eq!(res.json::<Value>().await.unwrap()["param"], "per_page");
    let res = app
        .with_session(Method::GET, "/api-keys?page=abc", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    assert_eq!(res.json::<Value>().await.unwrap()["param"], "page");
    let res = app
        .with_session(Method::POST, "/api-keys/not-a-uuid/rotate", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    assert_eq!(res.json::<Value>().await.unwrap()["param"], "id");
}

#[tokio::test]
async fn another_organizations_key_is_invisible() {
    let app = TestApp::start().await;
    let a = app.sign_up("a@example.com", "Org A").await;
    let b = app.sign_up("b@example.com", "Org B").await;
    let res = app
        .with_key(
            Method::POST,
            &format!("/api-keys/{}/rotate", b.key_id),
            &a.key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    let res = app
        .with_key(Method::DELETE, &format!("/api-keys/{}", b.key_id), &a.key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    // B's key still works.
    let res = app
        .with_key(
            Method::POST,
            &format!("/organizations/{}/onboarding/dismiss", b.org_id),
            &b.key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}
