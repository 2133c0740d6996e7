//! Comparing planned records with live DNS, the warnings that follow, and `all_verified`.
//!
//! # Matching rules ("live DNS serves exactly this value")
//!
//! * TXT character-strings are joined with no separator first (RFC 7208 §3.3, RFC 6376 §3.6.2.2).
//! * SPF: the whitespace-separated terms must be the same, in the same order, compared
//!   case-insensitively (mechanism names and domain names are case-insensitive; order matters
//!   for evaluation).
//! * Tag-list records (DMARC, DKIM, MTA-STS, TLS-RPT, BIMI): split on `;`, empty parts ignored,
//!   tag names compared case-insensitively, values compared exactly after removing all
//!   whitespace (none of the values Mailward generates contains any; DKIM allows folding
//!   inside `p=`), tag order not significant, the same tags on both sides.
//! * CNAME: targets compared case-insensitively without the trailing dot.
//! * Only records "of the kind" count at a host: TXT starting with `v=DMARC1`, `v=spf1`,
//!   `v=STSv1`, `v=TLSRPTv1`, `v=BIMI1` (case-insensitive); every TXT at a DKIM selector host.
//!   Other TXT records (site verifications at the apex, ...) are left alone.
//! * A record is `verified` only when it is the *only* one of its kind at the host: two DMARC
//!   or two SPF records mean receivers use neither. A match next to duplicates is
//!   `already_published` true (it needs no action itself) with status `verifying`, and the
//!   duplicates get delete entries.
//!
//! # Actions
//!
//! * `create`: nothing of the kind at the host (or nominal, when already published).
//! * `replace`: a record of the kind is there with another value (TXT), or the CNAME points
//!   elsewhere, or the host has address records where the MTA-STS CNAME must go.
//! * `delete` (extra entries, listed right after the record they concern, `required` true,
//!   `already_published` false, status `pending`): every further record of the kind at the
//!   host (a second `v=spf1`, a second DMARC record); a TXT at a host that must become a CNAME
//!   (the DMARC TXT when delegation is wanted); a CNAME at a host that must hold a TXT whose
//!   target does not serve the planned value.
//! * Lookup failed (timeout, SERVFAIL, REFUSED): `already_published` null, action `create` as
//!   a static hint, no delete entries.
//!
//! # Status
//!
//! `verified` when published; otherwise `drifted` when the purpose was verified before;
//! otherwise `verifying` when something of the kind is there (old value, TXT where a CNAME is
//! expected, a duplicate); otherwise `pending`. A failed lookup never flips a status to
//! `drifted`: it gives `verifying` for a purpose verified before, `pending` otherwise.

use crate::expected::{SPF_LOOKUP_LIMIT, build, norm_name};
use crate::model::{
    Action, ExpectedRecord, PlanContext, Purpose, RecordKind, RecordState, Status, Warning,
};
use mailward_domain::dns::{DnsError, DnsResolver, RecordData, RecordType};
use mailward_domain::domain::Policy;

/// Compares each planned record with live DNS (through `resolver` as given: pass
/// `&Uncached(r)` to bypass caches; [`crate::verify`] always does). Lookups run concurrently.
/// The SPF record's lookup count is measured through its whole include tree.
pub async fn compare(resolver: &dyn DnsResolver, expected: &[ExpectedRecord]) -> Vec<RecordState> {
    compare_with(resolver, expected, true).await
}

