//! DNS connections over HTTP, with Route 53 in moto: keys and an assumed role connect, the
//! zones are read before anything is stored, coverage says which domains the zones serve,
//! credentials are never answered, refusals and bad input are named, and another organization
//! sees nothing. Needs `MOTO_ENDPOINT` (tests/run starts moto); without it the tests say so and
//! pass, like the other moto tests.

use crate::common::add_domain;
use crate::common::call;
use async_trait::async_trait;
use mailward_api_tests::TestApp;
use mailward_domain::dns_connections::{DnsHostCredentials, DnsHostError, DnsHostZone, DnsHosts};
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::Arc;

async fn start(hosts: Arc<dyn DnsHosts>) -> (TestApp, mailward_dns_fixture::FixtureServer) {
    // Live DNS for the records guidance: the test names do not exist (NXDOMAIN at once).
    let dns = mailward_dns_fixture::FixtureServer::start(vec![
        mailward_dns_fixture::Zone::new("example"),
        mailward_dns_fixture::Zone::new("test"),
    ])
    .await
    .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| {
        s.dns_hosts = Some(mailward_local_stack::DnsHostsOverride(hosts));
        s.dns = Some(addr);
        s.evaluate_new_domains = false;
        s.publish_outbox = false;
        // moto's STS admits any external id (it evaluates no trust policy), so the probe for
        // an open trust policy is off here; `a_role_that_admits_any_external_id_is_refused`
        // tests it with a provider that evaluates one.
        s.role_trust_probe = false;
    })
    .await;
    (app, dns)
}

/// Route 53 in moto with a public zone per apex (and a client to look at them); `None`
/// without moto.
async fn moto_zones(apexes: &[&str]) -> Option<(Arc<dyn DnsHosts>, aws_sdk_route53::Client)> {
    let Ok(endpoint) = std::env::var("MOTO_ENDPOINT") else {
        println!("skipped: MOTO_ENDPOINT not set");
        return None;
    };
    let sdk = mailward_aws::emulator_config(&endpoint).await;
    let route53 = aws_sdk_route53::Client::new(&sdk);
    for apex in apexes {
        route53
            .create_hosted_zone()
            .name(*apex)
            .caller_reference(uuid::Uuid::new_v4().to_string())
            .send()
            .await
            .unwrap();
    }
    Some((
        Arc::new(mailward_aws::dns_hosts::Route53Hosts::new(sdk)),
        route53,
    ))
}

