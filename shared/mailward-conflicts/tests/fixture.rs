//! Conflict detection against in-process authoritative DNS servers: 127.0.0.1 plays the
//! recursive resolver, 127.0.0.2 and 127.0.0.3 the domain's nameservers (ns1, ns2), 127.0.0.4
//! and 127.0.0.5 two public resolvers.

use async_trait::async_trait;
use mailward_conflicts::{
    ConflictInput, ConflictKind, DirectDns, Protocol, ResolverAnswer, detect,
};
use mailward_dns::HickoryResolver;
use mailward_dns_fixture::{Fault, FixtureServer, Scope, Zone};
use mailward_domain::dns::{Answer, DnsError, RecordData, RecordType};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const DOMAIN: &str = "example.test";

fn ip(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
}

/// The zone every server starts from: NS delegation to ns1/ns2, one SPF record.
fn base() -> Zone {
    Zone::new(DOMAIN)
        .ns("@", "ns1")
        .ns("@", "ns2")
        .a("ns1", "127.0.0.2")
        .a("ns2", "127.0.0.3")
        .txt("@", "v=spf1 -all")
}

fn healthy() -> Zone {
    base().txt("_dmarc", "v=DMARC1; p=reject")
}

struct Env {
    recursive: FixtureServer,
    ns1: FixtureServer,
    ns2: FixtureServer,
    publics: Vec<FixtureServer>,
    resolver: HickoryResolver,
    input: ConflictInput,
}

impl Env {
    /// The recursive stand-in serves `zone` (plus the hosted zone), both nameservers serve
    /// `zone` unless `ns2_zone` is given; no public resolvers.
    async fn new(zone: Zone, ns2_zone: Option<Zone>) -> Result<Self, Box<dyn std::error::Error>> {
        let hosted = Zone::new("mailward.test").txt("example.test.dmarc", "v=DMARC1; p=none");
        let recursive = FixtureServer::start_on(ip(1), vec![zone.clone(), hosted]).await?;
        let ns1 = FixtureServer::start_on(ip(2), vec![zone.clone()]).await?;
        let ns2 = FixtureServer::start_on(ip(3), vec![ns2_zone.unwrap_or(zone)]).await?;
        let resolver = recursive.resolver()?;
        let mut input = ConflictInput::new(DOMAIN);
        input.nameserver_ports = vec![(ip(2), ns1.addr().port()), (ip(3), ns2.addr().port())];
        input.query_timeout = Duration::from_secs(3);
        Ok(Self {
            recursive,
            ns1,
            ns2,
            publics: Vec::new(),
            resolver,
            input,
        })
    }

    /// Adds two public resolvers serving these zones.
    async fn with_publics(
        mut self,
        first: Zone,
        second: Zone,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let a = FixtureServer::start_on(ip(4), vec![first]).await?;
        let b = FixtureServer::start_on(ip(5), vec![second]).await?;
        self.input.public_resolvers = vec![("one".into(), a.addr()), ("two".into(), b.addr())];
        self.publics = vec![a, b];
        Ok(self)
    }

    async fn run(&self) -> Vec<mailward_conflicts::Conflict> {
        detect(&self.resolver, &self.resolver, &self.input).await
    }
}

fn kinds(conflicts: &[mailward_conflicts::Conflict]) -> Vec<(String, ConflictKind)> {
    conflicts
        .iter()
        .map(|c| (c.label.clone(), c.kind))
        .collect()
}

#[tokio::test]
async fn healthy_domain_has_no_conflicts_and_bounded_queries() -> TestResult {
    let zone = healthy()
        .txt("s1._domainkey", "v=DKIM1; k=rsa; p=AAAA")
        .txt("default._bimi", "v=BIMI1; l=https://example.test/logo.svg");
    let mut env = Env::new(zone.clone(), None)
        .await?
        .with_publics(zone.clone(), zone)
        .await?;
    env.input.dkim_selectors = vec!["s1".into(), "s2".into()];
    let conflicts = env.run().await;
    assert_eq!(conflicts, vec![]);
    // 6 labels, a CNAME and a TXT question each, per server.
    assert!(env.ns1.query_count() <= 12, "{}", env.ns1.query_count());
    assert!(env.ns2.query_count() <= 12);
    for public in &env.publics {
        assert!(public.query_count() <= 12);
    }
    assert!(env.recursive.query_count() > 0);
    Ok(())
}

