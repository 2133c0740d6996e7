//! The adapter against the in-process fixture server: every outcome class, CNAME chains, MX
//! order, truncation to TCP, the cache, the budget, the concurrency bound, retries and asking
//! one named server.

use mailward_dns::{Budgeted, HickoryResolver, ResolverSettings};
use mailward_dns_fixture::{Fault, FixtureServer, Scope, Transport, Zone};
use mailward_domain::dns::{Answer, DnsError, DnsResolver, RecordData, RecordType};
use std::net::IpAddr;
use std::time::{Duration, Instant};

fn zone() -> Zone {
    Zone::new("example.test")
        .a("@", "192.0.2.10")
        .txt("_dmarc", "v=DMARC1; p=none")
        .txt("s1._domainkey", "v=DKIM1; p=abc")
        .mx("@", 20, "mx2")
        .mx("@", 10, "MX1")
        .a("mx1", "192.0.2.25")
        .default_ttl(60)
        .cname("www", "alias")
        .cname("alias", "target")
        .default_ttl(300)
        .a("target", "192.0.2.80")
        .cname("dangling", "target")
        .cname("gone", "nowhere")
}

async fn start() -> FixtureServer {
    FixtureServer::start(vec![zone()]).await.unwrap()
}

fn txt(answer: &Answer) -> Vec<String> {
    answer
        .records
        .iter()
        .filter_map(RecordData::txt_value)
        .collect()
}

#[tokio::test]
async fn outcome_classes_are_distinguished() {
    let server = start().await;
    let resolver = server.resolver().unwrap();

    let ok = resolver
        .lookup("_DMARC.Example.Test.", RecordType::Txt)
        .await
        .unwrap();
    assert_eq!(txt(&ok), vec!["v=DMARC1; p=none"]);
    assert_eq!(ok.ttl, Some(300));
    assert!(ok.cname_chain.is_empty());

    // NODATA: the name exists, no record of the type.
    let nodata = resolver.lookup("_dmarc.example.test", RecordType::Mx).await;
    assert_eq!(nodata, Ok(Answer::default()));
    // NODATA for an empty non-terminal (a name exists below it).
    let ent = resolver
        .lookup("_domainkey.example.test", RecordType::Txt)
        .await;
    assert_eq!(ent, Ok(Answer::default()));

    assert_eq!(
        resolver
            .lookup("missing.example.test", RecordType::Txt)
            .await,
        Err(DnsError::NxDomain)
    );

    // REFUSED: a zone the server does not serve, and an injected one.
    assert_eq!(
        resolver.lookup("example.org", RecordType::A).await,
        Err(DnsError::Refused)
    );
    server.inject(Scope::name("refused.example.test"), Fault::Refused);
    assert_eq!(
        resolver.lookup("refused.example.test", RecordType::A).await,
        Err(DnsError::Refused)
    );

    server.inject(
        Scope::name_type("example.test", RecordType::Mx),
        Fault::ServFail,
    );
    assert_eq!(
        resolver.lookup("example.test", RecordType::Mx).await,
        Err(DnsError::ServFail)
    );
    assert!(resolver.lookup("example.test", RecordType::A).await.is_ok());

    assert_eq!(
        resolver.lookup("bad..name", RecordType::A).await,
        Err(DnsError::InvalidName("bad..name".into()))
    );
}

#[tokio::test]
async fn timeout_is_a_timeout_not_a_missing_record() {
    let server = start().await;
    let mut settings = server.settings();
    settings.timeout = Duration::from_millis(300);
    let resolver = HickoryResolver::new(settings).unwrap();
    server.inject(Scope::name("slow.example.test"), Fault::Timeout);
    let started = Instant::now();
    let outcome = resolver.lookup("slow.example.test", RecordType::Txt).await;
    assert_eq!(outcome, Err(DnsError::Timeout));
    assert!(!outcome.unwrap_err().is_definitive());
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // Latency below the timeout still answers.
    server.clear_all_faults();
    server.inject(Scope::Global, Fault::Latency(Duration::from_millis(50)));
    assert!(resolver.lookup("example.test", RecordType::A).await.is_ok());
}

