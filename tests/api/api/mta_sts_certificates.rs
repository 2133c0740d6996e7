//! Certificates and HTTPS fronts of hosted MTA-STS policy hosts (SPEC §4.4 `mta-sts/retry`).
//!
//! The service's side runs against a scripted front provider (it stands in for ACM and
//! CloudFront, whose timing a test cannot wait for): the certificate requested on enable with
//! its validation record among `records`, not ready before the front serves, a validation
//! never seen failing as `setup_timeout`, every refusal of the retry, a retry taking the old
//! front down, the policy host's name pointed at the front once it serves, and the front
//! closed when the retired policy goes. The AWS adapter itself runs against ACM and
//! CloudFront in moto (`MOTO_ENDPOINT`; tests/run starts it with ACM issuing after a second).

use crate::admin::member;
use crate::common::add_domain;
use crate::common::{call, call_as, next_pass_and_reconcile};
use crate::hosted::{embedded, hosted_events, owner, start_adjusted};
use async_trait::async_trait;
use mailward_api_tests::TestApp;
use mailward_domain::dns::{DnsResolver as _, RecordData, RecordType};
use mailward_domain::policy_fronts::{
    Closing, FRONT_HOST_HEADER, FrontError, FrontStage, PolicyFront, PolicyFronts, ValidationRecord,
};
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use time::OffsetDateTime;

const HOSTED_ZONE: &str = "hosted.mailward.local";

/// What the scripted provider does and did.
#[derive(Default)]
struct Script {
    /// The stage `advance` moves in-progress fronts to (`None`: they stay).
    next: Option<FrontStage>,
    /// Certificates requested, in order.
    opened: Vec<String>,
    /// Certificates taken down.
    closed: Vec<String>,
}

/// A provider whose certificates move when the test says so.
#[derive(Clone, Default)]
struct ScriptedFronts(Arc<Mutex<Script>>);

impl ScriptedFronts {
    fn set_next(&self, stage: FrontStage) {
        self.0.lock().unwrap().next = Some(stage);
    }
    fn opened(&self) -> Vec<String> {
        self.0.lock().unwrap().opened.clone()
    }
    fn closed(&self) -> Vec<String> {
        self.0.lock().unwrap().closed.clone()
    }
}

#[async_trait]
impl PolicyFronts for ScriptedFronts {
    async fn open(&self, host: &str, now: OffsetDateTime) -> Result<PolicyFront, FrontError> {
        let mut script = self.0.lock().unwrap();
        let id = format!("cert-{}", script.opened.len() + 1);
        script.opened.push(id.clone());
        let mut front = PolicyFront::requested(host, FrontStage::PendingValidation, &id, now);
        front.validation = vec![ValidationRecord {
            name: format!("_0123abcd.{host}"),
            record_type: "CNAME".into(),
            value: "_4567ef.acm-validations.test".into(),
        }];
        Ok(front)
    }

    async fn advance(&self, front: &PolicyFront) -> Result<PolicyFront, FrontError> {
        let script = self.0.lock().unwrap();
        let mut next = front.clone();
        match script.next {
            None => {}
            Some(FrontStage::Failed) => {
                next.stage = FrontStage::Failed;
                next.failure = Some("the certificate authority answered FAILED: CAA_ERROR".into());
            }
            Some(stage) => {
                next.stage = stage;
                next.front_id = Some(format!("dist-{}", front.certificate_id));
                next.target = Some("d111abcdef8.cloudfront.test".into());
            }
        }
        Ok(next)
    }

    async fn close(&self, front: &PolicyFront) -> Result<Closing, FrontError> {
        self.0
            .lock()
            .unwrap()
            .closed
            .push(front.certificate_id.clone());
        Ok(Closing::Closed)
    }
}

async fn mta_sts(app: &TestApp, key: &str, method: Method, path: &str) -> (u16, Value) {
    let (status, value) = call(app, method, path, key, None).await;
    (status.as_u16(), value)
}