#[tokio::test]
async fn multiple_dmarc_records() -> TestResult {
    let zone = healthy().txt("_dmarc", "v=DMARC1; p=none");
    let env = Env::new(zone, None).await?;
    let conflicts = env.run().await;
    assert_eq!(
        kinds(&conflicts),
        vec![(
            "_dmarc.example.test".into(),
            ConflictKind::MultipleDmarcRecords
        )]
    );
    let c = &conflicts[0];
    assert_eq!(c.protocol, Protocol::Dmarc);
    assert_eq!(c.conflicting_records.len(), 2);
    assert!(
        c.conflicting_records
            .contains(&"v=DMARC1; p=none".to_owned())
    );
    assert!(c.rfc.contains("RFC"));
    assert_eq!(c.authoritative_nameservers.len(), 2);
    assert!(
        c.authoritative_nameservers
            .iter()
            .all(|n| n.answered && !n.timed_out)
    );
    assert_eq!(
        c.authoritative_nameservers[0].nameserver,
        "ns1.example.test"
    );
    assert_eq!(c.authoritative_nameservers[0].ip, "127.0.0.2");
    assert_eq!(c.authoritative_nameservers[0].txt.len(), 2);
    Ok(())
}

#[tokio::test]
async fn multiple_spf_records() -> TestResult {
    let zone = healthy().txt("@", "v=spf1 include:_spf.mail.test -all");
    let env = Env::new(zone, None).await?;
    let conflicts = env.run().await;
    assert_eq!(
        kinds(&conflicts),
        vec![("example.test".into(), ConflictKind::MultipleSpfRecords)]
    );
    assert_eq!(conflicts[0].protocol, Protocol::Spf);
    assert!(conflicts[0].rfc.contains("7208 §4.5"));
    Ok(())
}

#[tokio::test]
async fn multiple_bimi_records() -> TestResult {
    let zone = healthy()
        .txt("default._bimi", "v=BIMI1; l=https://example.test/a.svg")
        .txt("default._bimi", "v=BIMI1; l=https://example.test/b.svg");
    let env = Env::new(zone, None).await?;
    let conflicts = env.run().await;
    assert_eq!(
        kinds(&conflicts),
        vec![(
            "default._bimi.example.test".into(),
            ConflictKind::MultipleBimiRecords
        )]
    );
    Ok(())
}

#[tokio::test]
async fn cname_target_unresolvable() -> TestResult {
    let zone = base().cname("_dmarc", "gone");
    let env = Env::new(zone, None).await?;
    let conflicts = env.run().await;
    assert_eq!(
        kinds(&conflicts),
        vec![(
            "_dmarc.example.test".into(),
            ConflictKind::CnameTargetUnresolvable
        )]
    );
    assert_eq!(conflicts[0].conflicting_records, vec!["gone.example.test"]);
    assert!(conflicts[0].summary.contains("gone.example.test"));
    assert_eq!(
        conflicts[0].authoritative_nameservers[0].cname,
        vec!["gone.example.test"]
    );
    Ok(())
}

#[tokio::test]
async fn cname_chain_loop_is_too_deep() -> TestResult {
    let zone = base()
        .cname("_dmarc", "hop1")
        .cname("hop1", "hop2")
        .cname("hop2", "hop1");
    let env = Env::new(zone, None).await?;
    let conflicts = env.run().await;
    assert_eq!(
        kinds(&conflicts),
        vec![(
            "_dmarc.example.test".into(),
            ConflictKind::CnameChainTooDeep
        )]
    );
    assert!(conflicts[0].summary.contains("loops"));
    Ok(())
}

#[tokio::test]
async fn cname_chain_longer_than_allowed_is_too_deep() -> TestResult {
    let zone = base()
        .cname("_dmarc", "hop1")
        .cname("hop1", "hop2")
        .cname("hop2", "hop3")
        .txt("hop3", "v=DMARC1; p=none");
    let mut env = Env::new(zone, None).await?;
    env.input.max_cname_chain = 2;
    let conflicts = env.run().await;
    assert_eq!(
        kinds(&conflicts),
        vec![(
            "_dmarc.example.test".into(),
            ConflictKind::CnameChainTooDeep
        )]
    );
    assert_eq!(
        conflicts[0].conflicting_records,
        vec![
            "hop1.example.test",
            "hop2.example.test",
            "hop3.example.test"
        ]
    );
    // The same chain is fine with the default limit.
    env.input.max_cname_chain = 8;
    assert_eq!(env.run().await, vec![]);
    Ok(())
}

