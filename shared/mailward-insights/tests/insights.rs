//! The rules behind the report summary's recommendation and next action, and the enforcement
//! impact, on hand-built rows and senders.

use mailward_api_types::reports::PeriodFigures;
use mailward_domain::domain::{Domain, Policy};
use mailward_domain::reports::SourceDay;
use mailward_domain::senders::{ConfirmationStatus, DomainSource};
use mailward_insights::impact::assess;
use mailward_insights::recommend::{ADVANCE_MIN_VOLUME, next_action, recommend};
use time::OffsetDateTime;
use uuid::Uuid;

fn domain(policy: Policy) -> Domain {
    let mut d = Domain::new(
        Uuid::nil(),
        Uuid::nil(),
        "example.test".into(),
        OffsetDateTime::UNIX_EPOCH,
    );
    d.dmarc_policy = policy;
    d
}

fn window(volume: u64, pass: f64) -> PeriodFigures {
    PeriodFigures {
        date_from: "2026-01-01".into(),
        date_to: "2026-01-14".into(),
        volume,
        dmarc_pass_pct: pass,
        spf_pass_pct: pass,
        dkim_pass_pct: pass,
    }
}

#[test]
fn the_policy_moves_up_one_step_with_enough_mail_and_no_legitimate_loss() {
    let plenty = window(ADVANCE_MIN_VOLUME, 97.5);
    let from_none = recommend(&domain(Policy::None), &plenty, 0);
    assert_eq!(from_none.status, "advance_recommended");
    assert_eq!(from_none.next_policy.as_deref(), Some("quarantine"));
    assert!(from_none.reason.contains("97.5%"), "{}", from_none.reason);
    let from_quarantine = recommend(&domain(Policy::Quarantine), &plenty, 0);
    assert_eq!(from_quarantine.next_policy.as_deref(), Some("reject"));
    let at_reject = recommend(&domain(Policy::Reject), &plenty, 0);
    assert_eq!(at_reject.status, "at_maximum");
    assert_eq!(at_reject.next_policy, None);
}

#[test]
fn too_little_mail_or_legitimate_loss_holds_the_policy() {
    let thin = recommend(
        &domain(Policy::None),
        &window(ADVANCE_MIN_VOLUME - 1, 100.0),
        0,
    );
    assert_eq!(thin.status, "hold");
    assert!(thin.reason.contains("too little"), "{}", thin.reason);
    let losing = recommend(&domain(Policy::None), &window(5000, 90.0), 12);
    assert_eq!(losing.status, "hold");
    assert_eq!(losing.next_policy, None);
    assert!(losing.reason.contains("12 messages"), "{}", losing.reason);
}

#[test]
fn the_next_action_follows_the_window_then_the_senders_then_the_recommendation() {
    let none = domain(Policy::None);
    let empty = window(0, 0.0);
    let wait = next_action(&empty, &recommend(&none, &empty, 0), 0);
    assert_eq!(wait.code, "wait_for_reports");
    let busy = window(5000, 90.0);
    let fix = next_action(&busy, &recommend(&none, &busy, 3), 3);
    assert_eq!(fix.code, "fix_failing_senders");
    assert!(fix.message.contains('3'), "{}", fix.message);
    let advance = next_action(&busy, &recommend(&none, &busy, 0), 0);
    assert_eq!(advance.code, "advance_policy");
    assert_eq!(advance.message, "Publish p=quarantine for the domain");
    let thin = window(10, 100.0);
    let keep = next_action(&thin, &recommend(&none, &thin, 0), 0);
    assert_eq!(keep.code, "keep_monitoring");
}

fn row(
    ip: &str,
    volume: u64,
    pass: u64,
    spf: u64,
    dkim: u64,
    forwarded: u64,
) -> (String, SourceDay) {
    (
        "2026-01-02".into(),
        SourceDay {
            source_ip: ip.into(),
            volume,
            dmarc_pass: pass,
            spf_aligned_pass: spf,
            dkim_aligned_pass: dkim,
            forwarded,
            ..SourceDay::default()
        },
    )
}

fn sender(name: &str, ips: &[&str], status: ConfirmationStatus, known: bool) -> DomainSource {
    DomainSource {
        id: Uuid::new_v4(),
        org_id: Uuid::nil(),
        domain_id: Uuid::nil(),
        key: format!("domain:{name}"),
        source_id: known.then(Uuid::new_v4),
        spf_value: None,
        source_name: Some(name.into()),
        source_homepage: None,
        sending_domain: Some(format!("{name}.test")),
        dkim_selectors: Vec::new(),
        confirmation_status: status,
        confirmed_at: None,
        last_seen_at: None,
        last_spf_aligned_at: None,
        totals: Default::default(),
        recent: Default::default(),
        recent_to: None,
        ips: ips.iter().map(|ip| (*ip).to_owned()).collect(),
        networks: Vec::new(),
        ignore_spf: false,
        ignore_dkim: false,
        created_at: OffsetDateTime::UNIX_EPOCH,
        updated_at: OffsetDateTime::UNIX_EPOCH,
    }
}

#[test]
fn the_impact_counts_legitimate_mail_apart_from_unknown_and_forwarded_mail() {
    let crm = sender("crm", &["192.0.2.1"], ConfirmationStatus::Confirmed, true);
    let spam = sender(
        "spam",
        &["198.51.100.9"],
        ConfirmationStatus::Discarded,
        false,
    );
    let rows = vec![
        // The confirmed CRM: 100 messages, 80 pass, 20 would be stopped (SPF fails them all).
        row("192.0.2.1", 100, 80, 0, 80, 0),
        // A discarded sender: never legitimate.
        row("198.51.100.9", 30, 0, 0, 0, 0),
        // An address nobody lists, failing: unknown.
        row("203.0.113.7", 10, 0, 0, 0, 0),
        // Forwarded mail is counted apart, whatever its result.
        row("203.0.113.8", 5, 0, 0, 0, 5),
    ];
    let impact = assess(
        &domain(Policy::None),
        "quarantine",
        ("2026-01-01".into(), "2026-01-30".into()),
        &rows,
        &[crm.clone(), spam],
    );
    assert_eq!(impact.volume, 145);
    assert_eq!(impact.forwarded, 5);
    assert_eq!(impact.legitimate_volume, 100);
    assert_eq!(impact.legitimate_affected, 20);
    assert_eq!(impact.legitimate_affected_pct, 20.0);
    assert_eq!(impact.unknown_affected, 40);
    assert!(!impact.safe, "legitimate mail would be stopped");
    assert_eq!(impact.current_policy, "none");
    // Legitimate senders first; the reasons say what to fix.
    let first = &impact.senders[0];
    assert_eq!(first.sender_id, Some(crm.id));
    assert!(first.legitimate);
    assert_eq!(first.affected, 20);
    assert_eq!(first.reasons, vec!["spf_not_aligned", "dkim_not_aligned"]);
    assert!(impact.senders[1..].iter().all(|s| !s.legitimate));
    // Nothing failing: safe.
    let clean = assess(
        &domain(Policy::Quarantine),
        "reject",
        ("2026-01-01".into(), "2026-01-30".into()),
        &[row("192.0.2.1", 50, 50, 50, 50, 0)],
        &[crm],
    );
    assert!(clean.safe);
    assert!(clean.senders.is_empty());
}
