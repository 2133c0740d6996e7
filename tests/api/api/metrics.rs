//! `GET /metrics` (an extension for the operator): the figures move with what the service does,
//! the page is accepted by the Prometheus project's own OpenMetrics parser, and it is protected
//! (a bearer token when configured, loopback only otherwise).

use crate::common::{add_domain, for_org, quiet_app};
use mailward_api_tests::{TestApp, venv_python};
use mailward_reports::Limits;
use reqwest::Method;
use serde_json::Value;

/// The page parsed by `tests/operations/check_metrics.py`: family name → {type, samples}.
async fn parsed(app: &TestApp, text: String) -> Value {
    let file = app.dir.path().join("metrics.txt");
    std::fs::write(&file, text).unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../operations/check_metrics.py"
    );
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(venv_python())
            .arg(script)
            .arg(&file)
            .output()
            .expect("run the parser")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).expect("the parser's JSON")
}

/// The value of the sample `name` whose labels include every pair of `labels`.
fn sample(families: &Value, family: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    families[family]["samples"]
        .as_array()?
        .iter()
        .find_map(|s| {
            let matches = s[0] == name && labels.iter().all(|(k, v)| s[1][*k] == *v);
            matches.then(|| s[2].as_f64()).flatten()
        })
}

async fn page(app: &TestApp, token: Option<&str>) -> reqwest::Response {
    let mut req = app.request(Method::GET, "/metrics");
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    req.send().await.unwrap()
}

#[tokio::test]
async fn metrics_count_what_the_service_does_in_a_format_prometheus_reads() {
    let app = quiet_app().await;
    let s = app.sign_up("ops@metrics.example", "Metrics Org").await;
    let domain = add_domain(&app, &s.key, "watched.metrics.example").await;
    for _ in 0..3 {
        app.request(Method::GET, "/health-check")
            .send()
            .await
            .unwrap();
    }
    app.request(Method::GET, "/no/such/path")
        .send()
        .await
        .unwrap();
    let report = crate::retention::dmarc(&app, "watched.metrics.example", "m1", 1);
    let state = &app.stack.state;
    for _ in 0..2 {
        mailward_workers::ingest::ingest(state, &report, &for_org(&s), &Limits::default())
            .await
            .unwrap();
    }
    // A domain long due and never swept: the sweep lags.
    app.clock.advance(time::Duration::hours(2));

    let res = page(&app, None).await;
    assert_eq!(res.status(), 200, "loopback without a token configured");
    assert!(
        res.headers()[reqwest::header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("application/openmetrics-text"),
    );
    let families = parsed(&app, res.text().await.unwrap()).await;
    let health = [
        ("method", "GET"),
        ("route", "/health-check"),
        ("status", "200"),
    ];
    let served = "mailward_http_requests_total";
    assert!(
        sample(&families, "mailward_http_requests", served, &health) >= Some(3.0),
        "{families}"
    );
    let unmatched = [("route", "unmatched"), ("status", "404")];
    assert!(sample(&families, "mailward_http_requests", served, &unmatched) >= Some(1.0));
    let templated = [("route", "/domains"), ("method", "POST"), ("status", "201")];
    assert!(sample(&families, "mailward_http_requests", served, &templated) >= Some(1.0));
    assert_eq!(
        families["mailward_http_request_duration_seconds"]["type"],
        "histogram"
    );
    let ingested = "mailward_reports_ingested_total";
    for (outcome, at_least) in [("imported", 1.0), ("duplicate", 1.0)] {
        let n = sample(
            &families,
            "mailward_reports_ingested",
            ingested,
            &[("outcome", outcome)],
        );
        assert!(n >= Some(at_least), "{outcome}: {families}");
    }
    let lag = sample(
        &families,
        "mailward_sweep_lag_seconds",
        "mailward_sweep_lag_seconds",
        &[],
    );
    assert!(
        lag >= Some(7_000.0),
        "the never-swept domain waits: {lag:?}"
    );
    for family in [
        "mailward_queue_ready_messages",
        "mailward_queue_dead_letters",
    ] {
        assert!(
            sample(&families, family, family, &[("queue", "jobs")]).is_some(),
            "{family}"
        );
    }
    assert!(
        families["mailward_dns_queries"]["samples"]
            .as_array()
            .is_some()
    );
    assert!(domain["id"].is_string());
}

#[tokio::test]
async fn a_configured_token_is_required_and_checked() {
    let app = TestApp::start_with(|s| s.metrics_token = Some("scrape-secret-1".into())).await;
    assert_eq!(page(&app, None).await.status(), 401);
    assert_eq!(page(&app, Some("scrape-secret-2")).await.status(), 401);
    let res = page(&app, Some("scrape-secret-1")).await;
    assert_eq!(res.status(), 200);
    parsed(&app, res.text().await.unwrap()).await;
}