#[tokio::test]
async fn a_lost_datagram_is_resent_long_before_the_attempt_ends() {
    let server = start().await;
    let mut settings = server.settings();
    settings.timeout = Duration::from_secs(30);
    settings.retransmit_after = Duration::from_millis(100);
    let resolver = HickoryResolver::new(settings).unwrap();
    // The first two copies are lost: answered by the third, sent 100 + 200 ms later, well
    // within the 30 s attempt (a resolver that waited for its timeout before asking again would
    // not answer within the 10 s guard).
    server.inject(Scope::name("example.test"), Fault::Lose(2));
    let answer = tokio::time::timeout(
        Duration::from_secs(10),
        resolver.lookup("example.test", RecordType::A),
    )
    .await
    .expect("answered after resends, not after the attempt's timeout");
    assert!(answer.is_ok(), "{answer:?}");
    assert_eq!(server.query_count(), 3, "{:?}", server.queries());
}

#[tokio::test]
async fn retries_only_timeouts_up_to_the_attempts() {
    let server = start().await;
    let mut settings = server.settings();
    settings.timeout = Duration::from_millis(200);
    settings.attempts = 3;
    let resolver = HickoryResolver::new(settings).unwrap();
    server.inject(Scope::name("slow.example.test"), Fault::Timeout);
    server.inject(Scope::name("broken.example.test"), Fault::ServFail);
    assert_eq!(
        resolver.lookup("slow.example.test", RecordType::A).await,
        Err(DnsError::Timeout)
    );
    let slow = server
        .queries()
        .iter()
        .filter(|q| q.name == "slow.example.test")
        .count();
    assert_eq!(slow, 3, "three attempts");
    assert_eq!(
        resolver.lookup("broken.example.test", RecordType::A).await,
        Err(DnsError::ServFail)
    );
    let broken = server
        .queries()
        .iter()
        .filter(|q| q.name == "broken.example.test")
        .count();
    assert_eq!(broken, 1, "SERVFAIL is an answer, not retried");
}

#[tokio::test]
async fn cname_chains_are_followed_and_reported() {
    let server = start().await;
    let resolver = server.resolver().unwrap();
    let answer = resolver
        .lookup("WWW.example.test", RecordType::A)
        .await
        .unwrap();
    assert_eq!(
        answer.records,
        vec![RecordData::A("192.0.2.80".parse().unwrap())]
    );
    assert_eq!(
        answer.cname_chain,
        vec!["alias.example.test", "target.example.test"]
    );
    assert_eq!(answer.ttl, Some(300));

    // CNAME to a name without records of the type: NODATA, chain kept.
    let nodata = resolver
        .lookup("dangling.example.test", RecordType::Txt)
        .await
        .unwrap();
    assert!(nodata.records.is_empty());
    assert_eq!(nodata.cname_chain, vec!["target.example.test"]);

    // Asking for the CNAME itself.
    let cname = resolver
        .lookup("www.example.test", RecordType::Cname)
        .await
        .unwrap();
    assert_eq!(
        cname.records,
        vec![RecordData::Cname("alias.example.test".into())]
    );
    assert!(cname.cname_chain.is_empty());

    // CNAME to a missing name.
    let gone = resolver.lookup("gone.example.test", RecordType::A).await;
    assert!(
        matches!(&gone, Err(DnsError::NxDomain)) || matches!(&gone, Ok(a) if a.records.is_empty()),
        "{gone:?}"
    );
}

#[tokio::test]
async fn mx_records_come_sorted_by_preference() {
    let server = start().await;
    let resolver = server.resolver().unwrap();
    let answer = resolver
        .lookup("example.test", RecordType::Mx)
        .await
        .unwrap();
    assert_eq!(
        answer.records,
        vec![
            RecordData::Mx {
                preference: 10,
                exchange: "mx1.example.test".into()
            },
            RecordData::Mx {
                preference: 20,
                exchange: "mx2.example.test".into()
            },
        ]
    );
}

