//! The openspf RFC 7208 suite's zone data served by the fixture, with `check_host()` running
//! through the real resolver (UDP/TCP to loopback) instead of the in-memory fake: proves the
//! adapter's outcome mapping is what the SPF engine expects.
//!
//! Each scenario's zone data becomes one root zone (every name absolute); `TIMEOUT` entries become
//! injected timeouts. Names the fixture cannot express would make their records "not served"
//! (none today). The test prints `passed/run` and fails on any failing case, like the in-memory
//! run in mailward-spf.

use mailward_dns::HickoryResolver;
use mailward_dns_fixture::{Fault, FixtureServer, Scope, Zone};
use mailward_domain::dns::{RecordData, RecordType};
use mailward_spf::{SpfRequest, check_host};
use serde_norway::Value;
use std::net::IpAddr;
use std::time::Duration;

fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn strings(value: &Value) -> Option<Vec<Vec<u8>>> {
    match value {
        Value::String(s) => Some(vec![s.as_bytes().to_vec()]),
        Value::Sequence(items) => Some(
            items
                .iter()
                .filter_map(text)
                .map(String::into_bytes)
                .collect(),
        ),
        _ => None,
    }
}

fn type_of(kind: &str) -> Option<RecordType> {
    Some(match kind {
        "A" => RecordType::A,
        "AAAA" => RecordType::Aaaa,
        "MX" => RecordType::Mx,
        "TXT" | "SPF" => RecordType::Txt,
        "PTR" => RecordType::Ptr,
        "CNAME" => RecordType::Cname,
        _ => return None,
    })
}

const ALL_TYPES: [RecordType; 6] = [
    RecordType::A,
    RecordType::Aaaa,
    RecordType::Mx,
    RecordType::Txt,
    RecordType::Ptr,
    RecordType::Cname,
];

/// A scenario's zone and its timeouts, built the way pyspf's driver reads the zone data.
struct Scenario {
    zone: Zone,
    timeouts: Vec<Scope>,
}

fn scenario(zonedata: &Value) -> Scenario {
    let mut zone = Zone::new(".");
    let mut timeouts = Vec::new();
    let Value::Mapping(names) = zonedata else {
        return Scenario { zone, timeouts };
    };
    for (name, entries) in names {
        let name = format!("{}.", text(name).unwrap_or_default().trim_end_matches('.'));
        let Value::Sequence(entries) = entries else {
            continue;
        };
        if let Some(problem) = Zone::new(&name).problems().first() {
            println!("  not served: {problem}");
            continue;
        }
        let has_txt = entries.iter().any(|e| e.get("TXT").is_some());
        let mut seen = Vec::new();
        for entry in entries {
            if text(entry).as_deref() == Some("TIMEOUT") {
                for t in ALL_TYPES.iter().filter(|t| !seen.contains(*t)) {
                    timeouts.push(Scope::name_type(&name, *t));
                }
                continue;
            }
            let Value::Mapping(map) = entry else { continue };
            for (kind, value) in map {
                let kind = text(kind).unwrap_or_default();
                let Some(record_type) = type_of(&kind) else {
                    continue;
                };
                match text(value).as_deref() {
                    Some("NONE") => continue,
                    Some("TIMEOUT") => {
                        timeouts.push(Scope::name_type(&name, record_type));
                        continue;
                    }
                    _ => {}
                }
                let data = match kind.as_str() {
                    "SPF" if has_txt => None,
                    "TXT" | "SPF" => strings(value).map(RecordData::Txt),
                    "A" => text(value).and_then(|s| s.parse().ok()).map(RecordData::A),
                    "AAAA" => text(value)
                        .and_then(|s| s.parse().ok())
                        .map(RecordData::Aaaa),
                    "MX" => match value {
                        Value::Sequence(pair) => Some(RecordData::Mx {
                            preference: pair
                                .first()
                                .and_then(Value::as_u64)
                                .and_then(|p| u16::try_from(p).ok())
                                .unwrap_or(0),
                            exchange: pair.get(1).and_then(text).unwrap_or_default(),
                        }),
                        _ => None,
                    },
                    "PTR" => text(value).map(RecordData::Ptr),
                    "CNAME" => text(value).map(RecordData::Cname),
                    _ => None,
                };
                if let Some(data) = data {
                    seen.push(record_type);
                    zone = zone.record(&name, data);
                }
            }
        }
    }
    Scenario { zone, timeouts }
}