pub(crate) async fn compare_with(
    resolver: &dyn DnsResolver,
    expected: &[ExpectedRecord],
    count_spf_lookups: bool,
) -> Vec<RecordState> {
    let checks = expected
        .iter()
        .map(|r| check(resolver, r, count_spf_lookups));
    futures::future::join_all(checks)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// What one TXT or CNAME lookup found.
enum Live {
    /// A definitive answer (possibly empty): values and the CNAME chain followed.
    Answer {
        values: Vec<String>,
        cname: Option<String>,
    },
    /// The lookup could not complete.
    Unknown,
}

async fn lookup(resolver: &dyn DnsResolver, host: &str, rtype: RecordType) -> Live {
    match resolver.lookup(host, rtype).await {
        Ok(answer) => Live::Answer {
            values: answer
                .records
                .iter()
                .filter_map(|r| match r {
                    RecordData::Txt(_) => r.txt_value(),
                    RecordData::Cname(t) => Some(norm_name(t)),
                    RecordData::A(_) | RecordData::Aaaa(_) => r.ip().map(|ip| ip.to_string()),
                    _ => None,
                })
                .collect(),
            cname: answer.cname_chain.first().map(|c| norm_name(c)),
        },
        Err(DnsError::NxDomain) => Live::Answer {
            values: Vec::new(),
            cname: None,
        },
        Err(_) => Live::Unknown,
    }
}

fn status_for(record: &ExpectedRecord, published: bool, something_there: bool) -> Status {
    if published {
        Status::Verified
    } else if record.previously_verified {
        Status::Drifted
    } else if something_there {
        Status::Verifying
    } else {
        Status::Pending
    }
}

fn unknown(record: &ExpectedRecord) -> RecordState {
    RecordState {
        record: record.clone(),
        action: Action::Create,
        status: if record.previously_verified {
            Status::Verifying
        } else {
            Status::Pending
        },
        already_published: None,
        live_values: Vec::new(),
        spf_lookup_count: None,
    }
}

fn delete(record: &ExpectedRecord, kind: RecordKind, value: String) -> RecordState {
    RecordState {
        record: ExpectedRecord {
            purpose: record.purpose,
            record_type: kind,
            host: record.host.clone(),
            relative_host: record.relative_host.clone(),
            value: value.clone(),
            ttl: record.ttl,
            required: true,
            alternatives: Vec::new(),
            previously_verified: false,
        },
        action: Action::Delete,
        status: Status::Pending,
        already_published: Some(false),
        live_values: vec![value],
        spf_lookup_count: None,
    }
}

async fn check(
    resolver: &dyn DnsResolver,
    record: &ExpectedRecord,
    count_spf_lookups: bool,
) -> Vec<RecordState> {
    let mut states = match record.record_type {
        RecordKind::Cname => check_cname(resolver, record).await,
        RecordKind::Txt => check_txt(resolver, record).await,
        // Never planned; nothing to compare against.
        RecordKind::Ns => vec![unknown(record)],
    };
    // The include walk only when the domain's own TXT lookup answered: when DNS failed for the
    // domain, walking the planned includes one by one would only add a timeout per include.
    let answered = states
        .first()
        .is_some_and(|s| s.already_published.is_some());
    if count_spf_lookups && record.purpose == Purpose::Spf && answered {
        let audit = mailward_spf::audit_record(resolver, &record.host, &record.value).await;
        if let Some(first) = states.first_mut() {
            first.spf_lookup_count = Some(audit.lookup_count);
        }
    }
    states
}

async fn check_txt(resolver: &dyn DnsResolver, record: &ExpectedRecord) -> Vec<RecordState> {
    let Live::Answer { values, cname } = lookup(resolver, &record.host, RecordType::Txt).await
    else {
        return vec![unknown(record)];
    };
    let of_kind: Vec<String> = values
        .into_iter()
        .filter(|v| is_of_kind(record.purpose, v))
        .collect();
    let matching = of_kind.iter().position(|v| {
        std::iter::once(&record.value)
            .chain(&record.alternatives)
            .any(|want| txt_matches(record.purpose, want, v))
    });
    let mut extra = Vec::new();
    if let Some(target) = cname {
        // The TXT comes from the CNAME's target: served exactly, it is published; otherwise the
        // CNAME has to go before a TXT can be published at this host.
        let published = matching.is_some() && of_kind.len() == 1;
        if !published {
            extra.push(delete(record, RecordKind::Cname, target));
        }
        let mut states = vec![RecordState {
            record: record.clone(),
            action: Action::Create,
            status: status_for(record, published, true),
            already_published: Some(published),
            live_values: of_kind,
            spf_lookup_count: None,
        }];
        states.extend(extra);
        return states;
    }
    let published = matching.is_some() && of_kind.len() == 1;
    // The record to keep (the match, or the first one, which is replaced); every other record
    // of the kind must be deleted.
    let keep = matching.or(if of_kind.is_empty() { None } else { Some(0) });
    for (i, v) in of_kind.iter().enumerate() {
        if Some(i) != keep {
            extra.push(delete(record, RecordKind::Txt, v.clone()));
        }
    }
    // A match next to duplicates is served exactly (already published, nothing to do on it)
    // but not yet verified: the delete entries carry the work.
    let action = if matching.is_some() || of_kind.is_empty() {
        Action::Create
    } else {
        Action::Replace
    };
    let mut states = vec![RecordState {
        record: record.clone(),
        action,
        status: status_for(record, published, !of_kind.is_empty()),
        already_published: Some(matching.is_some()),
        live_values: of_kind,
        spf_lookup_count: None,
    }];
    states.extend(extra);
    states
}

async fn check_cname(resolver: &dyn DnsResolver, record: &ExpectedRecord) -> Vec<RecordState> {
    let Live::Answer { values, .. } = lookup(resolver, &record.host, RecordType::Cname).await
    else {
        return vec![unknown(record)];
    };
    let want = norm_name(&record.value);
    if let Some(target) = values.first() {
        let published = *target == want;
        return vec![RecordState {
            record: record.clone(),
            action: if published {
                Action::Create
            } else {
                Action::Replace
            },
            status: status_for(record, published, true),
            already_published: Some(published),
            live_values: values,
            spf_lookup_count: None,
        }];
    }
    // No CNAME: other data at the host must go first (a CNAME cannot coexist with it).
    let mut extra = Vec::new();
    let mut live_values = Vec::new();
    let mut action = Action::Create;
    if let Live::Answer {
        values,
        cname: None,
    } = lookup(resolver, &record.host, RecordType::Txt).await
    {
        for v in values {
            live_values.push(v.clone());
            extra.push(delete(record, RecordKind::Txt, v));
        }
    }
    if record.purpose == Purpose::MtaStsPolicy {
        // A self-hosted policy server: its address records are replaced by the CNAME.
        for rtype in [RecordType::A, RecordType::Aaaa] {
            if let Live::Answer {
                values,
                cname: None,
            } = lookup(resolver, &record.host, rtype).await
                && !values.is_empty()
            {
                action = Action::Replace;
                live_values.extend(values);
            }
        }
    }
    let mut states = vec![RecordState {
        record: record.clone(),
        action,
        status: status_for(record, false, !live_values.is_empty()),
        already_published: Some(false),
        live_values,
        spf_lookup_count: None,
    }];
    states.extend(extra);
    states
}

/// Whether a TXT value at the host is a record of the purpose's kind.
fn is_of_kind(purpose: Purpose, value: &str) -> bool {
    let prefix = match purpose {
        Purpose::Dmarc => "v=DMARC1",
        Purpose::Spf => return mailward_spf::parse::is_spf_record(value.trim().as_bytes()),
        Purpose::Dkim => return true,
        Purpose::MtaSts => "v=STSv1",
        Purpose::TlsRpt => "v=TLSRPTv1",
        Purpose::Bimi => "v=BIMI1",
        Purpose::MtaStsPolicy => return false,
    };
    let compact: String = value
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .take(prefix.len())
        .collect();
    compact.eq_ignore_ascii_case(prefix)
}

/// The matching rules of the module docs.
pub(crate) fn txt_matches(purpose: Purpose, expected: &str, live: &str) -> bool {
    if purpose == Purpose::Spf {
        let a: Vec<&str> = expected.split_whitespace().collect();
        let b: Vec<&str> = live.split_whitespace().collect();
        return a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.eq_ignore_ascii_case(y));
    }
    tags(expected) == tags(live)
}

