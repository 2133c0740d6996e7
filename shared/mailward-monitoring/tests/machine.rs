//! Table-driven tests of the monitoring state machine: every stated move of SPEC §3 and every
//! choice documented in `machine`'s module docs.

use mailward_domain::domain::{FailureDetail, FailureReason, MonitoringStatus, Policy, ScoreBand};
use mailward_monitoring::{
    MonitoringEvent, MonitoringState, SweepRules, Verdict, events_to_names, step,
};
use time::{Duration, OffsetDateTime, macros::datetime};

const T0: OffsetDateTime = datetime!(2026-03-01 00:00 UTC);

fn state(status: MonitoringStatus) -> MonitoringState {
    let mut s = MonitoringState::new(T0, 50);
    s.status = status;
    match status {
        MonitoringStatus::Setup | MonitoringStatus::Drifted => {
            s.dmarc_verified_at = Some(T0 + Duration::hours(1));
        }
        MonitoringStatus::Pending => s.pending_since = Some(T0),
        _ => {}
    }
    if matches!(status, MonitoringStatus::Drifted | MonitoringStatus::Failed) {
        s.failure_reason = Some(FailureReason::DmarcRecordMissingMailwardRua);
        s.failure_detail = Some(detail("old"));
    }
    s
}

fn detail(observed: &str) -> FailureDetail {
    FailureDetail {
        observed: Some(observed.into()),
        expected_rua: Some("tok@reports.mailward.example".into()),
        from_hostname: Some("_dmarc.example.test".into()),
        record_count: Some(1),
    }
}

fn full(policy: Policy) -> Verdict {
    Verdict::FullMonitoring { policy }
}

fn not(reason: FailureReason) -> Verdict {
    Verdict::NotMonitored {
        reason,
        detail: detail("v=DMARC1; p=none"),
        policy: Some(Policy::None),
    }
}

fn timeout() -> Verdict {
    Verdict::Indeterminate {
        why: "timeout _dmarc.example.test (dmarc_record)".into(),
    }
}

struct Case {
    name: &'static str,
    previous: MonitoringState,
    verdict: Verdict,
    hours_after_t0: i64,
    status: MonitoringStatus,
    reason: Option<FailureReason>,
    events: &'static [&'static str],
}

fn case(
    name: &'static str,
    previous: MonitoringState,
    verdict: Verdict,
    hours_after_t0: i64,
    status: MonitoringStatus,
    reason: Option<FailureReason>,
    events: &'static [&'static str],
) -> Case {
    Case {
        name,
        previous,
        verdict,
        hours_after_t0,
        status,
        reason,
        events,
    }
}

const UPDATED: &str = "domain.updated";

