//! From an [`Observation`] to a [`Verdict`]: full monitoring, not monitored (with the SPEC §2.1
//! `monitoring_failure_reason` and `monitoring_failure_detail`), or indeterminate.
//!
//! Why pure: the rules decide whether a customer is told their monitoring broke, so each one is
//! tested on hand-built observations as well as through the DNS fixture.
//!
//! The rules, first match wins:
//!
//! | Observation | Verdict |
//! |---|---|
//! | the name is not a DNS name, or `NS <domain>` is NXDOMAIN | `nameservers_unresolvable` |
//! | the `_dmarc` lookup failed | indeterminate |
//! | several `v=DMARC1` records | `dmarc_multiple_records` (receivers apply no DMARC at all) |
//! | one record, but a TXT stands where the CNAME delegation was expected | `dmarc_record_added_as_txt_not_cname` |
//! | one record that gives no DMARC processing | `dmarc_record_invalid` |
//! | one record without Mailward's address in `rua` | `dmarc_record_missing_mailward_rua` |
//! | one usable record with the address | full monitoring, with its `p` |
//! | no record, but TXT that almost is one (`v=dmarc1`, `p=…; v=DMARC1`) | `dmarc_record_added_as_txt_not_cname` when a CNAME was expected, else `dmarc_record_invalid` |
//! | no record, the name servers answered, only the parent walk failed | no own record: not monitored (`dmarc_record_missing`, or the `dmarc_record_on_parent_only` already known) |
//! | no record and the name-server or own-record lookup failed | indeterminate |
//! | no record, a parent domain has one | `dmarc_record_on_parent_only` |
//! | no record anywhere | `dmarc_record_missing` |
//!
//! Choices, with the reason:
//! * A failed lookup makes the verdict indeterminate whenever it could change the answer: a
//!   negative conclusion ("missing", "parent only") is only drawn when every lookup behind it
//!   answered. A positive finding about a record we did read (multiple, invalid, missing rua,
//!   full) stands even if the NS lookup failed, because the answer proves the servers respond.
//! * A CNAME to some other target than the expected one is judged on the record it leads to:
//!   reports still reach Mailward when the record carries the address, and the SPEC has no
//!   reason for "delegated elsewhere". The observation keeps the chain as evidence.
//! * Multiple records win over "TXT instead of CNAME": receivers see no DMARC at all, which is
//!   the more serious finding and the one the customer must fix first.
//! * `record_count` in the detail counts the records the observation is about: the `v=DMARC1`
//!   records at `_dmarc.<domain>` (0 when missing), the near misses for an unparsable record, and
//!   1 for the parent's record; `from_hostname` is where that record was read (the CNAME target
//!   when delegated, the parent's `_dmarc` host for `dmarc_record_on_parent_only`, the domain for
//!   `nameservers_unresolvable`); `expected_rua` is always Mailward's address.

use crate::observe::{
    Delegation, DmarcOutcome, LookupFailure, NameserverOutcome, Observation, ParentOutcome,
    TransientFailure,
};
use mailward_domain::domain::{FailureDetail, FailureReason, Policy};
use serde::{Deserialize, Serialize};

/// The outcome of one evaluation, input to [`crate::step`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Exactly one usable record carrying Mailward's report address (through the expected
    /// delegation when one is expected).
    FullMonitoring {
        /// The record's `p` (`none` when treated as none).
        policy: Policy,
    },
    /// Monitoring is not in place, for a definite reason.
    NotMonitored {
        /// The SPEC §2.1 reason.
        reason: FailureReason,
        /// The evidence (SPEC §2.1 `monitoring_failure_detail`).
        detail: FailureDetail,
        /// The policy in force anyway (the record's own `p` or the parent's `sp`/`np`); `None`
        /// when no usable record applies. Kept so `dmarc_policy` follows DNS even while
        /// monitoring is broken.
        policy: Option<Policy>,
    },
    /// The domain has no DMARC record of its own (its servers said so), but the walk up to its
    /// parents failed, so whether one of them publishes a record is unknown. Monitoring is not in
    /// place either way (a parent's record never carries this domain's report address); the
    /// state machine keeps a known `dmarc_record_on_parent_only` and the policy it knew, and
    /// otherwise says `dmarc_record_missing`.
    NoOwnRecord {
        /// The evidence, as for `dmarc_record_missing`.
        detail: FailureDetail,
    },
    /// DNS failed in a way that leaves the answer unknown; the state machine changes nothing.
    Indeterminate {
        /// Which lookups failed and how, for logs and support.
        why: String,
    },
}

