//! Records are attacker-controlled: every parser must return (never panic) on arbitrary text.
//! A deterministic generator builds inputs from record-ish fragments, multi-byte characters and
//! control bytes, and mutates the vectors.

use mailward_records::{bimi, dkim, mta_sts, mx, tls_rpt};

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        let i = usize::try_from(self.next() % items.len() as u64).unwrap_or(0);
        items[i]
    }
}

const FRAGMENTS: &[&str] = &[
    "v=",
    "DKIM1",
    "BIMI1",
    "STSv1",
    "TLSRPTv1",
    ";",
    "=",
    ":",
    ",",
    " ",
    "\t",
    "\r\n",
    "\n",
    "p=",
    "k=",
    "ed25519",
    "rsa",
    "h=",
    "sha1",
    "s=",
    "t=",
    "y",
    "l=",
    "a=",
    "avp=",
    "https://",
    "http://",
    "mailto:",
    "@",
    "example.com",
    ".svg",
    "*.",
    ".",
    "mx:",
    "mode:",
    "max_age:",
    "version:",
    "enforce",
    "99999999999",
    "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA",
    "AQAB",
    "==",
    "é",
    "\u{0}",
    "\u{7f}",
    "日本",
    "%",
    "[",
    "]",
    "::1",
    "192.0.2.1",
    "id=",
    "rua=",
    "\u{feff}",
];

#[test]
fn parsers_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..20_000 {
        let n = rng.next() % 24;
        let mut s = String::new();
        for _ in 0..n {
            s.push_str(rng.pick(FRAGMENTS));
        }
        let _ = dkim::parse(&s);
        let _ = bimi::parse(&s);
        let _ = bimi::parse_records(&[&s, &s]);
        let _ = mta_sts::parse_txt(&s);
        let _ = mta_sts::parse_policy(&s);
        let _ = mta_sts::mx_pattern_matches(&s, &s);
        let _ = mta_sts::check_mx_coverage(&[s.as_str()], &[s.as_str()]);
        let _ = mta_sts::generate(mta_sts::Mode::Enforce, &[s.as_str()], 86_400);
        let _ = tls_rpt::parse(&s);
        let _ = tls_rpt::generate(&[s.as_str()]);
        let _ = bimi::generate(&s, Some(&s));
        let _ = mx::check(&[mx::MxHost::new(0, &s)], &[s.as_str()]);
    }
}

#[test]
fn truncated_and_huge_keys_do_not_panic() {
    let key = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAoH0pHEVXpkoxhXxRP1JMA0Oh1hY552mY2xkBTdaVSpQrKS6Y47IBRM5XVuzWv0ZFQNn+GM/s9deXQWIcekxt/KjRVzlEx0ZBKQ1sw1Ek2MIHZaKh1T0FvNGc7uKvzg23RrN6fJI6bDYVYG5mB4uBX126V+jEIh0rzHuQWtI69LkuU7F4Npx5+IFctjONRgaUlq83cq6koWV4wkqHGHU4fLJRLyC30tVOoJNYSSImlo+aX1HGA4ZD/4XKaFjMWfVHWiPc7qksDOtGJGwuUZyCqNfQVHqHOlLtpc4HA6sgjnT0kRaTn3C/zyDOZ0x8QtnLm3wIAzn1ML9v8x2KLSdLXQIDAQAB";
    for end in 0..key.len() {
        let rec = dkim::parse(&format!("p={}", &key[..end]));
        if end > 0 && end < key.len() {
            assert!(!rec.is_usable(), "truncated at {end}");
        }
    }
    let huge = "A".repeat(200_000);
    assert!(!dkim::parse(&format!("p={huge}")).is_usable());
    let many = "v=BIMI1;".repeat(10_000);
    assert!(!bimi::parse(&many).is_valid());
    let lines = "mx: a.example\n".repeat(10_000);
    let _ = mta_sts::parse_policy(&lines);
}
