//! One or more cases per DKIM problem code, plus key decoding. Test keys were generated with
//! OpenSSL for this test (public halves only; the private keys were discarded).

use mailward_records::dkim::{self, DkimCode, KeyType, PublicKey, RsaKeyFormat};
use mailward_records::{ProblemCode, Severity};
use std::collections::BTreeSet;

const RSA512: &str = "MFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBAO344839kvoDDjxl0Yrh7rN/1Rn+A/tEGE7t9mg80sdUE3DWJ7rq3jaFGy00qnQTzqbbHxI1sVzbRp2XqtUPt5kCAwEAAQ==";
const RSA1024: &str = "MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQClNSe7IZg8eNpNfgwZVMfQv7jbIEs1fqXHMhtMX9P/ATwDkHgZ99kEIc09ACSmBrbiLMdXekU9YDgViIoa66Q/OYizS6yCVtiYMWCnmD+MNAIcmfHmrXpiYqPGdWPy7Jkrk2Ak66Z8Xi5DWaMZ52MKKLLLvX4+Am3IibT79SQnvwIDAQAB";
const RSA1536: &str = "MIHfMA0GCSqGSIb3DQEBAQUAA4HNADCByQKBwQCxeZyCgnYnnuvVrPNc0Jh0vE4B6M1VCtwdDEHTJnsEwB1N26vb64pMAp2jPk3vC6zrb7iD7hxEDpRfu0+byq1106wyFAIvSybINIIySqYMLOrzllZrdRMMr5Wgs8GyQYNgr0nQ56KzpkUOeRuMuj0gNxcBjNxXbJvSfkpNSi2QcX40HAgPtre0u1YBhKchP83tgCs5yTHFRXu1uosySuNCZFB7lLIvjDZHgyIkrF9ZsP0P2KxCNNwOlrm29nta7fkCAwEAAQ==";
const RSA2048: &str = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAoH0pHEVXpkoxhXxRP1JMA0Oh1hY552mY2xkBTdaVSpQrKS6Y47IBRM5XVuzWv0ZFQNn+GM/s9deXQWIcekxt/KjRVzlEx0ZBKQ1sw1Ek2MIHZaKh1T0FvNGc7uKvzg23RrN6fJI6bDYVYG5mB4uBX126V+jEIh0rzHuQWtI69LkuU7F4Npx5+IFctjONRgaUlq83cq6koWV4wkqHGHU4fLJRLyC30tVOoJNYSSImlo+aX1HGA4ZD/4XKaFjMWfVHWiPc7qksDOtGJGwuUZyCqNfQVHqHOlLtpc4HA6sgjnT0kRaTn3C/zyDOZ0x8QtnLm3wIAzn1ML9v8x2KLSdLXQIDAQAB";
const RSA2048_PKCS1: &str = "MIIBCgKCAQEAoH0pHEVXpkoxhXxRP1JMA0Oh1hY552mY2xkBTdaVSpQrKS6Y47IBRM5XVuzWv0ZFQNn+GM/s9deXQWIcekxt/KjRVzlEx0ZBKQ1sw1Ek2MIHZaKh1T0FvNGc7uKvzg23RrN6fJI6bDYVYG5mB4uBX126V+jEIh0rzHuQWtI69LkuU7F4Npx5+IFctjONRgaUlq83cq6koWV4wkqHGHU4fLJRLyC30tVOoJNYSSImlo+aX1HGA4ZD/4XKaFjMWfVHWiPc7qksDOtGJGwuUZyCqNfQVHqHOlLtpc4HA6sgjnT0kRaTn3C/zyDOZ0x8QtnLm3wIAzn1ML9v8x2KLSdLXQIDAQAB";
const RSA4096: &str = "MIICIjANBgkqhkiG9w0BAQEFAAOCAg8AMIICCgKCAgEA8fLzKvnV68Dx5v5FBrvGIV64mnI25nBhqEblFYJBPBXFllO5S81ek4bJvFyi7v2TYqBr470YY56FeFCu02YyQf3c08K9AhPdW5SohmXtb4FBH9K6Ts0fhREiCtWjTvuydcXj/4BlXeckpaaoMZP46Jdcf34yodqIyNXy2DWMdPaKE1pn9ZnR2/F7norzt3RU0Lu//8j+CV7VBKifRk1N8JWTOok54UOEWQqN83Ff3o74ppMqCXWipEyt6Dw63f6zaOVP8vE6qm3+8P6imfGJ8Ni/2kp8GhaDgT/bBNEL89Dcu/PwldFbIqO2JoUe7mj8vX44Wjc8ohrKLrUxwb0FHdi/A42RJjbHIWBZJ57D3fINTNJ9Y5mwNw13mjYcu1HvDHe7XFqcrWqYCDuCwL3guFunDIPnfXit/APWx8ossB4eh1uPsqS7kLNB3US9KVC7jBe9ZK2hmq70r2ykolNr6813KQQT1qXUZVxKp/8sn+q5+QXgCQ0XN3EtbytsE4NkX/yux3vq2FSYs7rhKA3P8cAJc1JmKSUUYK0G68XbWVWiB0apABA6HYwF2Wxrikj/i0QnGuOmecOgiIA8ChvaTYj8vYuDIvgJo9hW5rkP1Pzu546B0DgArPgX316Pst/sEN1/5P+aCuAOHYBtbPYK6F7dAPnkmAHip4B+03GhKosCAwEAAQ==";
const ED25519_RAW: &str = "HoOKIyMdsCRxemUnKt8LkBhqVSsA+HfhoaJQ9aftFr8=";
const ED25519_SPKI: &str = "MCowBQYDK2VwAyEAHoOKIyMdsCRxemUnKt8LkBhqVSsA+HfhoaJQ9aftFr8=";
const EC_P256_SPKI: &str = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAErIxnWhap73k/5+gncyd3OABFWBz6EpSIgp9uaIsYk9aFwjqChL2znUKTmGeOQjNim93NlY6CLXFpFTvyXfuqGw==";