/// Publishes `name` CNAME `target` in the fixture's live DNS.
fn cname(dns: &mailward_dns_fixture::FixtureServer, name: &str, target: &str) {
    dns.set(
        name,
        RecordType::Cname,
        vec![RecordData::Cname(format!("{target}."))],
    )
    .unwrap();
}

/// The CNAME target the embedded DNS server serves at `name`, if any.
async fn served_cname(app: &TestApp, name: &str) -> Option<String> {
    let answer = embedded(app).lookup(name, RecordType::Cname).await.ok()?;
    answer.records.into_iter().find_map(|r| match r {
        RecordData::Cname(t) => Some(t.trim_end_matches('.').to_owned()),
        _ => None,
    })
}

/// The hosted stack on `fronts`, with `client.test` added: (DNS, app, signup, domain id).
async fn on_fronts(
    fronts: Arc<dyn PolicyFronts>,
) -> (
    mailward_dns_fixture::FixtureServer,
    TestApp,
    mailward_api_tests::SignedUp,
    String,
) {
    let (dns, app, s) = start_adjusted(|settings| {
        settings.fronts = Some(mailward_local_stack::FrontsOverride(fronts));
    })
    .await;
    let domain = add_domain(&app, &s.key, "client.test").await;
    let id = domain["id"].as_str().unwrap().to_owned();
    (dns, app, s, id)
}

