//! Hosted BIMI over HTTP: a VMC fixture (cnn.pem, at its reference time) is validated, its
//! chain and logo hosted at content-versioned public URLs (the same PEM, JSON or multipart,
//! gives the same URLs), the BIMI record served for the customer's CNAME, the state follows
//! the CNAME and the certificate's expiry; every refusal is named.

use crate::common::{add_domain, outbox_events};
use crate::common::{call, next_pass_and_reconcile};
use crate::hosted::{hosted_events, owner, served_txt, start};
use mailward_api_tests::TestApp;
use mailward_dns_fixture::Zone;
use mailward_domain::dns::{RecordData, RecordType};
use reqwest::Method;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

const HOSTED_ZONE: &str = "hosted.mailward.local";

fn fixture(path: &str) -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/mailward-bimi/tests/fixtures");
    std::fs::read(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn pem(path: &str) -> String {
    String::from_utf8(fixture(path)).unwrap()
}

async fn upload(app: &TestApp, key: &str, id: &str, body: Value) -> (u16, Value) {
    let (status, value) = call(
        app,
        Method::POST,
        &format!("/domains/{id}/bimi/assets"),
        key,
        Some(body),
    )
    .await;
    (status.as_u16(), value)
}

/// GET of a public URL: status, content type, bytes.
async fn fetch(url: &str) -> (u16, String, Vec<u8>) {
    let res = reqwest::get(url).await.unwrap();
    let status = res.status().as_u16();
    let kind = res
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, kind, res.bytes().await.unwrap().to_vec())
}

#[tokio::test]
async fn a_vmc_is_validated_hosted_served_and_followed() {
    let (dns, app, s) = start().await;
    // The fixture's reference time: cnn.pem is valid then (it expired in August 2022).
    app.clock
        .set(OffsetDateTime::parse("2022-07-09T08:30:14Z", &Rfc3339).unwrap());
    dns.add_zone(Zone::new("cnn.com").ns("@", "ns1.cnn.com."))
        .unwrap();
    let domain = add_domain(&app, &s.key, "cnn.com").await;
    let id = domain["id"].as_str().unwrap().to_owned();
    assert_eq!(domain["managed_dns_status"]["bimi"], "unknown");

    let cnn = pem("vmc/cnn.pem");
    let (status, assets) = upload(&app, &s.key, &id, json!({"certificate_pem": cnn})).await;
    assert_eq!(status, 200, "{assets}");
    assert_eq!(assets["chain_verified"], true);
    assert_eq!(assets["logotype_verified"], true);
    assert_eq!(assets["san_verified"], true);
    assert_eq!(assets["svg_profile"], "tiny-ps");
    assert_eq!(assets["chain_length"], 3);
    assert_eq!(assets["chain_repaired"], false);
    assert!(
        assets["trust_anchor"]
            .as_str()
            .unwrap()
            .contains("DigiCert"),
        "{assets}"
    );
    assert_eq!(assets["warnings"], json!(["vmc-mark-type-oid-missing"]));
    assert_eq!(assets["cert"]["not_after"], "2022-08-12T23:59:59Z");
    assert_eq!(assets["not_after"], "2022-08-12T23:59:59Z");
    let logo_url = assets["logo_url"].as_str().unwrap().to_owned();
    let cert_url = assets["certificate_url"].as_str().unwrap().to_owned();
    assert!(
        logo_url.contains("/bimi/cnn.com/") && logo_url.ends_with("/logo.svg"),
        "{logo_url}"
    );
    let target = format!("{}.bimi.{HOSTED_ZONE}", owner(&id, "cnn.com"));
    assert_eq!(
        assets["record"],
        json!({"host": "default._bimi.cnn.com", "type": "CNAME", "value": target})
    );
    let view = &assets["domain"];
    assert_eq!(view["is_bimi_managed"], true);
    assert_eq!(view["managed_dns_status"]["bimi"], "syncing");
    assert_eq!(view["bimi_options"]["logo"], logo_url.as_str());
    assert_eq!(view["bimi_options"]["certificate"], cert_url.as_str());
    assert_eq!(view["bimi_cname_target"], target.as_str());
    let txt = format!("v=BIMI1; l={logo_url}; a={cert_url}");
    assert_eq!(view["bimi_txt_value"], txt.as_str());
    assert_eq!(served_txt(&app, &target).await.unwrap(), [txt]);

    // The records guidance plans the CNAME.
    let planned = crate::common::planned(&app, &s.key, &id, "bimi").await;
    let planned = &planned[0];
    assert_eq!(
        (planned["type"].as_str(), planned["value"].as_str()),
        (Some("CNAME"), Some(target.as_str()))
    );

    // The hosted files are public, with their media types; the logo is the certificate's.
    let (status, kind, logo) = fetch(&logo_url).await;
    assert_eq!((status, kind.as_str()), (200, "image/svg+xml"));
    assert_eq!(logo, fixture("svg/from-vmc/cnn.svg"));
    let (status, kind, chain) = fetch(&cert_url).await;
    assert_eq!((status, kind.as_str()), (200, "application/x-pem-file"));
    assert_eq!(
        String::from_utf8(chain)
            .unwrap()
            .matches("BEGIN CERTIFICATE")
            .count(),
        2
    );
    assert_eq!(
        fetch(&logo_url.replace("logo.svg", "other.txt")).await.0,
        404
    );
    assert_eq!(fetch(&app.url("/bimi/cnn.com/0000/logo.svg")).await.0, 404);

    // The same PEM gives the same URLs, as JSON or as a multipart file part.
    let (_, again) = upload(
        &app,
        &s.key,
        &id,
        json!({"certificate_pem": pem("vmc/cnn.pem")}),
    )
    .await;
    assert_eq!(again["logo_url"], logo_url.as_str());
    let form = reqwest::multipart::Form::new().part(
        "certificate",
        reqwest::multipart::Part::bytes(fixture("vmc/cnn.pem")).file_name("cnn.pem"),
    );
    let res = app
        .with_key(Method::POST, &format!("/domains/{id}/bimi/assets"), &s.key)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let multipart: Value = res.json().await.unwrap();
    assert_eq!(multipart["certificate_url"], cert_url.as_str());

    // The customer's own BIMI TXT where the CNAME belongs: record_conflict.
    dns.set_txt(
        "default._bimi.cnn.com",
        "v=BIMI1; l=https://logo.example/cnn.svg",
    )
    .unwrap();
    next_pass_and_reconcile(&app).await;
    let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(read["bimi_error_reason"], "record_conflict", "{read}");
    dns.remove("default._bimi.cnn.com", None).unwrap();

    // The customer's CNAME: ready, with the event.
    dns.set(
        "default._bimi.cnn.com",
        RecordType::Cname,
        vec![RecordData::Cname(format!("{target}."))],
    )
    .unwrap();
    next_pass_and_reconcile(&app).await;
    let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(read["managed_dns_status"]["bimi"], "ready", "{read}");
    assert_eq!(
        hosted_events(&app).await,
        [
            ("domain.hosted_record.error".to_owned(), "bimi".to_owned()),
            ("domain.hosted_record.ready".to_owned(), "bimi".to_owned())
        ]
    );
    // The certificate expires: error, certificate_invalid.
    app.clock
        .set(OffsetDateTime::parse("2022-08-14T00:00:00Z", &Rfc3339).unwrap());
    next_pass_and_reconcile(&app).await;
    let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(read["managed_dns_status"]["bimi"], "error");
    assert_eq!(read["bimi_error_reason"], "certificate_invalid");
    assert!(
        outbox_events(&app)
            .await
            .iter()
            .any(|e| e["type"] == "domain.hosted_record.error")
    );
}