fn codes(record: &str) -> Vec<DkimCode> {
    dkim::parse(record)
        .problems
        .iter()
        .map(|p| p.code)
        .collect()
}

#[test]
fn key_lengths_and_formats() {
    let cases: [(&str, u32, RsaKeyFormat); 5] = [
        (RSA512, 512, RsaKeyFormat::Spki),
        (RSA1024, 1024, RsaKeyFormat::Spki),
        (RSA1536, 1536, RsaKeyFormat::Spki),
        (RSA2048, 2048, RsaKeyFormat::Spki),
        (RSA2048_PKCS1, 2048, RsaKeyFormat::Pkcs1),
    ];
    for (key, bits, format) in cases {
        let rec = dkim::parse(&format!("v=DKIM1; k=rsa; p={key}"));
        assert_eq!(rec.public_key, PublicKey::Rsa { bits, format }, "{bits}");
    }
    let rec = dkim::parse(&format!("v=DKIM1; p={RSA4096}"));
    assert_eq!(rec.key_bits(), Some(4096));
    assert!(rec.problems.is_empty(), "{:?}", rec.problems);
    assert!(rec.is_usable());
    assert_eq!(rec.key_type, KeyType::Rsa);
}

#[test]
fn clean_records_have_no_problems() {
    for r in [
        format!("v=DKIM1; k=rsa; p={RSA2048}"),
        format!("k=ed25519; p={ED25519_RAW}"),
        format!("v=DKIM1; h=sha256; s=email; t=s; n=hello world; p={RSA2048}"),
        format!("v=DKIM1; h=sha1:sha256; s=*:email; p={RSA2048}"),
    ] {
        let rec = dkim::parse(&r);
        assert!(rec.problems.is_empty(), "{r}: {:?}", rec.problems);
        assert!(rec.is_usable());
    }
}

#[test]
fn folding_whitespace_inside_p_and_around_tags() {
    let (a, b) = RSA2048.split_at(100);
    let (b, c) = b.split_at(150);
    let r = format!("v=DKIM1;\r\n\tk=rsa;\r\n p={a}\r\n {b} \t{c}  ");
    let rec = dkim::parse(&r);
    assert_eq!(rec.key_bits(), Some(2048), "{:?}", rec.problems);
    assert!(rec.problems.is_empty());
}

#[test]
fn base64_without_padding_is_accepted() {
    let unpadded = ED25519_RAW.trim_end_matches('=');
    let rec = dkim::parse(&format!("k=ed25519; p={unpadded}"));
    assert_eq!(rec.public_key, PublicKey::Ed25519, "{:?}", rec.problems);
}

