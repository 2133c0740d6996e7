//! Shared fixture world for the audit tests and the latency example.
#![allow(dead_code)]

use async_trait::async_trait;
use mailward_audit::{AuditInput, FetchError, PolicyFetcher};
use mailward_dns_fixture::Zone;
use std::collections::HashMap;

/// A 2048-bit RSA public key (SPKI, base64).
pub const KEY_2048: &str = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAr+yaDax+Q7JKiRtEo58HVYrEsK1CcE/oKY6ASKvlKs+bLLytOuCzHO4IfFFePMldibGJioOAZxXG69tEFPU6iTzVyoPTmHsyTume1KxOO1IudivAfC0PmtH5m6Thg74u00utR1PgFkxA5f4CZeRoeY57Px0EHB+6tBlAM3NcyD7H+fo/L5C/HLNgto5H8KWyfkbc4Lh03oQOUKim1ZtPpCbCvPYB6MKT8izpwf5VSBmKc0JVaRuZrALxY/o+DajzCq3igOtMOczwlNKxxfAIn8UpPIdGQvBUguomF939xRKGWabehBezWSLNdwmxUSnLRm0Mb3ufnRsKzZK9df6uWwIDAQAB";
/// A 1024-bit RSA public key (SPKI, base64): weak.
pub const KEY_1024: &str = "MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCbPsEmNCidIobSwiUIqawIH939MOHg0OH1VQihbjPIrrsU+i+uYpNurp0J+17SWuVg/u1wQy/xVgQplw0lux6wDZe+NlwdjVGjL9trG4gHktuIzLA9giEX1bti4LLuNdVQqTKG+sWAumOcEV3w18mKp4EZ4N9FqLpvQRlUdSYcrwIDAQAB";

/// The test double of the policy fetcher: fixed answers per domain, NotFound otherwise.
#[derive(Default)]
pub struct FakeFetcher {
    pub policies: HashMap<String, Result<String, FetchError>>,
}

#[async_trait]
impl PolicyFetcher for FakeFetcher {
    async fn fetch_mta_sts_policy(&self, domain: &str) -> Result<String, FetchError> {
        self.policies
            .get(domain)
            .cloned()
            .unwrap_or(Err(FetchError::NotFound))
    }
}

pub fn policy(mode: &str, mx: &str) -> String {
    format!("version: STSv1\r\nmode: {mode}\r\nmx: {mx}\r\nmax_age: 604800\r\n")
}

pub fn fetcher() -> FakeFetcher {
    let mut f = FakeFetcher::default();
    f.policies
        .insert("good.test".into(), Ok(policy("enforce", "mx1.good.test")));
    f.policies.insert(
        "typical.test".into(),
        Ok(policy("enforce", "*.typical.test")),
    );
    f.policies.insert(
        "testing.test".into(),
        Ok(policy("testing", "mx1.testing.test")),
    );
    f
}

/// A fully protected domain in zone `origin` (records relative to it).
pub fn protected(origin: &str) -> Zone {
    protected_with(
        origin,
        &format!("v=DMARC1; p=reject; rua=mailto:dmarc@{origin}"),
    )
}

/// Like [`protected`] with another DMARC record.
pub fn protected_with(origin: &str, dmarc: &str) -> Zone {
    Zone::new(origin)
        .ns("@", &format!("ns1.{origin}."))
        .mx("@", 10, &format!("mx1.{origin}."))
        .a("mx1", "192.0.2.10")
        .txt("@", "v=spf1 include:_spf.provider.test -all")
        .txt("_dmarc", dmarc)
        .txt("sel1._domainkey", &format!("v=DKIM1; k=rsa; p={KEY_2048}"))
        .txt(
            "default._bimi",
            &format!("v=BIMI1; l=https://{origin}/logo.svg; a=https://{origin}/vmc.pem"),
        )
        .txt("_mta-sts", "v=STSv1; id=20240101")
        .txt(
            "_smtp._tls",
            &format!("v=TLSRPTv1; rua=mailto:tls@{origin}"),
        )
}

/// Every zone the tests use.
pub fn zones() -> Vec<Zone> {
    vec![
        Zone::new("test").ns("@", "ns1.test."),
        Zone::new("provider.test")
            .ns("@", "ns1.provider.test.")
            .txt(
                "_spf",
                "v=spf1 ip4:192.0.2.0/24 include:_spf2.provider.test -all",
            )
            .txt("_spf2", "v=spf1 ip4:198.51.100.0/24 -all"),
        Zone::new("mailward.test")
            .ns("@", "ns1.mailward.test.")
            .txt("typical.test._report._dmarc.reports", "v=DMARC1")
            .txt(
                "good.dmarc",
                "v=DMARC1; p=reject; rua=mailto:dmarc@good.test",
            ),
        protected("good.test"),
        // A typical domain: external report destination, two MX hosts, nested SPF include.
        Zone::new("typical.test")
            .ns("@", "ns1.typical.test.")
            .mx("@", 10, "mx1.typical.test.")
            .mx("@", 20, "mx2.typical.test.")
            .a("mx1", "192.0.2.11")
            .a("mx2", "192.0.2.12")
            .aaaa("mx2", "2001:db8::12")
            .txt("@", "v=spf1 mx include:_spf.provider.test -all")
            .txt(
                "_dmarc",
                "v=DMARC1; p=reject; rua=mailto:agg@reports.mailward.test",
            )
            .txt("sel1._domainkey", &format!("v=DKIM1; k=rsa; p={KEY_2048}"))
            .txt(
                "default._bimi",
                "v=BIMI1; l=https://typical.test/logo.svg; a=https://typical.test/vmc.pem",
            )
            .txt("_mta-sts", "v=STSv1; id=1")
            .txt("_smtp._tls", "v=TLSRPTv1; rua=mailto:tls@typical.test"),
        Zone::new("bare.test")
            .ns("@", "ns1.bare.test.")
            .mx("@", 10, "mx1.bare.test.")
            .a("mx1", "192.0.2.20"),
        Zone::new("parked.test")
            .ns("@", "ns1.parked.test.")
            .mx("@", 0, ".")
            .txt("@", "v=spf1 -all")
            .txt("_dmarc", "v=DMARC1; p=reject; rua=mailto:d@parked.test"),
        Zone::new("sedo.test")
            .ns("@", "ns1.sedoparking.com.")
            .mx("@", 10, "mx1.sedo.test.")
            .a("mx1", "192.0.2.30"),
        protected_with(
            "monitor.test",
            "v=DMARC1; p=none; rua=mailto:dmarc@monitor.test",
        ),
        protected("testing.test"),
        Zone::new("weak.test")
            .ns("@", "ns1.weak.test.")
            .txt("sel1._domainkey", &format!("v=DKIM1; k=rsa; p={KEY_1024}")),
        Zone::new("revoked.test")
            .ns("@", "ns1.revoked.test.")
            .txt("sel1._domainkey", "v=DKIM1; k=rsa; p="),
        Zone::new("hosted.test")
            .ns("@", "ns1.hosted.test.")
            .cname("_dmarc", "good.dmarc.mailward.test."),
    ]
}

pub fn input(domain: &str) -> AuditInput {
    AuditInput {
        domain: domain.to_string(),
        email: Some("lead@example.com".to_string()),
        dkim_selectors: Some(vec!["google".into(), "sel1".into(), "selector1".into()]),
        extra_selectors: Vec::new(),
        hosted_dmarc_suffix: Some("dmarc.mailward.test".to_string()),
    }
}