#[test]
fn every_move() {
    use FailureReason as R;
    use MonitoringStatus as S;
    let verified_failed = {
        let mut s = state(S::Failed);
        s.dmarc_verified_at = Some(T0 + Duration::hours(1));
        s
    };
    let legacy_none = {
        let mut s = state(S::None);
        s.created_at = T0 - Duration::days(400);
        s
    };
    let cases = [
        // Stated: any -> setup the first time, activated.
        case(
            "none to setup",
            state(S::None),
            full(Policy::None),
            1,
            S::Setup,
            None,
            &["domain.monitoring.activated", UPDATED],
        ),
        case(
            "pending to setup",
            state(S::Pending),
            full(Policy::None),
            1,
            S::Setup,
            None,
            &["domain.monitoring.activated", UPDATED],
        ),
        case(
            "never-set-up failed to setup activates, not recovers",
            state(S::Failed),
            full(Policy::None),
            200,
            S::Setup,
            None,
            &["domain.monitoring.activated", UPDATED],
        ),
        // Stated: setup -> drifted when records no longer resolve as expected.
        case(
            "setup rua removed drifts",
            state(S::Setup),
            not(R::DmarcRecordMissingMailwardRua),
            5,
            S::Drifted,
            Some(R::DmarcRecordMissingMailwardRua),
            &["domain.monitoring.drifted", UPDATED],
        ),
        case(
            "setup txt replaces cname drifts",
            state(S::Setup),
            not(R::DmarcRecordAddedAsTxtNotCname),
            5,
            S::Drifted,
            Some(R::DmarcRecordAddedAsTxtNotCname),
            &["domain.monitoring.drifted", UPDATED],
        ),
        case(
            "setup invalid drifts",
            state(S::Setup),
            not(R::DmarcRecordInvalid),
            5,
            S::Drifted,
            Some(R::DmarcRecordInvalid),
            &["domain.monitoring.drifted", UPDATED],
        ),
        // Stated: setup -> failed when lost entirely.
        case(
            "setup record missing fails",
            state(S::Setup),
            not(R::DmarcRecordMissing),
            5,
            S::Failed,
            Some(R::DmarcRecordMissing),
            &["domain.monitoring.failed", UPDATED],
        ),
        case(
            "setup multiple records fails",
            state(S::Setup),
            not(R::DmarcMultipleRecords),
            5,
            S::Failed,
            Some(R::DmarcMultipleRecords),
            &["domain.monitoring.failed", UPDATED],
        ),
        case(
            "setup parent only fails",
            state(S::Setup),
            not(R::DmarcRecordOnParentOnly),
            5,
            S::Failed,
            Some(R::DmarcRecordOnParentOnly),
            &["domain.monitoring.failed", UPDATED],
        ),
        case(
            "setup nameservers unresolvable fails",
            state(S::Setup),
            not(R::NameserversUnresolvable),
            5,
            S::Failed,
            Some(R::NameserversUnresolvable),
            &["domain.monitoring.failed", UPDATED],
        ),
        // Choice: none -> pending on the first evaluation that is not full monitoring.
        case(
            "none to pending",
            state(S::None),
            not(R::DmarcRecordMissing),
            0,
            S::Pending,
            None,
            &[UPDATED],
        ),
        case(
            "none to pending even for a domain created long ago",
            legacy_none,
            not(R::DmarcRecordMissing),
            0,
            S::Pending,
            None,
            &[UPDATED],
        ),
        // Choice: the grace window.
        case(
            "pending within grace stays pending",
            state(S::Pending),
            not(R::DmarcRecordMissing),
            71,
            S::Pending,
            None,
            &[],
        ),
        case(
            "pending after grace fails",
            state(S::Pending),
            not(R::DmarcRecordMissing),
            72,
            S::Failed,
            Some(R::DmarcRecordMissing),
            &["domain.monitoring.failed", UPDATED],
        ),
        // Stated: drifted or failed -> setup, recovered.
        case(
            "drifted recovers",
            state(S::Drifted),
            full(Policy::None),
            9,
            S::Setup,
            None,
            &["domain.monitoring.recovered", UPDATED],
        ),
        case(
            "failed after setup recovers",
            verified_failed,
            full(Policy::None),
            9,
            S::Setup,
            None,
            &["domain.monitoring.recovered", UPDATED],
        ),
        // Choice: drifted + loss -> failed; drifted + mismatch stays; failed stays failed.
        case(
            "drifted then record gone fails",
            state(S::Drifted),
            not(R::DmarcRecordMissing),
            9,
            S::Failed,
            Some(R::DmarcRecordMissing),
            &["domain.monitoring.failed", UPDATED],
        ),
        case(
            "drifted with another mismatch stays drifted",
            state(S::Drifted),
            not(R::DmarcRecordInvalid),
            9,
            S::Drifted,
            Some(R::DmarcRecordInvalid),
            &[UPDATED],
        ),
        case(
            "failed with a mismatch stays failed",
            state(S::Failed),
            not(R::DmarcRecordInvalid),
            9,
            S::Failed,
            Some(R::DmarcRecordInvalid),
            &[UPDATED],
        ),
        case(
            "failed unchanged emits nothing",
            {
                let mut s = state(S::Failed);
                s.failure_detail = Some(detail("v=DMARC1; p=none"));
                s
            },
            not(R::DmarcRecordMissingMailwardRua),
            9,
            S::Failed,
            Some(R::DmarcRecordMissingMailwardRua),
            &[],
        ),
        // Choice: indeterminate never changes status.
        case(
            "timeout during setup keeps setup",
            state(S::Setup),
            timeout(),
            5,
            S::Setup,
            None,
            &[],
        ),
        case(
            "timeout while pending past grace keeps pending",
            state(S::Pending),
            timeout(),
            500,
            S::Pending,
            None,
            &[],
        ),
        case(
            "timeout while drifted keeps drifted",
            state(S::Drifted),
            timeout(),
            5,
            S::Drifted,
            Some(R::DmarcRecordMissingMailwardRua),
            &[],
        ),
        case(
            "timeout while failed keeps failed",
            state(S::Failed),
            timeout(),
            5,
            S::Failed,
            Some(R::DmarcRecordMissingMailwardRua),
            &[],
        ),
        case(
            "timeout at first evaluation keeps none",
            state(S::None),
            timeout(),
            0,
            S::None,
            None,
            &[],
        ),
        // Steady state.
        case(
            "setup stays setup silently",
            state(S::Setup),
            full(Policy::None),
            5,
            S::Setup,
            None,
            &[],
        ),
    ];
    let rules = SweepRules::default();
    for c in cases {
        let now = T0 + Duration::hours(c.hours_after_t0);
        let out = step(&c.previous, &c.verdict, c.previous.score, now, &rules);
        assert_eq!(out.next.status, c.status, "{}", c.name);
        assert_eq!(out.next.failure_reason, c.reason, "{}", c.name);
        assert_eq!(
            out.next.failure_detail.is_some(),
            c.reason.is_some(),
            "{}",
            c.name
        );
        assert_eq!(events_to_names(&out.events), c.events, "{}", c.name);
        assert_eq!(out.changed, out.next != c.previous, "{}", c.name);
        if c.status == S::Setup {
            assert!(out.next.dmarc_verified_at.is_some(), "{}", c.name);
        }
        if c.status != S::Pending {
            assert_eq!(out.next.pending_since, None, "{}", c.name);
        }
    }
}