/// Classifies an observation; see the module docs for the rules.
pub fn classify(observation: &Observation) -> Verdict {
    let o = observation;
    let expected_rua = (!o.expected_rua.is_empty()).then(|| o.expected_rua.clone());
    let not_monitored = |reason, observed: Option<String>, from: &str, count: Option<usize>| {
        Verdict::NotMonitored {
            reason,
            detail: FailureDetail {
                observed,
                expected_rua: expected_rua.clone(),
                from_hostname: Some(from.to_string()),
                record_count: count.map(|c| u32::try_from(c).unwrap_or(u32::MAX)),
            },
            policy: o.policy,
        }
    };

    match &o.nameservers {
        NameserverOutcome::InvalidName => {
            return not_monitored(
                FailureReason::NameserversUnresolvable,
                Some("invalid domain name".into()),
                &o.domain,
                None,
            );
        }
        NameserverOutcome::DomainDoesNotExist => {
            return not_monitored(
                FailureReason::NameserversUnresolvable,
                Some("NXDOMAIN".into()),
                &o.domain,
                None,
            );
        }
        NameserverOutcome::Answered { .. } | NameserverOutcome::Failed { .. } => {}
    }

    match o.dmarc {
        DmarcOutcome::Failed => indeterminate(&o.transient_failures),
        DmarcOutcome::MultipleRecords => not_monitored(
            FailureReason::DmarcMultipleRecords,
            Some(o.records.join("\n")),
            &o.record_host,
            Some(o.record_count),
        ),
        DmarcOutcome::Found => {
            let observed = o.records.first().cloned();
            let count = Some(o.record_count);
            if o.delegation == Delegation::TxtInsteadOfCname {
                not_monitored(
                    FailureReason::DmarcRecordAddedAsTxtNotCname,
                    observed,
                    &o.dmarc_host,
                    count,
                )
            } else if o.record_usable != Some(true) {
                not_monitored(
                    FailureReason::DmarcRecordInvalid,
                    observed,
                    &o.record_host,
                    count,
                )
            } else if !o.has_monitoring_rua {
                not_monitored(
                    FailureReason::DmarcRecordMissingMailwardRua,
                    observed,
                    &o.record_host,
                    count,
                )
            } else {
                Verdict::FullMonitoring {
                    policy: o.policy.unwrap_or(Policy::None),
                }
            }
        }
        DmarcOutcome::NoRecord => {
            if !o.near_misses.is_empty() {
                let reason = if o.delegation == Delegation::TxtInsteadOfCname {
                    FailureReason::DmarcRecordAddedAsTxtNotCname
                } else {
                    FailureReason::DmarcRecordInvalid
                };
                return not_monitored(
                    reason,
                    Some(o.near_misses.join("\n")),
                    &o.record_host,
                    Some(o.near_misses.len()),
                );
            }
            // Only the parents could not be asked: the domain's own answer stands.
            let parents_only = o.transient_failures.iter().all(|f| f.step == "parent_walk");
            if !o.transient_failures.is_empty()
                && parents_only
                && matches!(o.nameservers, NameserverOutcome::Answered { .. })
            {
                return Verdict::NoOwnRecord {
                    detail: FailureDetail {
                        observed: o.cname_chain.last().map(|t| format!("CNAME {t}")),
                        expected_rua: expected_rua.clone(),
                        from_hostname: Some(o.dmarc_host.clone()),
                        record_count: Some(0),
                    },
                };
            }
            if !o.transient_failures.is_empty() {
                return indeterminate(&o.transient_failures);
            }
            match &o.parent {
                ParentOutcome::Record { host, record, .. } => not_monitored(
                    FailureReason::DmarcRecordOnParentOnly,
                    Some(record.clone()),
                    host,
                    Some(1),
                ),
                ParentOutcome::Failed { .. } => indeterminate(&o.transient_failures),
                ParentOutcome::NoRecord | ParentOutcome::NotChecked => {
                    let observed = o.cname_chain.last().map(|t| format!("CNAME {t}"));
                    not_monitored(
                        FailureReason::DmarcRecordMissing,
                        observed,
                        &o.dmarc_host,
                        Some(0),
                    )
                }
            }
        }
    }
}

/// A lame delegation made definite: when the domain's name servers keep *answering* SERVFAIL or
/// REFUSED (not timing out) for `after` sweeps in a row, counting this one, the verdict becomes
/// `nameservers_unresolvable`. Why: a broken delegation otherwise stays indeterminate forever,
/// so a set-up domain would never report the loss and a pending one never fail. A timeout never
/// escalates (SPEC: a DNS timeout alone never fails a domain). `streak` is the domain's
/// `consecutive_indeterminate` before this sweep.
pub fn escalate_lame_delegation(
    observation: &Observation,
    verdict: Verdict,
    streak: u32,
    after: u32,
) -> Verdict {
    let answered_failure = match &observation.nameservers {
        NameserverOutcome::Failed { failure } => {
            matches!(failure, LookupFailure::ServFail | LookupFailure::Refused)
        }
        _ => false,
    };
    if !answered_failure
        || !matches!(verdict, Verdict::Indeterminate { .. })
        || streak.saturating_add(1) < after.max(1)
    {
        return verdict;
    }
    let failure = match &observation.nameservers {
        NameserverOutcome::Failed { failure } => failure.code(),
        _ => "servfail",
    };
    Verdict::NotMonitored {
        reason: FailureReason::NameserversUnresolvable,
        detail: FailureDetail {
            observed: Some(format!(
                "the name servers answered {failure} for {after} sweeps in a row"
            )),
            expected_rua: (!observation.expected_rua.is_empty())
                .then(|| observation.expected_rua.clone()),
            from_hostname: Some(observation.domain.clone()),
            record_count: None,
        },
        policy: None,
    }
}