#[tokio::test]
async fn a_certificate_is_requested_fails_is_retried_serves_and_is_closed() {
    let fronts = ScriptedFronts::default();
    let (dns, app, s, id) = on_fronts(Arc::new(fronts.clone())).await;
    let path = format!("/domains/{id}/mta-sts");
    let retry = format!("{path}/retry");

    // Not enabled: the retry is refused.
    let (status, refused) = mta_sts(&app, &s.key, Method::POST, &retry).await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (409, Some("mta_sts_not_enabled"))
    );

    // Tenant trust, finding 6: on, but no certificate before the domain's `_mta-sts` CNAME
    // names this organization's owner-specific target (anyone may add the name).
    let txt_target = format!("{}._mta-sts.{HOSTED_ZONE}", owner(&id, "client.test"));
    let host_target = format!("client.test.mta-sts.{HOSTED_ZONE}");
    let (status, on) = mta_sts(&app, &s.key, Method::POST, &path).await;
    assert_eq!(status, 200, "{on}");
    assert!(fronts.opened().is_empty(), "{on}");
    next_pass_and_reconcile(&app).await;
    assert!(fronts.opened().is_empty(), "not on the hourly pass either");
    // The owner's choice in DNS: the certificate is requested on the next pass, and at once
    // when hosting is enabled after the CNAME (the POST answers the state).
    cname(&dns, "_mta-sts.client.test", &txt_target);
    next_pass_and_reconcile(&app).await;
    let (status, on) = mta_sts(&app, &s.key, Method::POST, &path).await;
    assert_eq!(status, 200, "{on}");
    assert_eq!(fronts.opened(), ["cert-1"]);
    assert_eq!(on["certificate"]["status"], "pending_validation", "{on}");
    assert_eq!(on["certificate"]["host"], "mta-sts.client.test");
    assert_eq!(
        on["records"],
        json!([
            {"host": "_mta-sts.client.test", "type": "CNAME", "value": txt_target},
            {"host": "mta-sts.client.test", "type": "CNAME", "value": host_target},
            {"host": "_0123abcd.mta-sts.client.test", "type": "CNAME", "value": "_4567ef.acm-validations.test"},
        ])
    );

    // The records guidance plans the validation CNAME with the policy host.
    let planned = crate::common::planned(&app, &s.key, &id, "mta_sts_policy").await;
    let validation = planned
        .iter()
        .find(|r| r["host"] == "_0123abcd.mta-sts.client.test")
        .unwrap_or_else(|| panic!("{planned:?}"));
    assert_eq!(
        (validation["type"].as_str(), validation["value"].as_str()),
        (Some("CNAME"), Some("_4567ef.acm-validations.test"))
    );

    // In progress: a retry is refused, not restarted.
    let (status, busy) = mta_sts(&app, &s.key, Method::POST, &retry).await;
    assert_eq!(
        (status, busy["code"].as_str()),
        (409, Some("mta_sts_setup_in_progress")),
        "{busy}"
    );

    // Both CNAMEs published, the certificate still waiting: syncing, not ready.
    cname(&dns, "_mta-sts.client.test", &txt_target);
    cname(&dns, "mta-sts.client.test", &host_target);
    next_pass_and_reconcile(&app).await;
    let (_, waiting) = mta_sts(&app, &s.key, Method::GET, &path).await;
    assert_eq!(waiting["status"], "syncing", "{waiting}");
    assert_eq!(
        fronts.opened(),
        ["cert-1"],
        "no second request while one waits"
    );

    // Syncing is not an error: nothing to retry.
    let (status, calm) = mta_sts(&app, &s.key, Method::POST, &retry).await;
    assert_eq!(
        (status, calm["code"].as_str()),
        (409, Some("mta_sts_setup_in_progress"))
    );

    // The validation never seen within the window (72 hours): setup_timeout, with the event.
    app.clock.advance(time::Duration::hours(73));
    next_pass_and_reconcile(&app).await;
    let (_, failed) = mta_sts(&app, &s.key, Method::GET, &path).await;
    assert_eq!(
        (failed["status"].as_str(), failed["error_reason"].as_str()),
        (Some("error"), Some("setup_timeout")),
        "{failed}"
    );
    assert_eq!(failed["certificate"]["status"], "failed");
    assert!(
        failed["certificate"]["error"]
            .as_str()
            .unwrap()
            .contains("72 hours")
    );
    assert_eq!(
        hosted_events(&app).await.last().unwrap(),
        &(
            "domain.hosted_record.error".to_owned(),
            "mta_sts".to_owned()
        )
    );
    let (_, domain) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(domain["mta_sts_error_reason"], "setup_timeout");

    // A reader may not retry; without the mta-sts CNAME the retry is refused and explains.
    let viewer = member(&app, &s, "viewer@hosted.example", &["viewer"], &[]).await;
    let (status, _) = call_as(&app, Method::POST, &retry, &viewer, None).await;
    assert_eq!(status.as_u16(), 403);
    dns.remove("mta-sts.client.test", None).unwrap();
    let (status, missing) = mta_sts(&app, &s.key, Method::POST, &retry).await;
    assert_eq!(
        (status, missing["code"].as_str()),
        (409, Some("mta_sts_cname_missing")),
        "{missing}"
    );
    assert!(missing["message"].as_str().unwrap().contains(&host_target));
    assert_eq!(fronts.opened(), ["cert-1"]);

    // With the CNAME back the retry requests a new certificate and takes the old one down.
    cname(&dns, "mta-sts.client.test", &host_target);
    let (status, retried) = mta_sts(&app, &s.key, Method::POST, &retry).await;
    assert_eq!(status, 200, "{retried}");
    assert_eq!(retried["status"], "syncing");
    assert!(retried["error_reason"].is_null());
    assert_eq!(retried["certificate"]["status"], "pending_validation");
    assert_eq!(fronts.opened(), ["cert-1", "cert-2"]);
    let (_, log) = call(&app, Method::GET, "/activity-log", &s.key, None).await;
    assert!(
        log["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["action"] == "mta_sts.retried"),
        "{log}"
    );

    // Issued and deployed: the policy host's name in our zone leads to the front; ready.
    fronts.set_next(FrontStage::Active);
    next_pass_and_reconcile(&app).await;
    assert_eq!(
        fronts.closed(),
        ["cert-1"],
        "the failed front is taken down"
    );
    let (_, ready) = mta_sts(&app, &s.key, Method::GET, &path).await;
    assert_eq!(ready["status"], "ready", "{ready}");
    assert_eq!(ready["certificate"]["status"], "active");
    assert_eq!(
        served_cname(&app, &host_target).await.as_deref(),
        Some("d111abcdef8.cloudfront.test")
    );

    // Active: the retry answers the state unchanged.
    let (status, unchanged) = mta_sts(&app, &s.key, Method::POST, &retry).await;
    assert_eq!(status, 200, "{unchanged}");
    assert_eq!(unchanged, ready);
    assert_eq!(fronts.opened(), ["cert-1", "cert-2"]);

    // The front forwards with the API's own Host and names the policy host in a header.
    let res = reqwest::Client::new()
        .get(app.url("/.well-known/mta-sts.txt"))
        .header("Host", "abc123.execute-api.us-east-1.amazonaws.com")
        .header(FRONT_HOST_HEADER, "mta-sts.client.test")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    assert!(res.text().await.unwrap().contains("mode: testing\r\n"));

    // Off, then past the old max_age: the policy, its name and the front go.
    let (status, _) = mta_sts(&app, &s.key, Method::DELETE, &path).await;
    assert_eq!(status, 200);
    next_pass_and_reconcile(&app).await;
    assert_eq!(fronts.closed(), ["cert-1"], "served while retiring");
    app.clock.advance(time::Duration::days(1));
    next_pass_and_reconcile(&app).await;
    assert_eq!(fronts.closed(), ["cert-1", "cert-2"]);
    assert_eq!(served_cname(&app, &host_target).await, None);
    let (_, gone) = mta_sts(&app, &s.key, Method::GET, &path).await;
    assert!(gone["certificate"].is_null(), "{gone}");
}