#[test]
fn activated_only_once_and_verified_at_never_reset() {
    let rules = SweepRules::default();
    let mut s = MonitoringState::new(T0, 50);
    let t1 = T0 + Duration::hours(1);
    let first = step(&s, &full(Policy::None), 50, t1, &rules);
    assert_eq!(first.next.dmarc_verified_at, Some(t1));
    assert!(first.events.contains(&MonitoringEvent::Activated));
    s = first.next;
    // Drift, fail, recover, drift again: verified_at stays at t1, activated never again.
    let path = [
        not(FailureReason::DmarcRecordMissingMailwardRua),
        not(FailureReason::DmarcRecordMissing),
        full(Policy::None),
        timeout(),
        not(FailureReason::DmarcRecordInvalid),
        full(Policy::None),
    ];
    for (i, verdict) in path.iter().enumerate() {
        let now = t1 + Duration::hours(i as i64 + 1);
        let out = step(&s, verdict, 50, now, &rules);
        assert_eq!(out.next.dmarc_verified_at, Some(t1), "step {i}");
        assert!(
            !out.events.contains(&MonitoringEvent::Activated),
            "step {i}"
        );
        s = out.next;
    }
    assert_eq!(s.status, MonitoringStatus::Setup);
}

#[test]
fn band_crossing_emits_score_changed_with_previous_attributes() {
    let rules = SweepRules::default();
    let prev = state(MonitoringStatus::Setup); // score 50: bad
    let out = step(
        &prev,
        &full(Policy::None),
        75,
        T0 + Duration::hours(2),
        &rules,
    );
    assert_eq!(
        out.events,
        vec![
            MonitoringEvent::ScoreBandChanged {
                previous_score: 50,
                previous_band: ScoreBand::Bad,
            },
            MonitoringEvent::Updated {
                fields: vec!["score".into(), "score_band".into()],
            },
        ]
    );
    // Within the band: updated only.
    let out = step(
        &prev,
        &full(Policy::None),
        60,
        T0 + Duration::hours(2),
        &rules,
    );
    assert_eq!(events_to_names(&out.events), ["domain.updated"]);
    // Out-of-range scores are clamped, never panic.
    let out = step(&prev, &full(Policy::None), 255, T0, &rules);
    assert_eq!(out.next.score, 100);
}

