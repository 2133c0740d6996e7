//! The DKIM dimension: probes `<selector>._domainkey.<domain>` for every selector from the
//! sending-source catalogue plus any supplied, all selectors at once (the CNAME question first,
//! the TXT question only when the name exists), and checks each key with
//! `mailward_records::dkim::parse`.
//!
//! Selectors cannot be listed from DNS (LESSONS.md), so "not found" means "not found among the
//! probed selectors". Without the catalogue (`dkim_selectors: None`) the probe is incomplete and
//! the verdict is `error` whatever the supplied selectors show.
//!
//! | code | category | meaning |
//! |---|---|---|
//! | `probe_catalogue_unavailable` | error | the selector catalogue was unavailable (verdict `error`) |
//! | `no_dkim_key_found` | error | no probed selector has a key record |
//! | `no_usable_dkim_key` | error | keys found, none usable (revoked, broken, too short) |
//! | `multiple_key_records` | warning | a selector publishes several TXT records |
//! | `selector_is_cname` | info | a selector is delegated by CNAME (typical for ESPs) |
//! | `selector_lookup_failed` | info | a selector's lookup failed but a usable key was found elsewhere |
//! | `dns_lookup_failed` | warning | selector lookups failed and no usable key was found: unknown, not missing |
//! | every `mailward_records::dkim` code | its severity | e.g. `key_revoked` (warning), `rsa_key_weak` (warning), `rsa_key_too_short` (error) |

use crate::lookup::{Looked, look, txt_values};
use crate::score::Dimension;
use crate::verdict::{Assessment, DNS_LOOKUP_FAILED, Findings, Verdict};
use futures::future::join_all;
use mailward_domain::dns::{Answer, DnsError, DnsResolver, RecordData, RecordType};
use mailward_records::dkim::{self, KeyType, PublicKey};
use mailward_records::{ProblemCode, Severity};
use serde::{Deserialize, Serialize};

/// Most selectors probed in one audit (each costs one query, two when the name exists).
pub const MAX_SELECTORS: usize = 100;

/// One probed selector that has something to show (a record, a CNAME or a failed lookup).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DkimSelector {
    /// The selector.
    pub selector: String,
    /// `<selector>._domainkey.<domain>`.
    pub name: String,
    /// True when a key record was found.
    pub found: bool,
    /// True when the name is a CNAME.
    pub is_cname: bool,
    /// The CNAME target, when there is one.
    pub cname_target: Option<String>,
    /// The key record text.
    pub record: Option<String>,
    /// rsa, ed25519 or the unknown `k=` value.
    pub key_type: Option<String>,
    /// Key strength in bits (RSA modulus; 256 for Ed25519).
    pub key_bits: Option<u32>,
    /// True for an empty `p=`.
    pub revoked: bool,
    /// True when verifiers can use the key.
    pub usable: bool,
    /// True when the lookup failed (presence unknown).
    pub lookup_failed: bool,
    /// The key record's problem codes.
    pub problems: Vec<String>,
}

/// The `dkim` object of the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DkimResult {
    /// Score, verdict, codes and state.
    #[serde(flatten)]
    pub assessment: Assessment,
    /// False when the probe catalogue was unavailable.
    pub catalogue_available: bool,
    /// How many selectors were probed.
    pub probed_count: usize,
    /// The selectors with a key record (found).
    pub found_selectors: Vec<String>,
    /// Details of every selector with a record, a CNAME or a failed lookup.
    pub selectors: Vec<DkimSelector>,
}

/// One selector's raw lookups.
#[derive(Debug, Clone)]
pub(crate) struct Probe {
    selector: String,
    name: String,
    txt: Looked,
    cname: Looked,
}

/// Lower-cases, validates and deduplicates the selectors (catalogue first), at most
/// [`MAX_SELECTORS`]. Invalid ones (not `[a-z0-9_-]` labels joined by dots) are skipped.
pub fn selectors_to_probe(catalogue: Option<&[String]>, extra: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in catalogue.unwrap_or(&[]).iter().chain(extra) {
        let s = s.trim().trim_end_matches('.').to_ascii_lowercase();
        let valid = !s.is_empty()
            && s.len() <= 128
            && s.split('.').all(|l| {
                !l.is_empty()
                    && l.len() <= 63
                    && l.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            });
        if valid && !out.contains(&s) && out.len() < MAX_SELECTORS {
            out.push(s);
        }
    }
    out
}

/// Probes every selector concurrently, the `first` ones (selectors seen in reports or found
/// before) launched ahead of the rest so they get the resolver's slots first; the probes come
/// back in `selectors` order.
pub(crate) async fn gather(
    resolver: &dyn DnsResolver,
    domain: &str,
    selectors: &[String],
    first: &[String],
) -> Vec<Probe> {
    let mut order: Vec<usize> = (0..selectors.len()).collect();
    order.sort_by_key(|&i| {
        !first.iter().any(|f| {
            f.trim()
                .trim_end_matches('.')
                .eq_ignore_ascii_case(&selectors[i])
        })
    });
    let probes = join_all(
        order
            .iter()
            .map(|&i| probe(resolver, domain, &selectors[i])),
    )
    .await;
    let mut placed: Vec<(usize, Probe)> = order.into_iter().zip(probes).collect();
    placed.sort_by_key(|(i, _)| *i);
    placed.into_iter().map(|(_, p)| p).collect()
}