#[test]
fn each_code() {
    let table: Vec<(String, DkimCode)> = vec![
        (format!("v=DKIM1; junk; p={RSA2048}"), DkimCode::SyntaxError),
        (format!("v=DKIM1; 1x=2; p={RSA2048}"), DkimCode::SyntaxError),
        (
            format!("v=DKIM1; k=rsa; k=rsa; p={RSA2048}"),
            DkimCode::DuplicateTag,
        ),
        (
            format!("k=rsa; v=DKIM1; p={RSA2048}"),
            DkimCode::VersionNotFirst,
        ),
        (format!("v=DKIM2; p={RSA2048}"), DkimCode::InvalidVersion),
        (format!("v=dkim1; p={RSA2048}"), DkimCode::InvalidVersion),
        ("v=DKIM1; k=rsa".to_string(), DkimCode::MissingPublicKey),
        ("v=DKIM1; k=rsa; p=".to_string(), DkimCode::KeyRevoked),
        ("v=DKIM1; p= \r\n ".to_string(), DkimCode::KeyRevoked),
        (
            format!("v=DKIM1; k=dsa; p={RSA2048}"),
            DkimCode::UnknownKeyType,
        ),
        (
            "v=DKIM1; p=not*base64!".to_string(),
            DkimCode::InvalidBase64,
        ),
        ("v=DKIM1; p=QUJD".to_string(), DkimCode::InvalidRsaKey),
        (
            format!("v=DKIM1; k=rsa; p={EC_P256_SPKI}"),
            DkimCode::InvalidRsaKey,
        ),
        (
            format!("v=DKIM1; k=rsa; p={ED25519_RAW}"),
            DkimCode::InvalidRsaKey,
        ),
        (format!("v=DKIM1; p={RSA512}"), DkimCode::RsaKeyTooShort),
        (format!("v=DKIM1; p={RSA1024}"), DkimCode::RsaKeyWeak),
        (format!("v=DKIM1; p={RSA1536}"), DkimCode::RsaKeyWeak),
        (
            format!("v=DKIM1; k=ed25519; p={ED25519_SPKI}"),
            DkimCode::InvalidEd25519Key,
        ),
        (
            format!("v=DKIM1; k=ed25519; p={RSA2048}"),
            DkimCode::InvalidEd25519Key,
        ),
        (format!("v=DKIM1; h=sha1; p={RSA2048}"), DkimCode::Sha1Only),
        (
            format!("v=DKIM1; h=sha512; p={RSA2048}"),
            DkimCode::NoSupportedHash,
        ),
        (
            format!("v=DKIM1; h=sha512; p={RSA2048}"),
            DkimCode::UnknownHashAlgorithm,
        ),
        (
            format!("v=DKIM1; h=sha256:md5; p={RSA2048}"),
            DkimCode::UnknownHashAlgorithm,
        ),
        (
            format!("v=DKIM1; s=tlsrpt; p={RSA2048}"),
            DkimCode::NotForEmail,
        ),
        (
            format!("v=DKIM1; s=email:tlsrpt; p={RSA2048}"),
            DkimCode::UnknownServiceType,
        ),
        (format!("v=DKIM1; t=y; p={RSA2048}"), DkimCode::TestingMode),
        (
            format!("v=DKIM1; t=y:x; p={RSA2048}"),
            DkimCode::UnknownFlag,
        ),
    ];
    let mut seen = BTreeSet::new();
    for (record, code) in &table {
        let got = codes(record);
        assert!(got.contains(code), "{record}: expected {code}, got {got:?}");
        seen.insert(*code);
    }
    for code in DkimCode::ALL {
        assert!(seen.contains(code), "no test case for {code}");
    }
}

#[test]
fn severities_and_usability() {
    assert_eq!(DkimCode::RsaKeyTooShort.severity(), Severity::Error);
    assert_eq!(DkimCode::RsaKeyWeak.severity(), Severity::Warning);
    assert_eq!(DkimCode::Sha1Only.severity(), Severity::Error);
    let revoked = dkim::parse("v=DKIM1; p=");
    assert_eq!(revoked.public_key, PublicKey::Revoked);
    assert!(!revoked.is_usable(), "a revoked key verifies nothing");
    let weak = dkim::parse(&format!("p={RSA1024}"));
    assert!(weak.is_usable(), "1024 bits is still accepted by verifiers");
    let short = dkim::parse(&format!("p={RSA512}"));
    assert!(!short.is_usable());
    let testing = dkim::parse(&format!("t=y; p={RSA2048}"));
    assert!(testing.is_testing() && testing.is_usable());
    let dup = dkim::parse(&format!("v=DKIM1; p={RSA512}; p={RSA2048}"));
    assert_eq!(
        dup.key_bits(),
        Some(512),
        "the first of duplicate tags is reported"
    );
}

#[test]
fn serializes_codes_as_snake_case() {
    let rec = dkim::parse("v=DKIM1; k=rsa; p=");
    let json = serde_json::to_value(&rec).expect("json");
    assert_eq!(json["problems"][0]["code"], "key_revoked");
    assert_eq!(json["problems"][0]["severity"], "warning");
    assert_eq!(json["public_key"]["kind"], "revoked");
    assert_eq!(json["key_type"], "rsa");
    for c in DkimCode::ALL {
        let s = c.as_str();
        assert!(
            s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "{s}"
        );
    }
}