#[test]
fn policy_change_carries_the_previous_policy() {
    let rules = SweepRules::default();
    let prev = state(MonitoringStatus::Setup);
    let out = step(
        &prev,
        &full(Policy::Reject),
        50,
        T0 + Duration::hours(2),
        &rules,
    );
    assert_eq!(out.next.dmarc_policy, Policy::Reject);
    assert_eq!(
        out.events,
        vec![
            MonitoringEvent::PolicyChanged {
                previous: Policy::None
            },
            MonitoringEvent::Updated {
                fields: vec!["dmarc_policy".into()],
            },
        ]
    );
    // The policy follows DNS while not monitored too; a vanished record means none.
    let drifted = step(
        &out.next,
        &Verdict::NotMonitored {
            reason: FailureReason::DmarcRecordMissing,
            detail: detail("x"),
            policy: None,
        },
        50,
        T0 + Duration::hours(3),
        &rules,
    );
    assert_eq!(
        events_to_names(&drifted.events),
        [
            "domain.monitoring.failed",
            "domain.policy_changed",
            "domain.updated"
        ]
    );
    assert_eq!(drifted.next.dmarc_policy, Policy::None);
}

#[test]
fn indeterminate_changes_nothing_visible_and_counts_the_streak() {
    let rules = SweepRules {
        indeterminate_alert_after: 2,
        ..SweepRules::default()
    };
    let mut s = state(MonitoringStatus::Setup);
    let mut alerts = Vec::new();
    for i in 0..4 {
        // A lower score computed from failing DNS is ignored.
        let out = step(&s, &timeout(), 10, T0 + Duration::hours(i), &rules);
        assert!(out.events.is_empty());
        assert!(out.changed, "the hidden counter must be written");
        assert_eq!(out.next.score, 50);
        alerts.push(out.indeterminate_alert);
        s = out.next;
    }
    assert_eq!(alerts, [false, true, false, false]);
    assert_eq!(s.consecutive_indeterminate, 4);
    let out = step(&s, &full(Policy::None), 50, T0 + Duration::hours(5), &rules);
    assert_eq!(out.next.consecutive_indeterminate, 0);
    assert!(out.events.is_empty());
}

#[test]
fn grace_counts_from_the_later_of_created_and_pending_since() {
    let rules = SweepRules::default();
    let mut s = state(MonitoringStatus::Pending);
    s.created_at = T0 - Duration::days(30);
    s.pending_since = Some(T0);
    let verdict = not(FailureReason::DmarcRecordMissing);
    let inside = step(&s, &verdict, 50, T0 + Duration::hours(71), &rules);
    assert_eq!(inside.next.status, MonitoringStatus::Pending);
    // Without pending_since (legacy data) the grace counts from created_at.
    s.pending_since = None;
    let legacy = step(&s, &verdict, 50, T0, &rules);
    assert_eq!(legacy.next.status, MonitoringStatus::Failed);
    // A configurable window.
    let short = SweepRules {
        pending_grace: Duration::minutes(5),
        ..rules
    };
    let mut fresh = state(MonitoringStatus::Pending);
    fresh.pending_since = Some(T0);
    let out = step(&fresh, &verdict, 50, T0 + Duration::minutes(5), &short);
    assert_eq!(out.next.status, MonitoringStatus::Failed);
}

#[test]
fn without_a_grace_window_the_first_evaluation_fails_at_once() {
    let none = SweepRules {
        pending_grace: Duration::ZERO,
        ..SweepRules::default()
    };
    let fresh = state(MonitoringStatus::None);
    let verdict = not(FailureReason::DmarcRecordMissing);
    let out = step(&fresh, &verdict, 50, T0, &none);
    assert_eq!(out.next.status, MonitoringStatus::Failed);
    assert_eq!(
        out.next.failure_reason,
        Some(FailureReason::DmarcRecordMissing)
    );
    assert_eq!(out.next.pending_since, None);
    assert!(
        events_to_names(&out.events).contains(&"domain.monitoring.failed"),
        "{:?}",
        out.events
    );
    // With any window at all, the first evaluation only starts it.
    let minute = SweepRules {
        pending_grace: Duration::minutes(1),
        ..none
    };
    let out = step(&fresh, &verdict, 50, T0, &minute);
    assert_eq!(out.next.status, MonitoringStatus::Pending);
    assert_eq!(out.next.pending_since, Some(T0));
    // Full monitoring on the first evaluation is setup whatever the window.
    let out = step(&fresh, &full(Policy::None), 50, T0, &none);
    assert_eq!(out.next.status, MonitoringStatus::Setup);
}