fn tags(value: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = value
        .split(';')
        .filter_map(|part| {
            let compact: String = part.chars().filter(|c| !c.is_whitespace()).collect();
            if compact.is_empty() {
                return None;
            }
            Some(match compact.split_once('=') {
                Some((name, v)) => (name.to_ascii_lowercase(), v.to_string()),
                None => (compact.to_ascii_lowercase(), String::new()),
            })
        })
        .collect();
    out.sort();
    out
}

/// Advice to read before publishing: the generation warnings of [`crate::expected_records`]
/// plus what the comparison shows. Codes:
///
/// * `enforcing_policy_without_working_auth`: policy quarantine/reject while neither the SPF
///   record nor any DKIM key is verified: legitimate mail would fail DMARC.
/// * `spf_lookup_limit`: the planned SPF record needs more than 10 lookups (through its
///   include tree when compared, else its own terms).
/// * `dns_lookup_failed`: some lookups did not complete; their `already_published` is null.
/// * `records_to_delete`: live records conflict with the plan (see the delete entries).
/// * generation: `invalid_report_address`, `dmarc_record_unavailable`, `dmarc_pct_invalid`,
///   `external_report_destination`, `spf_target_invalid`, `spf_live_record_invalid`,
///   `spf_permissive_all_replaced`, `spf_no_senders`, `dkim_key_invalid`, `mta_sts_invalid`,
///   `tls_rpt_invalid`, `bimi_logo_missing`, `bimi_invalid`, `bimi_record_warning`,
///   `bimi_requires_enforcement`.
pub fn warnings(ctx: &PlanContext, states: &[RecordState]) -> Vec<Warning> {
    let (_, mut out) = build(ctx);
    // A parked domain sends no mail: enforcement without working authentication is the point.
    if ctx.dmarc.policy != Policy::None && !ctx.parked {
        let works = states.iter().any(|s| {
            matches!(s.record.purpose, Purpose::Spf | Purpose::Dkim)
                && s.action != Action::Delete
                && s.status == Status::Verified
        });
        if !works {
            out.push(Warning::new(
                "enforcing_policy_without_working_auth",
                format!(
                    "the DMARC policy is {} but neither SPF nor DKIM is verified for this domain: legitimate mail would fail DMARC; publish SPF and DKIM first or use p=none",
                    ctx.dmarc.policy.as_str()
                ),
            ));
        }
    }
    if let Some(count) = states.iter().find_map(|s| s.spf_lookup_count) {
        out.retain(|w| w.code != "spf_lookup_limit");
        if count > SPF_LOOKUP_LIMIT {
            out.push(Warning::new(
                "spf_lookup_limit",
                format!("the planned SPF record needs {count} DNS lookups through its includes, over the limit of {SPF_LOOKUP_LIMIT}: receivers will return permerror; enable SPF flattening or remove senders"),
            ));
        }
    }
    let failed: Vec<&str> = states
        .iter()
        .filter(|s| s.already_published.is_none())
        .map(|s| s.record.host.as_str())
        .collect();
    if !failed.is_empty() {
        out.push(Warning::new(
            "dns_lookup_failed",
            format!(
                "live DNS could not be read for {}; their actions are best-effort hints",
                failed.join(", ")
            ),
        ));
    }
    let deletes: Vec<String> = states
        .iter()
        .filter(|s| s.action == Action::Delete)
        .map(|s| format!("{} {}", s.record.host, type_name(s.record.record_type)))
        .collect();
    if !deletes.is_empty() {
        out.push(Warning::new(
            "records_to_delete",
            format!(
                "remove the conflicting records first: {}",
                deletes.join(", ")
            ),
        ));
    }
    out
}