struct Case {
    id: String,
    helo: String,
    host: IpAddr,
    mailfrom: String,
    results: Vec<String>,
    explanation: Option<String>,
}

#[tokio::test]
async fn rfc7208_suite_through_the_real_resolver() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/mailward-spf/tests/fixtures/rfc7208-tests.yml"
    );
    let source = std::fs::read_to_string(path).unwrap();
    let server = FixtureServer::start(vec![]).await.unwrap();
    let resolver = HickoryResolver::new(mailward_dns::ResolverSettings {
        timeout: Duration::from_millis(200),
        ..server.settings()
    })
    .unwrap();
    let (mut passed, mut run, mut skipped) = (0, 0, 0);
    let mut failures = Vec::new();
    for document in serde_norway::Deserializer::from_str(&source) {
        let value: Value = serde::Deserialize::deserialize(document).unwrap();
        let description = value.get("description").and_then(text).unwrap_or_default();
        let scenario = scenario(value.get("zonedata").unwrap_or(&Value::Null));
        let mut cases = Vec::new();
        if let Some(Value::Mapping(tests)) = value.get("tests") {
            for (name, test) in tests {
                let field = |k: &str| test.get(k).and_then(text).unwrap_or_default();
                cases.push(Case {
                    id: format!("{description}/{}", text(name).unwrap_or_default()),
                    helo: field("helo"),
                    host: field("host").parse().unwrap(),
                    mailfrom: field("mailfrom"),
                    results: match test.get("result") {
                        Some(Value::Sequence(items)) => items.iter().filter_map(text).collect(),
                        Some(v) => text(v).into_iter().collect(),
                        None => Vec::new(),
                    },
                    explanation: test.get("explanation").and_then(text),
                });
            }
        }
        if let Some(problem) = scenario.zone.problems().first() {
            println!("  skipped {description:?}: {problem}");
            skipped += cases.len();
            continue;
        }
        if let Err(e) = server.add_zone(scenario.zone) {
            println!("  skipped {description:?}: {e}");
            skipped += cases.len();
            continue;
        }
        server.clear_all_faults();
        for scope in scenario.timeouts {
            server.inject(scope, Fault::Timeout);
        }
        for case in cases {
            run += 1;
            let request = SpfRequest::mail_from(case.host, &case.mailfrom, &case.helo)
                .with_receiver("receiver.example.net");
            let outcome = check_host(&resolver, &request).await;
            let result_ok = case.results.iter().any(|r| r == outcome.result.as_str());
            let explanation_ok = match (&case.explanation, outcome.result.as_str()) {
                (Some(expected), "fail") if expected != "DEFAULT" => {
                    outcome.explanation.as_deref() == Some(expected.as_str())
                }
                _ => true,
            };
            if result_ok && explanation_ok {
                passed += 1;
            } else {
                failures.push(format!(
                    "{}: expected {:?}, got {} ({:?})",
                    case.id,
                    case.results,
                    outcome.result,
                    outcome.error.as_ref().map(|p| &p.message)
                ));
            }
        }
    }
    println!("rfc7208 suite through the fixture: {passed}/{run} passed ({skipped} skipped)");
    for failure in &failures {
        println!("  {failure}");
    }
    assert!(
        failures.is_empty() && skipped == 0 && run > 200,
        "{} failing cases, {skipped} skipped, {run} run",
        failures.len()
    );
}