#[tokio::test]
async fn refusals_are_named_and_store_nothing() {
    let (_dns, app, s) = start().await;
    app.clock
        .set(OffsetDateTime::parse("2022-07-09T08:30:14Z", &Rfc3339).unwrap());
    let domain = add_domain(&app, &s.key, "client.test").await;
    let id = domain["id"].as_str().unwrap().to_owned();
    let cnn = pem("vmc/cnn.pem");
    let keyed = cnn.clone() + &pem("vmc/postal_vmc.key");
    for (bundle, reason) in [
        (keyed.as_str(), "contains_private_key"),
        (cnn.as_str(), "san_mismatch"),
        (&pem("vmc/catchall.delivery.pem") as &str, "not_a_vmc"),
        ("this is not a certificate", "pem_parse_failed"),
    ] {
        let (status, error) = upload(&app, &s.key, &id, json!({"certificate_pem": bundle})).await;
        assert_eq!(status, 422, "{reason}: {error}");
        assert_eq!(error["code"], "bimi_certificate_invalid", "{error}");
        assert_eq!(error["details"]["reason"], reason, "{error}");
    }
    for (body, param) in [
        (json!({"certificate_pem": ""}), "certificate_pem"),
        (json!({}), "certificate_pem"),
        (
            json!({"certificate_pem": cnn, "certificate_url": "https://example.com/a.pem"}),
            "certificate_pem",
        ),
        (
            json!({"certificate_url": "http://example.com/a.pem"}),
            "certificate_url",
        ),
        (
            json!({"certificate_url": "https://10.0.0.1/a.pem"}),
            "certificate_url",
        ),
        (
            json!({"certificate_url": "https://127.0.0.1/a.pem"}),
            "certificate_url",
        ),
        (
            json!({"certificate_pem": "x".repeat(300 * 1024)}),
            "certificate_pem",
        ),
        (json!({"certificate_pem": 5}), "certificate_pem"),
        (json!({"logo": "x"}), "logo"),
    ] {
        let (status, error) = upload(&app, &s.key, &id, body.clone()).await;
        assert_eq!(status, 400, "{error}");
        assert_eq!(error["param"], param, "{error}");
    }
    // A 5 MB PEM is over the request limit.
    let (status, error) = upload(
        &app,
        &s.key,
        &id,
        json!({"certificate_pem": "x".repeat(5 * 1024 * 1024)}),
    )
    .await;
    assert_eq!(
        (status, error["code"].as_str()),
        (413, Some("payload_too_large")),
        "{error}"
    );
    let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(read["is_bimi_managed"], false);
    assert!(read["bimi_options"]["logo"].is_null());
}