#[tokio::test]
async fn large_txt_rrset_is_fetched_over_tcp() {
    let strings: Vec<String> = (0..8).map(|i| format!("{i}{}", "x".repeat(199))).collect();
    let refs: Vec<&str> = strings.iter().map(String::as_str).collect();
    let zone = zone()
        .txt_strings("big", &refs[..4])
        .txt_strings("big", &refs[4..])
        .txt("big", &"y".repeat(300));
    let server = FixtureServer::start(vec![zone]).await.unwrap();
    let resolver = server.resolver().unwrap();
    let answer = resolver
        .lookup("big.example.test", RecordType::Txt)
        .await
        .unwrap();
    let total: usize = answer
        .records
        .iter()
        .map(|r| match r {
            RecordData::Txt(parts) => parts.iter().map(Vec::len).sum(),
            _ => 0,
        })
        .sum();
    assert!(
        total > 1232,
        "the RRset is larger than the UDP payload: {total}"
    );
    assert_eq!(answer.records.len(), 3);
    assert!(answer.records.contains(&RecordData::Txt(
        refs[..4].iter().map(|s| s.as_bytes().to_vec()).collect()
    )));
    assert!(
        answer
            .records
            .contains(&RecordData::Txt(vec![vec![b'y'; 255], vec![b'y'; 45]]))
    );
    let transports: Vec<Transport> = server.queries().iter().map(|q| q.transport).collect();
    assert_eq!(transports, vec![Transport::Udp, Transport::Tcp]);
}

#[tokio::test]
async fn forced_truncation_falls_back_to_tcp() {
    let server = start().await;
    server.inject(Scope::name("_dmarc.example.test"), Fault::Truncate);
    let resolver = server.resolver().unwrap();
    let answer = resolver
        .lookup("_dmarc.example.test", RecordType::Txt)
        .await
        .unwrap();
    assert_eq!(txt(&answer), vec!["v=DMARC1; p=none"]);
    let transports: Vec<Transport> = server.queries().iter().map(|q| q.transport).collect();
    assert_eq!(transports, vec![Transport::Udp, Transport::Tcp]);
}

#[tokio::test]
async fn cache_hits_and_bypass() {
    let server = start().await;
    let resolver = HickoryResolver::new(ResolverSettings {
        cache_ttl_cap: Duration::from_secs(30),
        ..server.settings()
    })
    .unwrap();
    let first = resolver
        .lookup("_dmarc.example.test", RecordType::Txt)
        .await
        .unwrap();
    let second = resolver
        .lookup("_dmarc.example.test", RecordType::Txt)
        .await
        .unwrap();
    assert_eq!(first, second);
    assert_eq!(server.query_count(), 1, "second lookup came from the cache");

    // Negative answers are cached too; failures are not.
    for _ in 0..2 {
        assert_eq!(
            resolver
                .lookup("missing.example.test", RecordType::Txt)
                .await,
            Err(DnsError::NxDomain)
        );
    }
    assert_eq!(server.query_count(), 2);
    server.inject(Scope::name("flaky.example.test"), Fault::ServFail);
    for _ in 0..2 {
        assert_eq!(
            resolver.lookup("flaky.example.test", RecordType::Txt).await,
            Err(DnsError::ServFail)
        );
    }
    assert_eq!(server.query_count(), 4);

    // The user publishes a new record: the cache still has the old one, fresh() sees the new.
    server
        .set_txt("_dmarc.example.test", "v=DMARC1; p=reject")
        .unwrap();
    let cached = resolver
        .lookup("_dmarc.example.test", RecordType::Txt)
        .await
        .unwrap();
    assert_eq!(txt(&cached), vec!["v=DMARC1; p=none"]);
    let fresh = resolver
        .fresh()
        .lookup("_dmarc.example.test", RecordType::Txt)
        .await
        .unwrap();
    assert_eq!(txt(&fresh), vec!["v=DMARC1; p=reject"]);
    assert_eq!(server.query_count(), 5);
    // ...and the fresh answer refreshed the cache.
    let after = resolver
        .lookup("_dmarc.example.test", RecordType::Txt)
        .await
        .unwrap();
    assert_eq!(txt(&after), vec!["v=DMARC1; p=reject"]);
    assert_eq!(server.query_count(), 5);
    resolver.clear_cache();
    resolver
        .lookup("_dmarc.example.test", RecordType::Txt)
        .await
        .unwrap();
    assert_eq!(server.query_count(), 6);
}

