//! The fixture itself: zone files, builder errors, several zones, live zone additions.

use mailward_dns_fixture::{FixtureError, FixtureServer, Zone, fixture_zones_dir};
use mailward_domain::dns::{DnsError, DnsResolver, RecordData, RecordType};

#[tokio::test]
async fn serves_the_shared_zone_files() {
    let zones = Zone::load_dir(fixture_zones_dir()).unwrap();
    assert!(zones.iter().any(|z| z.origin() == "example.test"));
    let server = FixtureServer::start(zones).await.unwrap();
    let resolver = server.resolver().unwrap();
    let spf = resolver
        .lookup("example.test", RecordType::Txt)
        .await
        .unwrap();
    assert_eq!(
        spf.records[0].txt_value().as_deref(),
        Some("v=spf1 ip4:192.0.2.0/24 include:_spf.example.test -all")
    );
    let dkim = resolver
        .lookup("sel1._domainkey.example.test", RecordType::Txt)
        .await
        .unwrap();
    match &dkim.records[..] {
        [RecordData::Txt(parts)] => assert_eq!(parts.len(), 2, "two strings kept apart"),
        other => panic!("{other:?}"),
    }
    let mx = resolver
        .lookup("example.test", RecordType::Mx)
        .await
        .unwrap();
    assert_eq!(mx.records.len(), 2);
    let ns = resolver
        .lookup("example.test", RecordType::Ns)
        .await
        .unwrap();
    assert_eq!(ns.records.len(), 2);
    let www = resolver
        .lookup("www.example.test", RecordType::A)
        .await
        .unwrap();
    assert_eq!(www.cname_chain, vec!["example.test"]);
    let soa = resolver
        .lookup("example.test", RecordType::Soa)
        .await
        .unwrap();
    assert_eq!(
        soa.records,
        vec![RecordData::Soa {
            mname: "ns1.example.test".into()
        }]
    );
}

#[tokio::test]
async fn zone_text_parses_with_an_origin_argument() {
    let text = "$TTL 60\n@ IN SOA ns1 hostmaster 1 3600 600 86400 60\nmail IN A 192.0.2.1\n";
    let zone = Zone::parse(text, Some("parsed.test")).unwrap();
    assert_eq!(zone.origin(), "parsed.test");
    let server = FixtureServer::start(vec![zone]).await.unwrap();
    let resolver = server.resolver().unwrap();
    let answer = resolver
        .lookup("mail.parsed.test", RecordType::A)
        .await
        .unwrap();
    assert_eq!(answer.ttl, Some(60));
    assert!(matches!(
        Zone::parse("@ IN A 192.0.2.1\n", Some("x.test")),
        Err(FixtureError::Parse(_))
    ));
}

#[tokio::test]
async fn builder_mistakes_are_reported_at_start() {
    let zone = Zone::new("bad.test").a("@", "not-an-ip");
    let err = FixtureServer::start(vec![zone]).await.unwrap_err();
    assert!(matches!(err, FixtureError::Invalid(_)), "{err}");
}

#[tokio::test]
async fn several_zones_and_zones_added_while_running() {
    let server = FixtureServer::start(vec![
        Zone::new("one.test").txt("@", "one"),
        Zone::new("two.test").txt("@", "two"),
    ])
    .await
    .unwrap();
    let resolver = server.resolver().unwrap();
    for (name, value) in [("one.test", "one"), ("two.test", "two")] {
        let answer = resolver.lookup(name, RecordType::Txt).await.unwrap();
        assert_eq!(answer.records[0].txt_value().as_deref(), Some(value));
    }
    assert_eq!(
        resolver.lookup("three.test", RecordType::Txt).await,
        Err(DnsError::Refused)
    );
    server
        .add_zone(Zone::new("three.test").txt("@", "three"))
        .unwrap();
    let answer = resolver
        .lookup("three.test", RecordType::Txt)
        .await
        .unwrap();
    assert_eq!(answer.records[0].txt_value().as_deref(), Some("three"));
    server.shutdown().await;
}
