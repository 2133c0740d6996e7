//! `check_host()` behaviour beyond the RFC suites: outputs, counts and LESSONS.md cases.

mod common;

use common::FakeResolver;
use mailward_spf::{ProblemCode, Qualifier, SpfRequest, SpfResult, check_host};

fn request(ip: &str, mail_from: &str) -> SpfRequest {
    SpfRequest::mail_from(ip.parse().unwrap(), mail_from, "mail.sender.example")
}

#[tokio::test]
async fn percent_d_is_the_current_include_domain_not_the_sender_domain() {
    let mut zone = FakeResolver::default();
    zone.txt("example.com", "v=spf1 include:spf.provider.example -all");
    zone.txt(
        "spf.provider.example",
        "v=spf1 exists:%{i}._allow.%{d} -all",
    );
    zone.a("192.0.2.7._allow.spf.provider.example", "127.0.0.2");
    // A trap: the same name under the sender's domain must not be consulted.
    zone.a("192.0.2.8._allow.example.com", "127.0.0.2");
    let pass = check_host(&zone, &request("192.0.2.7", "user@example.com")).await;
    assert_eq!(pass.result, SpfResult::Pass);
    let matched = pass.matched.unwrap();
    assert_eq!(matched.term, "include:spf.provider.example");
    assert_eq!(matched.domain, "example.com");
    assert_eq!(pass.dns_lookups, 2);
    let fail = check_host(&zone, &request("192.0.2.8", "user@example.com")).await;
    assert_eq!(fail.result, SpfResult::Fail);
    assert_eq!(fail.matched.unwrap().qualifier, Qualifier::Fail);
}

#[tokio::test]
async fn mx_costs_one_lookup_and_void_is_counted_once() {
    let mut zone = FakeResolver::default();
    zone.txt("example.com", "v=spf1 a:gone.example.com mx -all");
    for (i, host) in ["mx1.example.com", "mx2.example.com", "mx3.example.com"]
        .iter()
        .enumerate()
    {
        zone.mx("example.com", u16::try_from(i).unwrap(), host);
        zone.a(host, &format!("192.0.2.{}", i + 1));
    }
    let outcome = check_host(&zone, &request("192.0.2.3", "user@example.com")).await;
    assert_eq!(outcome.result, SpfResult::Pass);
    assert_eq!(outcome.dns_lookups, 2);
    assert_eq!(outcome.void_lookups, 1);
}

#[tokio::test]
async fn timeouts_are_temperror_never_none() {
    let mut zone = FakeResolver::default();
    zone.timeout("example.com");
    zone.txt("inc.example", "v=spf1 include:example.com -all");
    zone.txt("a.example", "v=spf1 a:example.com -all");
    for domain in ["example.com", "inc.example", "a.example"] {
        let outcome = check_host(&zone, &request("192.0.2.1", &format!("u@{domain}"))).await;
        assert_eq!(outcome.result, SpfResult::TempError, "{domain}");
        assert_eq!(outcome.error.unwrap().code, ProblemCode::DnsTemporaryError);
    }
}

#[tokio::test]
async fn errors_carry_a_precise_problem() {
    let mut zone = FakeResolver::default();
    zone.txt("syntax.example", "v=spf1 a:museum -all");
    zone.txt("inc.example", "v=spf1 include:nothing.example -all");
    zone.txt("nothing.example", "v=spf1x");
    let syntax = check_host(&zone, &request("192.0.2.1", "u@syntax.example")).await;
    assert_eq!(syntax.result, SpfResult::PermError);
    let problem = syntax.error.unwrap();
    assert_eq!(problem.code, ProblemCode::SyntaxError);
    assert!(
        problem.message.starts_with("invalid_domain_spec"),
        "{}",
        problem.message
    );
    let include = check_host(&zone, &request("192.0.2.1", "u@inc.example")).await;
    assert_eq!(
        include.error.unwrap().code,
        ProblemCode::IncludeTargetWithoutSpf
    );
}

#[tokio::test]
async fn explanation_uses_exp_and_sender_values() {
    let mut zone = FakeResolver::default();
    zone.txt("example.com", "v=spf1 -all exp=why.example.com");
    zone.txt(
        "why.example.com",
        "%{i} may not send for %{o} (receiver %{r}, sender %{s})",
    );
    let req = request("192.0.2.9", "bob@example.com").with_receiver("mx.receiver.example");
    let outcome = check_host(&zone, &req).await;
    assert_eq!(outcome.result, SpfResult::Fail);
    assert_eq!(
        outcome.explanation.as_deref(),
        Some(
            "192.0.2.9 may not send for example.com (receiver mx.receiver.example, sender bob@example.com)"
        )
    );
}

#[tokio::test]
async fn helo_identity_and_ipv4_mapped_clients() {
    let mut zone = FakeResolver::default();
    zone.txt("mail.sender.example", "v=spf1 ip4:192.0.2.0/24 -all");
    let helo = SpfRequest::helo("::ffff:192.0.2.10".parse().unwrap(), "mail.sender.example");
    let outcome = check_host(&zone, &helo).await;
    assert_eq!(outcome.result, SpfResult::Pass);
    assert_eq!(outcome.domain, "mail.sender.example");
}

#[tokio::test]
async fn hostile_records_terminate() {
    let mut zone = FakeResolver::default();
    // A self-include, a long macro chain and a wide fan-out all end within the limits.
    zone.txt("loop.example", "v=spf1 include:loop.example -all");
    zone.txt(
        "macro.example",
        &format!(
            "v=spf1 exists:{}x.example -all",
            "%{s}%{s}%{s}%{s}.".repeat(20)
        ),
    );
    let fan: Vec<String> = (0..30).map(|i| format!("include:f{i}.example")).collect();
    zone.txt("fan.example", &format!("v=spf1 {} -all", fan.join(" ")));
    for i in 0..30 {
        zone.txt(
            &format!("f{i}.example"),
            &format!("v=spf1 {} -all", fan.join(" ")),
        );
    }
    let looped = check_host(&zone, &request("192.0.2.1", "u@loop.example")).await;
    assert_eq!(looped.result, SpfResult::PermError);
    assert_eq!(looped.error.unwrap().code, ProblemCode::LookupLimitExceeded);
    let long_sender = format!("{}@macro.example", "x".repeat(60));
    let macro_outcome = check_host(&zone, &request("192.0.2.1", &long_sender)).await;
    assert_eq!(macro_outcome.result, SpfResult::Fail);
    let fan_outcome = check_host(&zone, &request("192.0.2.1", "u@fan.example")).await;
    assert_eq!(fan_outcome.result, SpfResult::PermError);
    assert_eq!(fan_outcome.dns_lookups, 11);
}

/// The HTTP layer runs these on a multi-threaded runtime: their futures must be `Send`.
#[test]
fn futures_are_send() {
    fn assert_send<T: Send>(_: &T) {}
    let zone = FakeResolver::default();
    let req = request("192.0.2.1", "u@example.com");
    assert_send(&check_host(&zone, &req));
    assert_send(&mailward_spf::audit_domain(&zone, "example.com"));
    assert_send(&mailward_spf::audit_record(
        &zone,
        "example.com",
        "v=spf1 -all",
    ));
}