#[tokio::test]
async fn cache_entries_expire_at_the_record_ttl() {
    let zone = Zone::new("ttl.test").default_ttl(1).txt("short", "v=1");
    let server = FixtureServer::start(vec![zone]).await.unwrap();
    let resolver = HickoryResolver::new(ResolverSettings {
        cache_ttl_cap: Duration::from_secs(30),
        ..server.settings()
    })
    .unwrap();
    resolver
        .lookup("short.ttl.test", RecordType::Txt)
        .await
        .unwrap();
    resolver
        .lookup("short.ttl.test", RecordType::Txt)
        .await
        .unwrap();
    assert_eq!(server.query_count(), 1);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    resolver
        .lookup("short.ttl.test", RecordType::Txt)
        .await
        .unwrap();
    assert_eq!(server.query_count(), 2);
}

#[tokio::test]
async fn budget_is_enforced_per_request() {
    let server = start().await;
    let resolver = server.resolver().unwrap();
    let budgeted = Budgeted::new(&resolver, 3);
    for name in ["example.test", "mx1.example.test", "missing.example.test"] {
        let outcome = budgeted.lookup(name, RecordType::A).await;
        assert_ne!(outcome, Err(DnsError::BudgetExhausted));
    }
    assert_eq!(
        budgeted.lookup("target.example.test", RecordType::A).await,
        Err(DnsError::BudgetExhausted)
    );
    assert_eq!(
        server.query_count(),
        3,
        "the refused lookup never reached the network"
    );
    assert_eq!(budgeted.remaining(), 0);
    // Another request has its own budget.
    let other = Budgeted::new(&resolver, 1);
    assert!(other.lookup("example.test", RecordType::A).await.is_ok());
}

