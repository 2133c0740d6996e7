//! The BIMI fixtures (tests/fixtures, copied from the shared fixtures with their SOURCES.md):
//! every suggested outcome of `vmc/expected.json` at its reference time, the derived cases,
//! and every hand-written and extracted SVG.

use mailward_bimi::{Reason, TrustStore, validate};
use serde_json::Value;
use std::path::PathBuf;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(dir().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn at(raw: Option<&str>) -> OffsetDateTime {
    OffsetDateTime::parse(raw.unwrap_or("2022-07-09T08:30:14Z"), &Rfc3339).unwrap()
}

fn reason(name: &str) -> Reason {
    serde_json::from_value::<String>(Value::String(name.into()))
        .ok()
        .and_then(|n| {
            [
                Reason::PemParseFailed,
                Reason::NotAVmc,
                Reason::LogotypeMissing,
                Reason::LogoHashMismatch,
                Reason::SvgNotTinyPs,
                Reason::IncompleteChain,
                Reason::ChainUntrusted,
                Reason::ChainExpired,
                Reason::ChainSignatureInvalid,
                Reason::CertificateNotYetValid,
                Reason::SanMismatch,
                Reason::ContainsPrivateKey,
            ]
            .into_iter()
            .find(|r| r.as_str() == n)
        })
        .unwrap_or_else(|| panic!("unknown reason {name}"))
}

#[test]
fn every_vmc_fixture_gives_its_expected_outcome() {
    let expected: Value = serde_json::from_slice(&read("vmc/expected.json")).unwrap();
    let store = TrustStore::builtin();
    let mut checked = 0;
    for (file, entry) in expected["files"].as_object().unwrap() {
        let pem = read(&format!("vmc/{file}"));
        let leaf_domain = entry["facts"]["certificates"][0]["san_dns"][0]
            .as_str()
            .map(|d| d.trim_start_matches("*.").to_owned());
        for case in entry["suggested"].as_array().unwrap() {
            let when = at(case["at"].as_str());
            let domain = case["domain"]
                .as_str()
                .map(str::to_owned)
                .or(leaf_domain.clone())
                .unwrap_or_else(|| "example.com".to_owned());
            let outcome = case["outcome"].as_str().unwrap();
            let result = validate(&pem, &domain, when, store);
            match outcome {
                "accept" | "accept_or_policy" => {
                    let ok = result.unwrap_or_else(|e| panic!("{file} at {when}: {e}"));
                    assert!(ok.chain_length >= 2, "{file}");
                    assert!(!ok.trust_anchor.is_empty(), "{file}");
                    assert!(
                        ok.chain_pem.starts_with("-----BEGIN CERTIFICATE-----"),
                        "{file}"
                    );
                    let serial = entry["facts"]["certificates"][0]["serial"]
                        .as_str()
                        .unwrap();
                    assert_eq!(ok.serial, serial, "{file}");
                    assert!(mailward_bimi::svg::check(&ok.logo_svg).is_ok(), "{file}");
                }
                "reject" => {
                    let err = result
                        .err()
                        .unwrap_or_else(|| panic!("{file} at {when} was accepted"));
                    assert_eq!(
                        err.reason,
                        reason(case["reason"].as_str().unwrap()),
                        "{file} at {when}: {err}"
                    );
                }
                other => panic!("unknown outcome {other}"),
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 14);
}

#[test]
fn the_accepted_facts_match() {
    let store = TrustStore::builtin();
    let cnn = validate(&read("vmc/cnn.pem"), "cnn.com", at(None), store).unwrap();
    assert_eq!(cnn.warnings, ["vmc-mark-type-oid-missing"]);
    assert!(!cnn.chain_repaired);
    assert_eq!(cnn.logo_svg, read("svg/from-vmc/cnn.svg"));
    // A subdomain of the certificate's domain is covered by it.
    assert!(validate(&read("vmc/cnn.pem"), "edition.cnn.com", at(None), store).is_ok());
    let gs = validate(
        &read("vmc/globalsign-vmc.pem"),
        "globalsign.com",
        at(Some("2025-04-21T11:15:01Z")),
        store,
    );
    let gs = gs.unwrap();
    assert_eq!(
        gs.common_name, None,
        "the GlobalSign leaf has no common name"
    );
    // The root of redshift.pem is not in the file: it comes from the trust store as the anchor.
    let red = validate(
        &read("vmc/redshift.pem"),
        "redsift.com",
        at(Some("2022-01-01T00:00:00Z")),
        store,
    )
    .unwrap();
    assert_eq!(red.chain_length, 3);
}

fn first_certificate(pem: &[u8]) -> String {
    let text = String::from_utf8_lossy(pem);
    let end = text.find("-----END CERTIFICATE-----").unwrap() + "-----END CERTIFICATE-----".len();
    text[text.find("-----BEGIN CERTIFICATE-----").unwrap()..end].to_owned() + "\n"
}

#[test]
fn derived_cases() {
    let store = TrustStore::builtin();
    let when = at(None);
    let cnn = read("vmc/cnn.pem");
    let leaf = first_certificate(&cnn);
    let reason_of = |pem: &[u8]| validate(pem, "cnn.com", when, store).unwrap_err().reason;
    // The leaf alone: its intermediate is not in the file nor in the store.
    assert_eq!(reason_of(leaf.as_bytes()), Reason::IncompleteChain);
    // The leaf with an unrelated self-signed certificate.
    let mixed = leaf.clone() + &String::from_utf8_lossy(&read("vmc/postal_vmc.pem"));
    assert!(matches!(
        reason_of(mixed.as_bytes()),
        Reason::IncompleteChain | Reason::ChainUntrusted
    ));
    // One character of the leaf's signature changed (near the end of its base64).
    let text = String::from_utf8_lossy(&cnn).into_owned();
    let end = text.find("-----END CERTIFICATE-----").unwrap();
    let mut bytes = text.into_bytes();
    let at = (end - 40..end)
        .rev()
        .find(|i| bytes[*i].is_ascii_alphabetic())
        .unwrap();
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    assert!(matches!(
        reason_of(&bytes),
        Reason::ChainSignatureInvalid | Reason::PemParseFailed
    ));
    // Nothing, or not PEM.
    assert_eq!(reason_of(b""), Reason::PemParseFailed);
    assert_eq!(
        reason_of(b"hello, this is not a certificate"),
        Reason::PemParseFailed
    );
    // A key appended to a good bundle.
    let keyed = [cnn.clone(), read("vmc/postal_vmc.key")].concat();
    assert_eq!(reason_of(&keyed), Reason::ContainsPrivateKey);
    // An empty store trusts nothing.
    let empty = TrustStore::from_pem(&[]);
    let untrusted = validate(&cnn, "cnn.com", when, &empty).unwrap_err().reason;
    assert!(
        matches!(untrusted, Reason::ChainUntrusted | Reason::IncompleteChain),
        "{untrusted:?}"
    );
    assert!(
        TrustStore::builtin().root_count() >= 5,
        "{}",
        TrustStore::builtin().root_count()
    );
}

#[test]
fn every_svg_fixture_gives_its_expected_outcome() {
    let expected: Value = serde_json::from_slice(&read("svg/handwritten/expected.json")).unwrap();
    for case in expected["files"].as_array().unwrap() {
        let file = case["file"].as_str().unwrap();
        let svg = read(&format!("svg/handwritten/{file}"));
        let result = mailward_bimi::svg::check(&svg);
        match case["expected"].as_str().unwrap() {
            "valid" => assert_eq!(result, Ok(Vec::new()), "{file}"),
            "warn" => assert!(
                !result.unwrap_or_else(|e| panic!("{file}: {e}")).is_empty(),
                "{file}"
            ),
            "invalid" => assert!(result.is_err(), "{file} was accepted"),
            other => panic!("{other}"),
        }
    }
    for file in [
        "cnn",
        "paypal_vmc",
        "xometry_cmc",
        "redshift",
        "globalsign-vmc",
    ] {
        let svg = read(&format!("svg/from-vmc/{file}.svg"));
        assert!(mailward_bimi::svg::check(&svg).is_ok(), "{file}");
    }
}