fn type_name(kind: RecordKind) -> &'static str {
    match kind {
        RecordKind::Txt => "TXT",
        RecordKind::Cname => "CNAME",
        RecordKind::Ns => "NS",
    }
}

/// True when every required record (delete entries included: a conflicting record still live
/// blocks it) is `verified` (SPEC §4.1 `all_verified`).
pub fn all_verified(states: &[RecordState]) -> bool {
    states
        .iter()
        .filter(|s| s.record.required)
        .all(|s| s.status == Status::Verified)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_lists_ignore_order_space_and_name_case() {
        assert!(txt_matches(
            Purpose::Dmarc,
            "v=DMARC1; p=none; rua=mailto:a@b.test",
            "V=DMARC1;rua = mailto:a@b.test ; P=none;"
        ));
        assert!(!txt_matches(
            Purpose::Dmarc,
            "v=DMARC1; p=none",
            "v=DMARC1; p=None"
        ));
        assert!(!txt_matches(
            Purpose::Dmarc,
            "v=DMARC1; p=none",
            "v=DMARC1; p=none; t=y"
        ));
    }

    #[test]
    fn spf_terms_are_ordered_and_case_insensitive() {
        assert!(txt_matches(
            Purpose::Spf,
            "v=spf1 include:a.test ~all",
            "V=SPF1  INCLUDE:A.test ~all"
        ));
        assert!(!txt_matches(
            Purpose::Spf,
            "v=spf1 a mx ~all",
            "v=spf1 mx a ~all"
        ));
    }

    #[test]
    fn kinds_are_recognised() {
        assert!(is_of_kind(Purpose::Dmarc, " v = dmarc1; p=none"));
        assert!(!is_of_kind(Purpose::Spf, "v=spf10"));
        assert!(is_of_kind(Purpose::Spf, "v=spf1 -all"));
        assert!(is_of_kind(Purpose::Bimi, "v=BIMI1; l="));
    }
}