#[tokio::test]
async fn authoritative_disagreement() -> TestResult {
    let other = base().txt("_dmarc", "v=DMARC1; p=none");
    let env = Env::new(healthy(), Some(other)).await?;
    let conflicts = env.run().await;
    assert_eq!(
        kinds(&conflicts),
        vec![(
            "_dmarc.example.test".into(),
            ConflictKind::AuthoritativeDisagreement
        )]
    );
    let c = &conflicts[0];
    assert_eq!(
        c.conflicting_records,
        vec!["v=DMARC1; p=reject", "v=DMARC1; p=none"]
    );
    assert_eq!(
        c.authoritative_nameservers[0].txt,
        vec!["v=DMARC1; p=reject"]
    );
    assert_eq!(c.authoritative_nameservers[1].txt, vec!["v=DMARC1; p=none"]);
    Ok(())
}

#[tokio::test]
async fn resolver_divergence() -> TestResult {
    let stale = base().txt("_dmarc", "v=DMARC1; p=none");
    let env = Env::new(healthy(), None)
        .await?
        .with_publics(healthy(), stale)
        .await?;
    let conflicts = env.run().await;
    assert_eq!(
        kinds(&conflicts),
        vec![(
            "_dmarc.example.test".into(),
            ConflictKind::ResolverDivergence
        )]
    );
    let c = &conflicts[0];
    assert_eq!(
        c.conflicting_records,
        vec!["v=DMARC1; p=reject", "v=DMARC1; p=none"]
    );
    assert_eq!(
        c.public_resolvers[1],
        ResolverAnswer {
            resolver: "two".into(),
            ip: "127.0.0.5".into(),
            cname: vec![],
            txt: vec!["v=DMARC1; p=none".into()],
            answered: true,
            timed_out: false,
        }
    );
    Ok(())
}

#[tokio::test]
async fn public_resolvers_agreeing_with_each_other_but_not_the_zone_diverge() -> TestResult {
    let stale = base().txt("_dmarc", "v=DMARC1; p=none");
    let env = Env::new(healthy(), None)
        .await?
        .with_publics(stale.clone(), stale)
        .await?;
    let conflicts = env.run().await;
    assert_eq!(
        kinds(&conflicts),
        vec![(
            "_dmarc.example.test".into(),
            ConflictKind::ResolverDivergence
        )]
    );
    Ok(())
}

#[tokio::test]
async fn a_timed_out_nameserver_is_reported_not_a_disagreement() -> TestResult {
    let zone = healthy().txt("_dmarc", "v=DMARC1; p=none");
    let env = Env::new(zone, None).await?;
    env.ns2.inject(Scope::Global, Fault::Timeout);
    // The 3 s query timeout ends the wait; a run that never ends is the failure (the hour is a
    // hang detector, not a speed bound).
    let conflicts = tokio::time::timeout(Duration::from_secs(3600), env.run())
        .await
        .expect("the silent nameserver held the run");
    assert_eq!(
        kinds(&conflicts),
        vec![(
            "_dmarc.example.test".into(),
            ConflictKind::MultipleDmarcRecords
        )]
    );
    let servers = &conflicts[0].authoritative_nameservers;
    assert!(servers[0].answered && !servers[0].timed_out);
    assert!(!servers[1].answered && servers[1].timed_out);
    assert_eq!(servers[1].nameserver, "ns2.example.test");
    Ok(())
}

#[tokio::test]
async fn managed_delegation_missing() -> TestResult {
    let mut env = Env::new(healthy(), None).await?;
    env.input.expected_delegations = vec![(
        "_dmarc.example.test".into(),
        "example.test.dmarc.mailward.test".into(),
        Protocol::Dmarc,
    )];
    let conflicts = env.run().await;
    assert_eq!(
        kinds(&conflicts),
        vec![(
            "_dmarc.example.test".into(),
            ConflictKind::ManagedDelegationMissing
        )]
    );
    assert_eq!(conflicts[0].conflicting_records, vec!["v=DMARC1; p=reject"]);
    assert!(
        conflicts[0]
            .remediation
            .contains("example.test.dmarc.mailward.test")
    );

    // Once the CNAME is published everywhere, the conflict is gone.
    for server in [&env.recursive, &env.ns1, &env.ns2] {
        server.remove("_dmarc.example.test", None)?;
        server.set(
            "_dmarc.example.test",
            RecordType::Cname,
            vec![RecordData::Cname("example.test.dmarc.mailward.test".into())],
        )?;
    }
    assert_eq!(env.run().await, vec![]);
    Ok(())
}

/// Plays a nameserver serving a CNAME and a TXT at one name, which the fixture cannot (see
/// `fixture_cannot_serve_txt_beside_cname`).
struct MixedServer;