/// The TXT values of a name in a moto zone.
async fn txt_in(route53: &aws_sdk_route53::Client, zone_id: &str, name: &str) -> Vec<String> {
    let sets = route53
        .list_resource_record_sets()
        .hosted_zone_id(zone_id)
        .send()
        .await
        .unwrap();
    sets.resource_record_sets()
        .iter()
        .filter(|s| s.name().trim_end_matches('.') == name && s.r#type().as_str() == "TXT")
        .flat_map(|s| {
            s.resource_records()
                .iter()
                .map(|r| r.value().trim_matches('"').to_owned())
        })
        .collect()
}

async fn connect(app: &TestApp, key: &str, body: Value) -> (u16, Value) {
    let (status, value) = call(app, Method::POST, "/dns-connections", key, Some(body)).await;
    (status.as_u16(), value)
}

#[tokio::test]
async fn a_route53_connection_reads_its_zones_and_reports_coverage() {
    let tag = uuid::Uuid::new_v4().simple().to_string();
    let (apex, apex_other) = (format!("a{tag}.example"), format!("b{tag}.example"));
    let Some((hosts, route53)) = moto_zones(&[&apex, &apex_other]).await else {
        return;
    };
    let (app, _dns) = start(hosts).await;
    let s = app
        .sign_up("dns@connections.example", "Connections Co")
        .await;
    for d in [apex.clone(), format!("mail.{apex}"), format!("c{tag}.test")] {
        add_domain(&app, &s.key, &d).await;
    }

    let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    let (status, keys) = connect(
        &app,
        &s.key,
        json!({"provider": "route53", "name": "Production DNS", "credentials": {"access_key_id": "AKIAIOSFODNN7EXAMPLE", "secret_access_key": secret}}),
    )
    .await;
    assert_eq!(status, 201, "{keys}");
    assert_eq!(keys["object"], "dns_connection");
    assert_eq!(keys["provider"], "route53");
    assert_eq!(keys["credential_kind"], "keys");
    assert_eq!(keys["credential_hint"], "access key …MPLE");
    assert_eq!(keys["status"], "active");
    assert!(
        !keys.to_string().contains(secret),
        "the secret is never answered"
    );
    let zones: Vec<&str> = keys["zones"]
        .as_array()
        .unwrap()
        .iter()
        .map(|z| z["name"].as_str().unwrap())
        .collect();
    assert!(
        zones.contains(&apex.as_str()) && zones.contains(&apex_other.as_str()),
        "{zones:?}"
    );
    let id = keys["id"].as_str().unwrap().to_owned();

    // Coverage: the apex and its subdomain are served by the apex zone; the third is not.
    let (status, coverage) = call(
        &app,
        Method::GET,
        &format!("/dns-connections/{id}/coverage"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 200, "{coverage}");
    assert_eq!(
        (
            coverage["covered_count"].as_u64(),
            coverage["domain_count"].as_u64()
        ),
        (Some(2), Some(3))
    );
    let covered: Vec<(String, String)> = coverage["covered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["domain"].as_str().unwrap().to_owned(),
                c["zone"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        covered,
        [
            (apex.clone(), apex.clone()),
            (format!("mail.{apex}"), apex.clone())
        ]
    );
    assert_eq!(coverage["uncovered"][0]["domain"], format!("c{tag}.test"));
    let zone_id = coverage["covered"][0]["zone_id"].as_str().unwrap();
    assert!(
        !zone_id.is_empty() && !zone_id.starts_with('/'),
        "{zone_id}"
    );

    // Publishing: the planned records go into the zone; a TXT of another kind at the apex
    // (a site verification) stays beside the SPF record.
    let zone_id = coverage["covered"][0]["zone_id"]
        .as_str()
        .unwrap()
        .to_owned();
    route53
        .change_resource_record_sets()
        .hosted_zone_id(&zone_id)
        .change_batch(
            aws_sdk_route53::types::ChangeBatch::builder()
                .changes(
                    aws_sdk_route53::types::Change::builder()
                        .action(aws_sdk_route53::types::ChangeAction::Upsert)
                        .resource_record_set(
                            aws_sdk_route53::types::ResourceRecordSet::builder()
                                .name(format!("{apex}."))
                                .r#type(aws_sdk_route53::types::RrType::Txt)
                                .ttl(300)
                                .resource_records(
                                    aws_sdk_route53::types::ResourceRecord::builder()
                                        .value("\"site-verification=abc\"")
                                        .build()
                                        .unwrap(),
                                )
                                .build()
                                .unwrap(),
                        )
                        .build()
                        .unwrap(),
                )
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let domain_id = coverage["covered"][0]["domain_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, published) = call(
        &app,
        Method::POST,
        &format!("/dns-connections/{id}/publish"),
        &s.key,
        Some(json!({"domain_id": domain_id})),
    )
    .await;
    assert_eq!(status, 200, "{published}");
    assert_eq!(published["zone"], apex.as_str());
    let sets = published["record_sets"].as_array().unwrap();
    assert!(
        sets.iter().all(|r| r["result"] == "published"),
        "{published}"
    );
    let dmarc = sets
        .iter()
        .find(|r| r["host"] == format!("_dmarc.{apex}"))
        .unwrap();
    let dmarc_value = dmarc["values"][0].as_str().unwrap().to_owned();
    assert!(dmarc_value.starts_with("v=DMARC1"), "{dmarc_value}");
    assert_eq!(
        txt_in(&route53, &zone_id, &format!("_dmarc.{apex}")).await,
        [dmarc_value]
    );
    let apex_txt = txt_in(&route53, &zone_id, &apex).await;
    assert!(
        apex_txt.contains(&"site-verification=abc".to_owned()),
        "{apex_txt:?}"
    );
    assert!(
        apex_txt.iter().any(|v| v.starts_with("v=spf1")),
        "{apex_txt:?}"
    );
    // A domain no zone of the connection serves.
    let uncovered = coverage["uncovered"][0]["domain_id"].as_str().unwrap();
    let (status, error) = call(
        &app,
        Method::POST,
        &format!("/dns-connections/{id}/publish"),
        &s.key,
        Some(json!({"domain_id": uncovered})),
    )
    .await;
    assert_eq!(
        (status.as_u16(), error["code"].as_str()),
        (422, Some("domain_not_covered")),
        "{error}"
    );
    assert_eq!(error["param"], "domain_id");

    // A role in the customer's account, assumed through STS (a second later: the list is
    // oldest first).
    app.clock.advance(time::Duration::seconds(1));
    let (status, role) = connect(
        &app,
        &s.key,
        json!({"provider": "route53", "name": "Via role", "credentials": {"role_arn": "arn:aws:iam::123456789012:role/mailward-dns"}}),
    )
    .await;
    assert_eq!(status, 201, "{role}");
    assert_eq!(role["credential_kind"], "role");
    assert_eq!(
        role["credential_hint"],
        "arn:aws:iam::123456789012:role/mailward-dns"
    );
    let (_, list) = call(&app, Method::GET, "/dns-connections", &s.key, None).await;
    let names: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Production DNS", "Via role"]);

    // One connection by id.
    let (_, one) = call(
        &app,
        Method::GET,
        &format!("/dns-connections/{id}"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(one["name"], "Production DNS");

    // Another organization sees none of it.
    let other = app.sign_up("other@connections.example", "Other Co").await;
    let (status, _) = call(
        &app,
        Method::GET,
        &format!("/dns-connections/{id}"),
        &other.key,
        None,
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = call(
        &app,
        Method::GET,
        &format!("/dns-connections/{id}/coverage"),
        &other.key,
        None,
    )
    .await;
    assert_eq!(status, 404);
    let (_, theirs) = call(&app, Method::GET, "/dns-connections", &other.key, None).await;
    assert_eq!(theirs["data"], json!([]));

    // Removed: gone, with its credentials.
    let (status, _) = call(
        &app,
        Method::DELETE,
        &format!("/dns-connections/{id}"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 204);
    let (status, _) = call(
        &app,
        Method::GET,
        &format!("/dns-connections/{id}"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 404);
}

/// A provider that refuses every credential.
struct Refusing;

#[async_trait]
impl DnsHosts for Refusing {
    async fn zones(&self, _: &DnsHostCredentials) -> Result<Vec<DnsHostZone>, DnsHostError> {
        Err(DnsHostError::Denied(
            "AccessDenied: not authorized to perform route53:ListHostedZones".into(),
        ))
    }

    async fn zone(
        &self,
        _: &DnsHostCredentials,
        _: &DnsHostZone,
    ) -> Result<Box<dyn mailward_domain::hosted_zone::HostedZone>, DnsHostError> {
        Err(DnsHostError::Denied("AccessDenied".into()))
    }
}

#[tokio::test]
async fn refusals_and_bad_input_store_nothing() {
    let (app, _dns) = start(Arc::new(Refusing)).await;
    let s = app.sign_up("dns@refused.example", "Refused Co").await;
    let keys = json!({"access_key_id": "AKIAIOSFODNN7EXAMPLE", "secret_access_key": "s3cret"});
    let (status, error) = connect(
        &app,
        &s.key,
        json!({"provider": "route53", "name": "X", "credentials": keys}),
    )
    .await;
    assert_eq!(
        (status, error["code"].as_str()),
        (422, Some("dns_connection_failed")),
        "{error}"
    );
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("ListHostedZones")
    );
    for (body, param) in [
        (
            json!({"provider": "cloudflare", "name": "X", "credentials": keys}),
            "provider",
        ),
        (
            json!({"provider": "route53", "name": " ", "credentials": keys}),
            "name",
        ),
        (
            json!({"provider": "route53", "name": "X", "credentials": {}}),
            "credentials",
        ),
        (
            json!({"provider": "route53", "name": "X", "credentials": {"access_key_id": "AKIAIOSFODNN7EXAMPLE", "secret_access_key": "s", "role_arn": "arn:aws:iam::1:role/x"}}),
            "credentials",
        ),
        (
            json!({"provider": "route53", "name": "X", "credentials": {"access_key_id": "short", "secret_access_key": "s"}}),
            "credentials.access_key_id",
        ),
        (
            json!({"provider": "route53", "name": "X", "credentials": {"role_arn": "arn:aws:s3:::bucket"}}),
            "credentials.role_arn",
        ),
        (
            json!({"provider": "route53", "name": "X", "credentials": {"role_arn": "arn:aws:iam::123456789012:role/x", "external_id": "mine"}}),
            "credentials.external_id",
        ),
        (
            json!({"provider": "route53", "name": "X", "credentials": {"token": "t"}}),
            "credentials.token",
        ),
        (json!({"name": "X", "credentials": keys}), "provider"),
    ] {
        let (status, error) = connect(&app, &s.key, body.clone()).await;
        assert_eq!(status, 400, "{body}: {error}");
        assert_eq!(error["param"], param, "{body}: {error}");
    }
    let (_, list) = call(&app, Method::GET, "/dns-connections", &s.key, None).await;
    assert_eq!(list["data"], json!([]));
    let (status, _) = call(
        &app,
        Method::GET,
        &format!("/dns-connections/{}", uuid::Uuid::new_v4()),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 404);
}

/// Tenant trust, finding 8: publishing reads the records guidance from live DNS, so it counts in
/// the DNS buckets like the guidance itself (a refused call counts too).
#[tokio::test]
async fn publishing_counts_in_the_dns_buckets() {
    let app = TestApp::start_with(|s| {
        s.publish_outbox = false;
        s.rate_limits.push((
            mailward_services::config::Scope::Dns,
            "1/60".parse().unwrap(),
        ));
    })
    .await;
    let s = app.sign_up("publisher@dns.example", "Publisher Co").await;
    let path = format!("/dns-connections/{}/publish", uuid::Uuid::new_v4());
    let body = json!({"domain_id": uuid::Uuid::new_v4()});
    let (status, first) = call(&app, Method::POST, &path, &s.key, Some(body.clone())).await;
    assert_eq!(status, 404, "{first}");
    let (status, second) = call(&app, Method::POST, &path, &s.key, Some(body)).await;
    assert_eq!(status, 429, "{second}");
    assert_eq!(second["scope"], "dns", "{second}");
}

/// A provider that records the credentials it is given and refuses with an error naming a
/// role of Mailward's own account.
#[derive(Default)]
struct Recording(std::sync::Mutex<Vec<DnsHostCredentials>>);

#[async_trait]
impl DnsHosts for Recording {
    async fn zones(
        &self,
        credentials: &DnsHostCredentials,
    ) -> Result<Vec<DnsHostZone>, DnsHostError> {
        self.0.lock().unwrap().push(credentials.clone());
        Err(DnsHostError::Denied(
            "AccessDenied: User: arn:aws:sts::999999999999:assumed-role/mailward-api/x is not authorized to perform: sts:AssumeRole".into(),
        ))
    }

    async fn zone(
        &self,
        _: &DnsHostCredentials,
        _: &DnsHostZone,
    ) -> Result<Box<dyn mailward_domain::hosted_zone::HostedZone>, DnsHostError> {
        Err(DnsHostError::Denied("AccessDenied".into()))
    }
}

/// Tenant trust, finding 3: a DNS connection cannot borrow another customer's role. Mailward
/// assumes every role with the caller's own external id (shown by `GET /dns-connections`,
/// different per organization, never taken from input), refuses roles in its own account, and
/// keeps its own ARNs out of error text.
#[tokio::test]
async fn dns_connections_cannot_borrow_another_customers_role() {
    let recording = Arc::new(Recording::default());
    let hosts: Arc<dyn DnsHosts> = recording.clone();
    let dns =
        mailward_dns_fixture::FixtureServer::start(vec![mailward_dns_fixture::Zone::new("test")])
            .await
            .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| {
        s.dns_hosts = Some(mailward_local_stack::DnsHostsOverride(hosts));
        s.dns = Some(addr);
        s.publish_outbox = false;
        s.aws_account_id = Some("999999999999".into());
    })
    .await;
    let victim = app.sign_up("owner@victim.example", "Victim Co").await;
    let attacker = app.sign_up("mallory@attacker.example", "Attacker Co").await;
    let (_, theirs) = call(&app, Method::GET, "/dns-connections", &victim.key, None).await;
    let (_, mine) = call(&app, Method::GET, "/dns-connections", &attacker.key, None).await;
    let victim_id = theirs["external_id"].as_str().unwrap().to_owned();
    let attacker_id = mine["external_id"].as_str().unwrap().to_owned();
    assert!(victim_id.starts_with("mailward-") && attacker_id.starts_with("mailward-"));
    assert_ne!(victim_id, attacker_id);
    // The attacker names the victim's role, even with the victim's external id: refused as
    // input; without it, Mailward sends the attacker's own id, which the victim's trust policy
    // does not admit.
    let role = "arn:aws:iam::123456789012:role/victim-dns";
    let (status, error) = connect(
        &app,
        &attacker.key,
        json!({"provider": "route53", "name": "Borrowed", "credentials": {"role_arn": role, "external_id": victim_id}}),
    )
    .await;
    assert_eq!(
        (status, error["param"].as_str()),
        (400, Some("credentials.external_id")),
        "{error}"
    );
    let (status, error) = connect(
        &app,
        &attacker.key,
        json!({"provider": "route53", "name": "Borrowed", "credentials": {"role_arn": role}}),
    )
    .await;
    assert_eq!(status, 422, "{error}");
    let sent = recording.0.lock().unwrap().clone();
    assert_eq!(sent.len(), 1);
    let DnsHostCredentials::Route53Role { external_id, .. } = &sent[0] else {
        panic!("a role: {sent:?}");
    };
    assert_eq!(external_id.as_deref(), Some(attacker_id.as_str()));
    // Mailward's own ARNs never reach the caller.
    let message = error["message"].as_str().unwrap();
    assert!(!message.contains("999999999999"), "{message}");
    assert!(message.contains("[a Mailward resource]"), "{message}");
    // A role in Mailward's own account is refused before anything is asked.
    let (status, error) = connect(
        &app,
        &attacker.key,
        json!({"provider": "route53", "name": "Inside", "credentials": {"role_arn": "arn:aws:iam::999999999999:role/mailward-api"}}),
    )
    .await;
    assert_eq!(
        (status, error["param"].as_str()),
        (400, Some("credentials.role_arn")),
        "{error}"
    );
    assert_eq!(recording.0.lock().unwrap().len(), 1);
}

/// A provider whose one role trusts Mailward under the external id `required` holds (any
/// external id while it holds none).
#[derive(Default)]
struct TrustPolicy {
    required: std::sync::Mutex<Option<String>>,
}

#[async_trait]
impl DnsHosts for TrustPolicy {
    async fn zones(
        &self,
        credentials: &DnsHostCredentials,
    ) -> Result<Vec<DnsHostZone>, DnsHostError> {
        let DnsHostCredentials::Route53Role { external_id, .. } = credentials else {
            return Err(DnsHostError::Denied("roles only".into()));
        };
        match self.required.lock().unwrap().as_ref() {
            Some(id) if external_id.as_ref() != Some(id) => {
                Err(DnsHostError::Denied("AccessDenied: sts:AssumeRole".into()))
            }
            _ => Ok(Vec::new()),
        }
    }

    async fn zone(
        &self,
        _: &DnsHostCredentials,
        _: &DnsHostZone,
    ) -> Result<Box<dyn mailward_domain::hosted_zone::HostedZone>, DnsHostError> {
        Err(DnsHostError::Denied("AccessDenied".into()))
    }
}

/// Tenant trust, finding 3: a role whose trust policy does not require the organization's
/// external id would serve any organization that names it; Mailward probes with a foreign id
/// and refuses such a role, and accepts one that requires the organization's own id.
#[tokio::test]
async fn a_role_that_admits_any_external_id_is_refused() {
    let role = json!({"provider": "route53", "name": "Role", "credentials": {"role_arn": "arn:aws:iam::123456789012:role/dns"}});
    let policy = Arc::new(TrustPolicy::default());
    let hosts: Arc<dyn DnsHosts> = policy.clone();
    let app = TestApp::start_with(|s| {
        s.dns_hosts = Some(mailward_local_stack::DnsHostsOverride(hosts));
        s.publish_outbox = false;
    })
    .await;
    let s = app.sign_up("owner@open-role.example", "Open Role").await;
    let (status, error) = connect(&app, &s.key, role.clone()).await;
    assert_eq!(
        (status, error["code"].as_str(), error["param"].as_str()),
        (
            422,
            Some("role_trust_too_broad"),
            Some("credentials.role_arn")
        ),
        "{error}"
    );
    let (_, list) = call(&app, Method::GET, "/dns-connections", &s.key, None).await;
    assert_eq!(list["data"], json!([]), "nothing stored");

    // The customer adds the condition on this organization's external id: connected.
    *policy.required.lock().unwrap() = Some(list["external_id"].as_str().unwrap().to_owned());
    let (status, connected) = connect(&app, &s.key, role).await;
    assert_eq!(status, 201, "{connected}");
}