/// One selector, in one query where one suffices: the CNAME question first. NXDOMAIN there
/// means the name holds no record of any type, so the TXT answer is known without asking (most
/// probed selectors end here). Otherwise (a CNAME, a name without one, or a failure) the TXT
/// question follows; through a CNAME its answer carries the chain. The outcome is the one the
/// TXT and CNAME questions asked side by side would give.
async fn probe(resolver: &dyn DnsResolver, domain: &str, selector: &str) -> Probe {
    let name = format!("{selector}._domainkey.{domain}");
    let (txt, cname) = match resolver.lookup(&name, RecordType::Cname).await {
        Err(DnsError::NxDomain) => (
            Looked::Absent(Answer::default()),
            Looked::Absent(Answer::default()),
        ),
        cname => (look(resolver, &name, RecordType::Txt).await, fold(cname)),
    };
    Probe {
        selector: selector.to_owned(),
        name,
        txt,
        cname,
    }
}

/// Folds a lookup outcome the way [`look`] does.
fn fold(outcome: Result<Answer, DnsError>) -> Looked {
    match outcome {
        Ok(answer) if answer.records.is_empty() => Looked::Absent(answer),
        Ok(answer) => Looked::Found(answer),
        Err(DnsError::NxDomain) => Looked::Absent(Answer::default()),
        Err(e) => Looked::Failed(e),
    }
}

fn cname_target(probe: &Probe) -> Option<String> {
    if let Looked::Found(a) | Looked::Absent(a) = &probe.txt
        && let Some(last) = a.cname_chain.last()
    {
        return Some(last.clone());
    }
    if let Looked::Found(a) = &probe.cname {
        return a.records.iter().find_map(|r| match r {
            RecordData::Cname(t) => Some(t.clone()),
            _ => None,
        });
    }
    None
}

/// Builds the `dkim` object.
pub(crate) fn assess(probes: &[Probe], catalogue_available: bool) -> DkimResult {
    let mut findings = Findings::default();
    let mut selectors = Vec::new();
    let mut any_failed = false;
    for probe in probes {
        let target = cname_target(probe);
        let mut view = DkimSelector {
            selector: probe.selector.clone(),
            name: probe.name.clone(),
            found: false,
            is_cname: target.is_some(),
            cname_target: target,
            record: None,
            key_type: None,
            key_bits: None,
            revoked: false,
            usable: false,
            lookup_failed: probe.txt.failed(),
            problems: Vec::new(),
        };
        if let Looked::Found(answer) = &probe.txt {
            let values = txt_values(answer);
            let keys: Vec<&String> = values
                .iter()
                .filter(|v| {
                    let l = v.to_ascii_lowercase();
                    l.contains("p=") || l.trim_start().starts_with("v=dkim1")
                })
                .collect();
            if keys.len() > 1 {
                findings.warning("multiple_key_records");
            }
            if let Some(text) = keys.first().copied().or(values.first()) {
                let key = dkim::parse(text);
                for p in &key.problems {
                    match p.severity {
                        Severity::Error => findings.error(p.code.as_str()),
                        Severity::Warning => findings.warning(p.code.as_str()),
                    }
                    view.problems.push(p.code.as_str().to_string());
                }
                view.found = true;
                view.record = Some(text.clone());
                view.key_type = Some(match &key.key_type {
                    KeyType::Rsa => "rsa".to_string(),
                    KeyType::Ed25519 => "ed25519".to_string(),
                    KeyType::Unknown(k) => k.clone(),
                });
                view.key_bits = key.key_bits();
                view.revoked = key.public_key == PublicKey::Revoked;
                view.usable = key.is_usable();
            }
        }
        any_failed |= view.lookup_failed;
        if view.is_cname {
            findings.info("selector_is_cname");
        }
        if view.found || view.is_cname || view.lookup_failed {
            selectors.push(view);
        }
    }
    let found_any = selectors.iter().any(|s| s.found);
    let usable_any = selectors.iter().any(|s| s.usable);
    if !catalogue_available {
        findings.error("probe_catalogue_unavailable");
    }
    if !found_any {
        if any_failed {
            findings.warning(DNS_LOOKUP_FAILED);
        } else if catalogue_available {
            findings.error("no_dkim_key_found");
        }
    } else if !usable_any {
        findings.error("no_usable_dkim_key");
    }
    if any_failed && usable_any {
        findings.info("selector_lookup_failed");
    }
    let status = if catalogue_available {
        findings.verdict()
    } else {
        Verdict::Error
    };
    DkimResult {
        assessment: findings.verdict_with(Dimension::Dkim, status),
        catalogue_available,
        probed_count: probes.len(),
        found_selectors: selectors
            .iter()
            .filter(|s| s.found)
            .map(|s| s.selector.clone())
            .collect(),
        selectors,
    }
}