#[tokio::test]
async fn a_refused_certificate_is_certificate_invalid() {
    let fronts = ScriptedFronts::default();
    fronts.set_next(FrontStage::Failed);
    let (dns, app, s, id) = on_fronts(Arc::new(fronts.clone())).await;
    let path = format!("/domains/{id}/mta-sts");
    let txt_target = format!("{}._mta-sts.{HOSTED_ZONE}", owner(&id, "client.test"));
    cname(&dns, "_mta-sts.client.test", &txt_target);
    assert_eq!(mta_sts(&app, &s.key, Method::POST, &path).await.0, 200);
    next_pass_and_reconcile(&app).await;
    let (_, failed) = mta_sts(&app, &s.key, Method::GET, &path).await;
    assert_eq!(
        (failed["status"].as_str(), failed["error_reason"].as_str()),
        (Some("error"), Some("certificate_invalid")),
        "{failed}"
    );
    assert!(
        failed["certificate"]["error"]
            .as_str()
            .unwrap()
            .contains("CAA_ERROR")
    );
}

#[tokio::test]
async fn the_local_stack_serves_the_policy_host_itself() {
    let (dns, app, s) = start_adjusted(|_| {}).await;
    let domain = add_domain(&app, &s.key, "client.test").await;
    let id = domain["id"].as_str().unwrap();
    let path = format!("/domains/{id}/mta-sts");
    // Before the owner's `_mta-sts` CNAME: no certificate, not even a local one.
    let (_, before) = mta_sts(&app, &s.key, Method::POST, &path).await;
    assert_eq!(before["certificate"], Value::Null, "{before}");
    let txt_target = format!("{}._mta-sts.{HOSTED_ZONE}", owner(id, "client.test"));
    cname(&dns, "_mta-sts.client.test", &txt_target);
    next_pass_and_reconcile(&app).await;
    let (_, on) = mta_sts(&app, &s.key, Method::GET, &path).await;
    assert_eq!(on["certificate"]["status"], "not_required", "{on}");
    assert_eq!(on["records"].as_array().unwrap().len(), 2);
    let (status, same) = mta_sts(&app, &s.key, Method::POST, &format!("{path}/retry")).await;
    assert_eq!(status, 200, "{same}");
    assert_eq!(same, on);
}