async fn peak_with(server: &FixtureServer, max_concurrency: usize) -> (usize, Duration) {
    server.reset_stats();
    let resolver = HickoryResolver::new(ResolverSettings {
        max_concurrency,
        ..server.settings()
    })
    .unwrap();
    let started = Instant::now();
    let lookups = (0..8).map(|i| {
        let resolver = resolver.clone();
        tokio::spawn(async move {
            resolver
                .lookup(&format!("n{i}.example.test"), RecordType::A)
                .await
        })
    });
    for task in lookups.collect::<Vec<_>>() {
        assert_eq!(task.await.unwrap(), Err(DnsError::NxDomain));
    }
    (server.peak_in_flight(), started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_is_bounded() {
    let server = start().await;
    server.inject(Scope::Global, Fault::Latency(Duration::from_millis(100)));
    let (peak, elapsed) = peak_with(&server, 2).await;
    assert!(peak <= 2, "peak {peak}");
    assert!(elapsed >= Duration::from_millis(390), "{elapsed:?}");
    let (peak, _) = peak_with(&server, 8).await;
    assert!(
        peak > 2,
        "without the bound the queries overlap: peak {peak}"
    );
}

#[tokio::test]
async fn ask_server_compares_two_nameservers() {
    let ip2: IpAddr = "127.0.0.2".parse().unwrap();
    let ip3: IpAddr = "127.0.0.3".parse().unwrap();
    let a = FixtureServer::start_on(ip2, vec![zone()]).await.unwrap();
    let b = FixtureServer::start_on(ip3, vec![zone().txt("_dmarc", "v=DMARC1; p=reject")])
        .await
        .unwrap();
    assert_eq!(a.addr().ip(), ip2);
    assert_eq!(b.addr().ip(), ip3);
    // A resolver whose upstream is neither server: ask_server must not use the upstream.
    let resolver = b.resolver().unwrap();
    let from_a = resolver
        .ask_server(a.addr(), "_dmarc.example.test", RecordType::Txt)
        .await
        .unwrap();
    let from_b = resolver
        .ask_server(b.addr(), "_dmarc.example.test", RecordType::Txt)
        .await
        .unwrap();
    assert_eq!(txt(&from_a), vec!["v=DMARC1; p=none"]);
    let mut b_values = txt(&from_b);
    b_values.sort();
    assert_eq!(b_values, vec!["v=DMARC1; p=none", "v=DMARC1; p=reject"]);
    assert_ne!(from_a, from_b);
    assert_eq!(a.query_count(), 1);
    assert_eq!(b.query_count(), 1);
    // Failures per server are reported per server.
    a.inject(Scope::Global, Fault::ServFail);
    assert_eq!(
        resolver
            .ask_server(a.addr(), "_dmarc.example.test", RecordType::Txt)
            .await,
        Err(DnsError::ServFail)
    );
    assert!(
        resolver
            .ask_server(b.addr(), "_dmarc.example.test", RecordType::Txt)
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn live_edits_publish_and_remove_records() {
    let server = start().await;
    let resolver = server.resolver().unwrap();
    assert_eq!(
        resolver
            .lookup("sel._domainkey.example.test", RecordType::Txt)
            .await,
        Err(DnsError::NxDomain)
    );
    server
        .set_txt("sel._domainkey.example.test", "v=DKIM1; p=")
        .unwrap();
    let answer = resolver
        .lookup("sel._domainkey.example.test", RecordType::Txt)
        .await
        .unwrap();
    assert_eq!(txt(&answer), vec!["v=DKIM1; p="]);
    server
        .add(
            "sel._domainkey.example.test",
            RecordData::A("192.0.2.9".parse().unwrap()),
        )
        .unwrap();
    server
        .remove("sel._domainkey.example.test", Some(RecordType::Txt))
        .unwrap();
    assert_eq!(
        resolver
            .lookup("sel._domainkey.example.test", RecordType::Txt)
            .await,
        Ok(Answer::default())
    );
    server.remove("sel._domainkey.example.test", None).unwrap();
    assert_eq!(
        resolver
            .lookup("sel._domainkey.example.test", RecordType::A)
            .await,
        Err(DnsError::NxDomain)
    );
    assert!(
        server.set_txt("elsewhere.org", "x").is_err(),
        "no zone holds it"
    );
}

#[tokio::test]
async fn resolver_from_a_server_list() {
    let server = start().await;
    let list = format!("{} , {}", server.addr(), server.addr());
    let settings = ResolverSettings::from_server_list(&list).unwrap();
    assert_eq!(settings.servers, vec![server.addr(), server.addr()]);
    let resolver = HickoryResolver::new(settings).unwrap();
    assert!(resolver.lookup("example.test", RecordType::A).await.is_ok());
}

#[test]
fn system_default_reads_resolv_conf_only_without_servers() {
    // No query is made; building must not panic whatever the machine's configuration.
    match HickoryResolver::new(ResolverSettings::default()) {
        Ok(resolver) => assert!(resolver.settings().servers.is_empty()),
        Err(e) => println!("no system resolver here: {e}"),
    }
}

#[tokio::test]
async fn an_empty_address_answer_costs_one_query_and_an_empty_txt_answer_keeps_its_chain() {
    let server = start().await;
    let resolver = server.resolver().unwrap();
    // `target` has an A record only: no AAAA (NODATA). Nobody reads that answer's chain.
    let aaaa = resolver
        .lookup_uncached("target.example.test", RecordType::Aaaa)
        .await
        .unwrap();
    assert!(aaaa.records.is_empty());
    assert_eq!(server.query_count(), 1);
    // An empty TXT answer keeps its CNAME chain (DMARC/DKIM delegations need it): read from the
    // answer, plus one question for the chain's end when the server did not say that name is
    // empty (no SOA of its zone beside the CNAME).
    let txt = resolver
        .lookup_uncached("dangling.example.test", RecordType::Txt)
        .await
        .unwrap();
    assert_eq!(txt.cname_chain, vec!["target.example.test"]);
    assert!(
        (2..=3).contains(&server.query_count()),
        "{}",
        server.query_count()
    );
}
