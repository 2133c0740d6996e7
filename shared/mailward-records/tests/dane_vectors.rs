//! DANE TLSA vectors made with OpenSSL (`tests/fixtures/dane`): records generated for a test
//! certificate match it, one generated for another certificate does not, malformed ones are
//! flagged and never match.

use base64::Engine as _;
use mailward_records::dane::{Tlsa, recommended_for};
use std::path::PathBuf;

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/dane")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

fn der(pem: &str) -> Vec<u8> {
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap()
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn openssl_vectors_match_mismatch_and_are_flagged_when_malformed() {
    let mx = der(&fixture("mx.pem"));
    let other = der(&fixture("other.pem"));
    let mut seen = 0;
    for line in fixture("tlsa-vectors.txt").lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let tlsa = Tlsa {
            usage: f[0].parse().unwrap(),
            selector: f[1].parse().unwrap(),
            matching: f[2].parse().unwrap(),
            data: hex(f[3]),
        };
        match f[4] {
            "match" => {
                assert!(tlsa.problems().is_empty(), "{line}: {:?}", tlsa.problems());
                assert!(tlsa.matches(std::slice::from_ref(&mx)), "{line}");
                assert!(!tlsa.matches(std::slice::from_ref(&other)), "{line}");
            }
            "mismatch" => {
                assert!(tlsa.is_usable(), "{line}");
                assert!(!tlsa.matches(std::slice::from_ref(&mx)), "{line}");
                assert!(tlsa.matches(std::slice::from_ref(&other)), "{line}");
            }
            "malformed" => {
                assert!(!tlsa.problems().is_empty(), "{line}");
                assert!(!tlsa.matches(std::slice::from_ref(&mx)), "{line}");
            }
            other => panic!("unknown verdict {other}"),
        }
        seen += 1;
    }
    assert_eq!(seen, 9);
    // The recommended record for the certificate is the first vector (3 1 1).
    let first = fixture("tlsa-vectors.txt")
        .lines()
        .find(|l| l.starts_with("3 1 1"))
        .unwrap()
        .to_owned();
    assert!(first.starts_with(&recommended_for(&mx).unwrap().presentation()));
}

#[test]
fn dane_ta_matches_a_certificate_of_the_chain_but_dane_ee_only_the_leaf() {
    let mx = der(&fixture("mx.pem"));
    let other = der(&fixture("other.pem"));
    let mut ta = recommended_for(&other).unwrap();
    ta.usage = 2;
    let chain = vec![mx.clone(), other.clone()];
    assert!(ta.matches(&chain));
    let mut ee = ta.clone();
    ee.usage = 3;
    assert!(!ee.matches(&chain));
    assert!(!ta.matches(&[]));
}