/// ACM and CloudFront in moto: the certificate, its validation record, the distribution with
/// the host as alias and the policy-host header, deployment, and the teardown.
#[tokio::test]
async fn the_aws_front_requests_validates_deploys_and_closes_in_moto() {
    let Ok(endpoint) = std::env::var("MOTO_ENDPOINT") else {
        println!("skipped: MOTO_ENDPOINT not set");
        return;
    };
    let sdk = mailward_aws::emulator_config(&endpoint).await;
    let fronts = mailward_aws::policy_fronts::CloudFrontFronts::new(
        &sdk,
        "abc123.execute-api.us-east-1.amazonaws.com",
    );
    let host = format!("mta-sts.c{}.example", uuid::Uuid::new_v4().simple());
    let now = OffsetDateTime::now_utc();
    let opened = fronts.open(&host, now).await.unwrap();
    assert_eq!(opened.stage, FrontStage::PendingValidation);
    assert!(opened.certificate_id.starts_with("arn:aws:acm:us-east-1:"));
    assert_eq!(opened.validation.len(), 1, "{opened:?}");
    assert!(opened.validation[0].name.ends_with(&format!(".{host}")));
    assert_eq!(opened.validation[0].record_type, "CNAME");
    assert!(opened.validation[0].value.ends_with(".acm-validations.aws"));

    // moto issues a DNS-validated certificate once MOTO_ACM_VALIDATION_WAIT has passed.
    let mut front = opened.clone();
    for _ in 0..40 {
        front = fronts.advance(&front).await.unwrap();
        if front.stage != FrontStage::PendingValidation {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert_eq!(front.stage, FrontStage::Deploying, "{front:?}");
    let distribution = front.front_id.clone().unwrap();
    assert!(
        front
            .target
            .as_deref()
            .unwrap()
            .ends_with(".cloudfront.net")
    );
    let cloudfront = aws_sdk_cloudfront::Client::new(&sdk);
    let config = cloudfront
        .get_distribution_config()
        .id(&distribution)
        .send()
        .await
        .unwrap();
    let config = config.distribution_config().unwrap();
    assert_eq!(
        config.aliases().unwrap().items(),
        std::slice::from_ref(&host)
    );
    assert_eq!(
        config.viewer_certificate().unwrap().acm_certificate_arn(),
        Some(front.certificate_id.as_str())
    );
    let origin = &config.origins().unwrap().items()[0];
    assert_eq!(
        origin.domain_name(),
        "abc123.execute-api.us-east-1.amazonaws.com"
    );
    let header = &origin.custom_headers().unwrap().items()[0];
    assert_eq!(
        (header.header_name(), header.header_value()),
        (FRONT_HOST_HEADER, host.as_str())
    );

    // Deployed: active.
    let mut active = front.clone();
    for _ in 0..10 {
        active = fronts.advance(&active).await.unwrap();
        if active.stage == FrontStage::Active {
            break;
        }
    }
    assert_eq!(active.stage, FrontStage::Active, "{active:?}");

    // Closing: disabled first, then deleted with the certificate.
    let mut closing = fronts.close(&active).await.unwrap();
    assert_eq!(closing, Closing::InProgress);
    for _ in 0..10 {
        if closing == Closing::Closed {
            break;
        }
        closing = fronts.close(&active).await.unwrap();
    }
    assert_eq!(closing, Closing::Closed);
    assert!(
        cloudfront
            .get_distribution()
            .id(&distribution)
            .send()
            .await
            .is_err()
    );
    let acm = aws_sdk_acm::Client::new(&sdk);
    assert!(
        acm.describe_certificate()
            .certificate_arn(&active.certificate_id)
            .send()
            .await
            .is_err()
    );
    // Closing what is gone is done.
    assert_eq!(fronts.close(&active).await.unwrap(), Closing::Closed);
}

/// The whole path through the API on ACM and CloudFront in moto (and, in the AWS pass, the
/// hosted zone on Route 53): the certificate requested with ACM's own validation record among
/// `records`, issued, the distribution deployed, the policy host's name pointed at it, ready;
/// then retired, and the distribution and certificate deleted.
#[tokio::test]
async fn hosted_mta_sts_runs_on_acm_and_cloudfront_in_moto() {
    let Ok(endpoint) = std::env::var("MOTO_ENDPOINT") else {
        assert!(
            !mailward_api_tests::backend_is_aws(),
            "the AWS pass skips nothing"
        );
        println!("skipped: MOTO_ENDPOINT not set");
        return;
    };
    let sdk = mailward_aws::emulator_config(&endpoint).await;
    let origin = "abc123.execute-api.us-east-1.amazonaws.com";
    let (dns, app, s, id) = on_fronts(Arc::new(
        mailward_aws::policy_fronts::CloudFrontFronts::new(&sdk, origin),
    ))
    .await;
    let path = format!("/domains/{id}/mta-sts");
    let txt_target = format!("{}._mta-sts.{HOSTED_ZONE}", owner(&id, "client.test"));
    let host_target = format!("client.test.mta-sts.{HOSTED_ZONE}");
    cname(&dns, "_mta-sts.client.test", &txt_target);
    cname(&dns, "mta-sts.client.test", &host_target);
    let (status, on) = mta_sts(&app, &s.key, Method::POST, &path).await;
    assert_eq!(status, 200, "{on}");
    assert_eq!(on["certificate"]["status"], "pending_validation", "{on}");
    let records = on["records"].as_array().unwrap();
    let validation = records
        .iter()
        .find(|r| {
            r["value"]
                .as_str()
                .unwrap()
                .ends_with(".acm-validations.aws")
        })
        .unwrap_or_else(|| panic!("ACM's validation record among {records:?}"));
    assert!(
        validation["host"]
            .as_str()
            .unwrap()
            .ends_with(".mta-sts.client.test"),
        "{validation}"
    );

    // moto issues the certificate a second after the request; each hourly pass moves it on.
    let mut ready = Value::Null;
    for _ in 0..40 {
        next_pass_and_reconcile(&app).await;
        ready = mta_sts(&app, &s.key, Method::GET, &path).await.1;
        if ready["certificate"]["status"] == "active" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert_eq!(ready["status"], "ready", "{ready}");
    assert_eq!(ready["certificate"]["status"], "active", "{ready}");
    let front = served_cname(&app, &host_target).await.expect("a CNAME");
    assert!(front.ends_with(".cloudfront.net"), "{front}");
    let cloudfront = aws_sdk_cloudfront::Client::new(&sdk);
    let listed = cloudfront.list_distributions().send().await.unwrap();
    let ours = listed
        .distribution_list()
        .unwrap()
        .items()
        .iter()
        .find(|d| d.domain_name() == front)
        .expect("the distribution the name leads to");
    assert_eq!(ours.aliases().unwrap().items(), ["mta-sts.client.test"]);
    let certificate = ours
        .viewer_certificate()
        .and_then(|v| v.acm_certificate_arn())
        .expect("the distribution presents an ACM certificate")
        .to_owned();

    // Off, then past the old max_age: the distribution and the certificate are deleted.
    let (status, _) = mta_sts(&app, &s.key, Method::DELETE, &path).await;
    assert_eq!(status, 200);
    app.clock.advance(time::Duration::days(1));
    let distribution = ours.id().to_owned();
    let mut gone = false;
    for _ in 0..10 {
        next_pass_and_reconcile(&app).await;
        if cloudfront
            .get_distribution()
            .id(&distribution)
            .send()
            .await
            .is_err()
        {
            gone = true;
            break;
        }
    }
    assert!(gone, "the distribution is deleted");
    assert_eq!(served_cname(&app, &host_target).await, None);
    let acm = aws_sdk_acm::Client::new(&sdk);
    let mut deleted = false;
    for _ in 0..10 {
        if acm
            .describe_certificate()
            .certificate_arn(&certificate)
            .send()
            .await
            .is_err()
        {
            deleted = true;
            break;
        }
        next_pass_and_reconcile(&app).await;
    }
    assert!(deleted, "the certificate is deleted");
}
