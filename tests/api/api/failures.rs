//! A failing backing store surfaces as a 5xx carrying a request id, never a panic, and the
//! service keeps serving.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use mailward_api_tests::faulty_store::FaultyStore;
use mailward_domain::store::StoreError;
use mailward_domain::{Clock, SystemClock};
use mailward_http::{AppState, Config};
use mailward_local::{Database, EmbeddedQueue, EmbeddedStore, FileMailer};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tower::ServiceExt as _;

#[tokio::test]
async fn a_store_outage_is_a_503_with_a_request_id_and_the_service_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let db = Database::in_memory().unwrap();
    // Every call fails while `broken` is set.
    let broken = Arc::new(AtomicBool::new(false));
    let flag = broken.clone();
    let store = Arc::new(FaultyStore::new(
        Arc::new(EmbeddedStore::new(db.clone(), clock.clone())),
        Box::new(move |_| {
            if flag.load(Ordering::SeqCst) {
                Err(StoreError::Unavailable("injected outage".into()))
            } else {
                Ok(())
            }
        }),
    ));
    let state = AppState::new(
        store,
        Arc::new(EmbeddedQueue::new(db, clock.clone(), 5)),
        Arc::new(FileMailer::new(
            dir.path().join("outbox"),
            "t@example.com".into(),
            clock.clone(),
        )),
        clock,
        Arc::new(
            mailward_dns::HickoryResolver::with_servers(vec!["127.0.0.1:9".parse().unwrap()])
                .unwrap(),
        ),
        Config::new("http://test", b"0123456789abcdef0123456789abcdef".to_vec()),
    );
    let router = mailward_local_stack::router(state);
    let request = || {
        Request::post("/signup")
            .header("content-type", "application/json")
            .body(Body::from(
                r#"{"email":"z@example.com","organization_name":"Zed Org"}"#,
            ))
            .unwrap()
    };

    broken.store(true, Ordering::SeqCst);
    let res = router.clone().oneshot(request()).await.unwrap();
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    let request_id = res.headers()["x-request-id"].to_str().unwrap().to_owned();
    let body: Value = serde_json::from_slice(
        &axum::body::to_bytes(res.into_body(), 1 << 20)
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(body["code"], "service_unavailable");
    assert_eq!(body["details"]["request_id"], request_id);
    assert!(
        !body["message"].as_str().unwrap().contains("injected"),
        "internal causes are not sent"
    );

    // Requests that need no store still answer (rate limiting fails open).
    let res = router
        .clone()
        .oneshot(Request::get("/health-check").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);

    broken.store(false, Ordering::SeqCst);
    let res = router.oneshot(request()).await.unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
}