#[async_trait]
impl DirectDns for MixedServer {
    async fn ask(
        &self,
        _server: SocketAddr,
        name: &str,
        record_type: RecordType,
    ) -> Result<Answer, DnsError> {
        let records = match (name, record_type) {
            ("_dmarc.example.test", RecordType::Cname) => {
                vec![RecordData::Cname("example.test.dmarc.mailward.test".into())]
            }
            ("_dmarc.example.test", RecordType::Txt) => {
                vec![RecordData::Txt(vec![b"v=DMARC1; p=none".to_vec()])]
            }
            ("example.test", RecordType::Txt) => {
                vec![RecordData::Txt(vec![b"v=spf1 -all".to_vec()])]
            }
            (_, _) => return Err(DnsError::NxDomain),
        };
        Ok(Answer {
            records,
            ..Answer::default()
        })
    }
}

#[tokio::test]
async fn cname_with_other_data() -> TestResult {
    let zone = base().cname("_dmarc", "example.test.dmarc.mailward.test.");
    let env = Env::new(zone, None).await?;
    let conflicts = detect(&env.resolver, &MixedServer, &env.input).await;
    assert_eq!(
        kinds(&conflicts),
        vec![(
            "_dmarc.example.test".into(),
            ConflictKind::CnameWithOtherData
        )]
    );
    assert_eq!(
        conflicts[0].conflicting_records,
        vec!["example.test.dmarc.mailward.test", "v=DMARC1; p=none"]
    );
    assert!(conflicts[0].rfc.contains("RFC 2181 §10.1"));
    Ok(())
}

#[tokio::test]
async fn serializes_to_the_rest_shape() -> TestResult {
    let env = Env::new(base().cname("_mta-sts", "nowhere"), None).await?;
    let conflicts = env.run().await;
    let value = serde_json::to_value(&conflicts)?;
    let first = &value[0];
    assert_eq!(first["protocol"], "mta_sts");
    assert_eq!(first["kind"], "cname_target_unresolvable");
    assert_eq!(first["label"], "_mta-sts.example.test");
    for key in [
        "summary",
        "rfc",
        "consequence",
        "remediation",
        "conflicting_records",
        "authoritative_nameservers",
        "public_resolvers",
    ] {
        assert!(first.get(key).is_some(), "{key}");
    }
    let ns = &first["authoritative_nameservers"][0];
    for key in ["nameserver", "ip", "cname", "txt", "answered", "timed_out"] {
        assert!(ns.get(key).is_some(), "{key}");
    }
    Ok(())
}

/// Why `cname_with_other_data` uses a double: hickory's in-memory zone refuses to insert a
/// record beside a CNAME (the fixture skips refused inserts, as a real server loading such a
/// zone would), so no fixture nameserver can serve both; the broken server is played by
/// [`MixedServer`] instead.
#[tokio::test]
async fn fixture_cannot_serve_txt_beside_cname() -> TestResult {
    let zone = base()
        .txt("target", "v=DMARC1; p=reject")
        .cname("_dmarc", "target")
        .txt("_dmarc", "v=DMARC1; p=none");
    let server = FixtureServer::start_on(ip(2), vec![zone]).await?;
    let resolver = server.resolver()?;
    let cname = resolver
        .ask_server(server.addr(), "_dmarc.example.test", RecordType::Cname)
        .await?;
    assert_eq!(
        cname.records,
        vec![RecordData::Cname("target.example.test".into())]
    );
    let txt = resolver
        .ask_server(server.addr(), "_dmarc.example.test", RecordType::Txt)
        .await?;
    assert_eq!(txt.cname_chain, vec!["target.example.test"]);
    assert_eq!(
        txt.records,
        vec![RecordData::Txt(vec![b"v=DMARC1; p=reject".to_vec()])]
    );
    Ok(())
}

#[tokio::test]
async fn labels_a_server_could_not_answer_for_are_reported_inconclusive() -> TestResult {
    let env = Env::new(healthy(), None).await?;
    let clean =
        mailward_conflicts::detect_with_coverage(&env.resolver, &env.resolver, &env.input).await;
    assert!(clean.inconclusive_labels.is_empty(), "{clean:?}");
    env.ns2
        .inject(Scope::name("_dmarc.example.test"), Fault::ServFail);
    let partial =
        mailward_conflicts::detect_with_coverage(&env.resolver, &env.resolver, &env.input).await;
    assert_eq!(
        partial.inconclusive_labels,
        vec!["_dmarc.example.test".to_string()]
    );
    Ok(())
}