fn indeterminate(failures: &[TransientFailure]) -> Verdict {
    let why = if failures.is_empty() {
        "a DNS lookup failed".to_string()
    } else {
        failures
            .iter()
            .map(|f| format!("{} {} ({})", f.failure.code(), f.name, f.step))
            .collect::<Vec<_>>()
            .join("; ")
    };
    Verdict::Indeterminate { why }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Observation {
        Observation {
            domain: "example.test".into(),
            dmarc_host: "_dmarc.example.test".into(),
            expected_rua: "tok@reports.mailward.example".into(),
            nameservers: NameserverOutcome::Answered { hosts: vec![] },
            dmarc: DmarcOutcome::Found,
            records: vec!["v=DMARC1; p=reject; rua=mailto:tok@reports.mailward.example".into()],
            record_count: 1,
            near_misses: vec![],
            record_host: "_dmarc.example.test".into(),
            cname_chain: vec![],
            delegation: Delegation::NotExpected,
            record_usable: Some(true),
            rua: vec!["mailto:tok@reports.mailward.example".into()],
            has_monitoring_rua: true,
            parent: ParentOutcome::NotChecked,
            policy: Some(Policy::Reject),
            transient_failures: vec![],
        }
    }

    #[test]
    fn a_lame_delegation_escalates_after_the_streak_but_a_timeout_never_does() {
        let mut o = base();
        o.nameservers = NameserverOutcome::Failed {
            failure: LookupFailure::ServFail,
        };
        o.dmarc = DmarcOutcome::Failed;
        let verdict = classify(&o);
        assert!(matches!(verdict, Verdict::Indeterminate { .. }));
        let early = escalate_lame_delegation(&o, verdict.clone(), 1, 3);
        assert!(matches!(early, Verdict::Indeterminate { .. }));
        let late = escalate_lame_delegation(&o, verdict.clone(), 2, 3);
        assert_eq!(reason(&late), Some(FailureReason::NameserversUnresolvable));
        o.nameservers = NameserverOutcome::Failed {
            failure: LookupFailure::Timeout,
        };
        let timeout = escalate_lame_delegation(&o, classify(&o), 1000, 3);
        assert!(matches!(timeout, Verdict::Indeterminate { .. }));
    }

    fn reason(v: &Verdict) -> Option<FailureReason> {
        match v {
            Verdict::NotMonitored { reason, .. } => Some(*reason),
            _ => None,
        }
    }

    #[test]
    fn full_monitoring_keeps_the_policy_even_if_ns_failed() {
        let mut o = base();
        o.nameservers = NameserverOutcome::Failed {
            failure: LookupFailure::Timeout,
        };
        assert_eq!(
            classify(&o),
            Verdict::FullMonitoring {
                policy: Policy::Reject
            }
        );
    }

    #[test]
    fn missing_record_with_a_failed_ns_lookup_is_indeterminate() {
        let mut o = base();
        o.dmarc = DmarcOutcome::NoRecord;
        o.records.clear();
        o.record_count = 0;
        o.parent = ParentOutcome::NoRecord;
        assert_eq!(
            reason(&classify(&o)),
            Some(FailureReason::DmarcRecordMissing)
        );
        o.nameservers = NameserverOutcome::Failed {
            failure: LookupFailure::ServFail,
        };
        o.transient_failures.push(TransientFailure {
            step: "nameservers".into(),
            name: "example.test".into(),
            failure: LookupFailure::ServFail,
        });
        assert!(matches!(classify(&o), Verdict::Indeterminate { .. }));
    }

    #[test]
    fn near_miss_is_invalid_or_txt_instead_of_cname() {
        let mut o = base();
        o.dmarc = DmarcOutcome::NoRecord;
        o.records.clear();
        o.record_count = 0;
        o.near_misses = vec!["v=dmarc1 p=none".into()];
        assert_eq!(
            reason(&classify(&o)),
            Some(FailureReason::DmarcRecordInvalid)
        );
        o.delegation = Delegation::TxtInsteadOfCname;
        assert_eq!(
            reason(&classify(&o)),
            Some(FailureReason::DmarcRecordAddedAsTxtNotCname)
        );
    }

    #[test]
    fn invalid_name_is_unresolvable() {
        let mut o = base();
        o.nameservers = NameserverOutcome::InvalidName;
        o.dmarc = DmarcOutcome::Failed;
        assert_eq!(
            reason(&classify(&o)),
            Some(FailureReason::NameserversUnresolvable)
        );
    }

    #[test]
    fn indeterminate_names_the_failures() {
        let mut o = base();
        o.dmarc = DmarcOutcome::Failed;
        o.transient_failures.push(TransientFailure {
            step: "dmarc_record".into(),
            name: "_dmarc.example.test".into(),
            failure: LookupFailure::Timeout,
        });
        let Verdict::Indeterminate { why } = classify(&o) else {
            panic!("not indeterminate");
        };
        assert!(why.contains("timeout _dmarc.example.test"), "{why}");
    }
}