#[test]
fn no_own_record_with_unknown_parents_fails_and_never_flips_a_known_parent_record() {
    let rules = SweepRules {
        pending_grace: Duration::ZERO,
        ..SweepRules::default()
    };
    let unknown = Verdict::NoOwnRecord {
        detail: detail("no record"),
    };
    // A domain never seen with a parent record: missing.
    let out = step(&state(MonitoringStatus::None), &unknown, 50, T0, &rules);
    assert_eq!(out.next.status, MonitoringStatus::Failed);
    assert_eq!(
        out.next.failure_reason,
        Some(FailureReason::DmarcRecordMissing)
    );
    // A domain failed because only its parent has a record keeps that reason, its detail and
    // the parent's policy while the parents cannot be asked: no event at all.
    let mut parent_only = state(MonitoringStatus::Failed);
    parent_only.failure_reason = Some(FailureReason::DmarcRecordOnParentOnly);
    parent_only.failure_detail = Some(detail("v=DMARC1; p=reject"));
    parent_only.dmarc_policy = Policy::Reject;
    let out = step(&parent_only, &unknown, 50, T0, &rules);
    assert_eq!(out.next, parent_only_after(&parent_only), "{:?}", out.next);
    assert!(out.events.is_empty(), "{:?}", out.events);
    // A set-up domain whose record disappeared: failed (lost), policy left as it was.
    let mut setup = state(MonitoringStatus::Setup);
    setup.dmarc_policy = Policy::Quarantine;
    let out = step(&setup, &unknown, 50, T0, &rules);
    assert_eq!(out.next.status, MonitoringStatus::Failed);
    assert_eq!(out.next.dmarc_policy, Policy::Quarantine);
    assert!(!events_to_names(&out.events).contains(&"domain.policy_changed"));
}

/// The state a sweep leaves behind when nothing changed but the indeterminate streak.
fn parent_only_after(previous: &MonitoringState) -> MonitoringState {
    let mut next = previous.clone();
    next.consecutive_indeterminate = 0;
    next
}

#[test]
fn event_names_match_the_catalogue() {
    let all = [
        MonitoringEvent::Activated,
        MonitoringEvent::Failed {
            reason: FailureReason::DmarcRecordMissing,
        },
        MonitoringEvent::Drifted {
            reason: FailureReason::DmarcRecordInvalid,
        },
        MonitoringEvent::Recovered {
            from: MonitoringStatus::Drifted,
        },
        MonitoringEvent::PolicyChanged {
            previous: Policy::None,
        },
        MonitoringEvent::ScoreBandChanged {
            previous_score: 1,
            previous_band: ScoreBand::Critical,
        },
        MonitoringEvent::Updated { fields: vec![] },
    ];
    let names = events_to_names(&all);
    assert_eq!(
        names,
        [
            "domain.monitoring.activated",
            "domain.monitoring.failed",
            "domain.monitoring.drifted",
            "domain.monitoring.recovered",
            "domain.policy_changed",
            "domain.score_changed",
            "domain.updated"
        ]
    );
    for name in names {
        assert!(
            mailward_domain::events::CATALOGUE
                .iter()
                .any(|e| e.name == name),
            "{name} not in the catalogue"
        );
    }
}

#[test]
fn state_round_trips_through_json() {
    let s = state(MonitoringStatus::Drifted);
    let json = serde_json::to_string(&s).unwrap();
    let back: MonitoringState = serde_json::from_str(&json).unwrap();
    assert_eq!(back, s);
    let reason = serde_json::to_value(FailureReason::DmarcRecordMissingMailwardRua).unwrap();
    assert_eq!(reason, "dmarc_record_missing_mailward_rua");
}
