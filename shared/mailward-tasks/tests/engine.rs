//! The task engine on plain values: reconciliation, person transitions, stabilisation, sorting
//! and the plan.

use mailward_domain::domain::Policy;
use mailward_tasks::model::{TaskStatus, TaskType, priority, sequence};
use mailward_tasks::plan::{PlanInput, build, upcoming_steps};
use mailward_tasks::problems::{Findings, Problem};
use mailward_tasks::reconcile::{Owner, Transition, apply, counters, reconcile};
use mailward_tasks::{ResolutionReason, Task, stabilise, transitions};
use time::macros::datetime;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

const T0: OffsetDateTime = datetime!(2026-11-01 00:00 UTC);

fn owner() -> Owner {
    Owner {
        org_id: Uuid::from_u128(1),
        domain_id: Uuid::from_u128(2),
    }
}

fn problem(task_type: TaskType, key: &str, priority: u8) -> Problem {
    Problem {
        task_type,
        key: key.to_owned(),
        priority,
        sequence: sequence::FOUNDATION,
        description: format!("fix {key}"),
        codes: Vec::new(),
        sending_domain: None,
        source_id: None,
    }
}

fn findings(problems: Vec<Problem>, judged: &[TaskType]) -> Findings {
    Findings {
        problems,
        judged: judged.iter().copied().collect(),
        not_applicable: Default::default(),
    }
}

fn ids() -> impl FnMut() -> Uuid {
    let mut n = 100u128;
    move || {
        n += 1;
        Uuid::from_u128(n)
    }
}

fn run(existing: &[Task], f: &Findings, now: OffsetDateTime) -> (Vec<Task>, Vec<Transition>) {
    let changes = reconcile(owner(), existing, f, |_| 3, now, ids());
    let transitions = changes.iter().map(|c| c.transition).collect();
    (apply(existing, &changes), transitions)
}

#[test]
fn a_problem_opens_one_task_resolves_when_gone_and_reopens_when_back() {
    let spf = problem(
        TaskType::SetUpSpfRecord,
        "set_up_spf_record",
        priority::HIGH,
    );
    let judged = [TaskType::SetUpSpfRecord];
    let (tasks, t) = run(&[], &findings(vec![spf.clone()], &judged), T0);
    assert_eq!(t, [Transition::Opened]);
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].status, TaskStatus::Open);
    assert_eq!(tasks[0].score_gain, 3);
    // Seen again: nothing changes, no second task.
    let (again, t) = run(
        &tasks,
        &findings(vec![spf.clone()], &judged),
        T0 + Duration::hours(1),
    );
    assert!(t.is_empty());
    assert_eq!(again, tasks);
    // Gone: done, verified.
    let later = T0 + Duration::hours(2);
    let (fixed, t) = run(&tasks, &findings(vec![], &judged), later);
    assert_eq!(t, [Transition::Resolved]);
    assert_eq!(fixed[0].status, TaskStatus::Done);
    assert_eq!(fixed[0].resolution_reason, Some(ResolutionReason::Verified));
    assert_eq!(fixed[0].resolved_at, Some(later));
    // Back: the same task reopens.
    let (back, t) = run(
        &fixed,
        &findings(vec![spf], &judged),
        later + Duration::hours(1),
    );
    assert_eq!(t, [Transition::Reopened]);
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].id, tasks[0].id);
    assert_eq!(back[0].status, TaskStatus::Open);
    assert_eq!(back[0].resolution_reason, None);
}

#[test]
fn an_unjudged_type_is_left_alone_and_an_inapplicable_one_canceled() {
    let mta = problem(TaskType::SetUpMtaSts, "set_up_mta_sts", priority::LOW);
    let (tasks, _) = run(&[], &findings(vec![mta], &[TaskType::SetUpMtaSts]), T0);
    // The MTA-STS lookups failed this pass: not judged, so nothing happens.
    let (same, t) = run(&tasks, &findings(vec![], &[]), T0 + Duration::hours(1));
    assert!(t.is_empty());
    assert_eq!(same[0].status, TaskStatus::Open);
    // The domain was parked: MTA-STS no longer applies.
    let mut parked = findings(vec![], &[]);
    parked.not_applicable.insert(TaskType::SetUpMtaSts);
    let (canceled, t) = run(&tasks, &parked, T0 + Duration::hours(2));
    assert_eq!(t, [Transition::Canceled]);
    assert_eq!(canceled[0].status, TaskStatus::Canceled);
    assert_eq!(canceled[0].resolution_reason, None);
}

#[test]
fn a_dismissed_task_stays_dismissed_and_a_snoozed_one_wakes_on_time() {
    let p = problem(TaskType::SetUpTlsRpt, "set_up_tls_rpt", priority::LOW);
    let f = findings(vec![p], &[TaskType::SetUpTlsRpt]);
    let (mut tasks, _) = run(&[], &f, T0);
    tasks[0].status = TaskStatus::Dismissed;
    let (same, t) = run(&tasks, &f, T0 + Duration::hours(1));
    assert!(t.is_empty());
    assert_eq!(same[0].status, TaskStatus::Dismissed);
    tasks[0].status = TaskStatus::Snoozed;
    tasks[0].snoozed_until = Some(T0 + Duration::days(7));
    let (still, t) = run(&tasks, &f, T0 + Duration::days(6));
    assert!(t.is_empty());
    assert_eq!(still[0].status, TaskStatus::Snoozed);
    let (woke, t) = run(&tasks, &f, T0 + Duration::days(7));
    assert_eq!(t, [Transition::Woke]);
    assert_eq!(woke[0].status, TaskStatus::Open);
    assert_eq!(woke[0].snoozed_until, None);
}

#[test]
fn counters_count_open_work_but_not_opportunities() {
    let f = findings(
        vec![
            problem(TaskType::SetUpBimi, "set_up_bimi", priority::LOW),
            problem(TaskType::SetUpTlsRpt, "set_up_tls_rpt", priority::LOW),
            problem(
                TaskType::ResolveDnsConflict,
                "_dmarc.a#multiple",
                priority::HIGH,
            ),
        ],
        &[],
    );
    let (mut tasks, _) = run(&[], &f, T0);
    assert_eq!(counters(&tasks), (2, Some(priority::HIGH)));
    tasks
        .iter_mut()
        .find(|t| t.task_type == TaskType::ResolveDnsConflict)
        .unwrap()
        .status = TaskStatus::Snoozed;
    assert_eq!(counters(&tasks), (1, Some(priority::LOW)));
    for t in &mut tasks {
        t.status = TaskStatus::Done;
    }
    assert_eq!(counters(&tasks), (0, None));
}

#[test]
fn person_transitions_follow_the_documented_rules() {
    let (tasks, _) = run(
        &[],
        &findings(vec![problem(TaskType::UpdateTtl, "update_ttl", 3)], &[]),
        T0,
    );
    let open = &tasks[0];
    let now = T0 + Duration::hours(1);
    let done = transitions::apply(open, TaskStatus::Done, None, now)
        .unwrap()
        .unwrap();
    assert_eq!(done.resolution_reason, Some(ResolutionReason::Manual));
    assert_eq!(done.status_since, now);
    // Closing a closed task, or snoozing it, is refused.
    assert!(transitions::apply(&done, TaskStatus::Dismissed, None, now).is_err());
    assert!(transitions::apply(&done, TaskStatus::Snoozed, None, now).is_err());
    // The same status again changes nothing.
    assert_eq!(
        transitions::apply(&done, TaskStatus::Done, None, now),
        Ok(None)
    );
    // Reopening clears the resolution.
    let reopened = transitions::apply(&done, TaskStatus::Open, None, now)
        .unwrap()
        .unwrap();
    assert_eq!(
        (reopened.status, reopened.resolution_reason),
        (TaskStatus::Open, None)
    );
    // Snooze: seven days by default, never in the past or beyond ninety days.
    let snoozed = transitions::apply(open, TaskStatus::Snoozed, None, now)
        .unwrap()
        .unwrap();
    assert_eq!(snoozed.snoozed_until, Some(now + Duration::days(7)));
    assert!(transitions::apply(open, TaskStatus::Snoozed, Some(now), now).is_err());
    assert!(
        transitions::apply(
            open,
            TaskStatus::Snoozed,
            Some(now + Duration::days(91)),
            now
        )
        .is_err()
    );
    assert!(
        transitions::apply(open, TaskStatus::Done, Some(now + Duration::days(1)), now).is_err()
    );
    let pending = transitions::apply(open, TaskStatus::Pending, None, now)
        .unwrap()
        .unwrap();
    assert_eq!(pending.marked_pending_at, Some(now));
}

#[test]
fn stabilisation_announces_held_states_once_and_flaps_not_at_all() {
    let (tasks, _) = run(
        &[],
        &findings(
            vec![problem(TaskType::UpdateTtl, "update_ttl", 3)],
            &[TaskType::UpdateTtl],
        ),
        T0,
    );
    let opened = tasks[0].clone();
    // Held four hours: task.opened, once.
    let first = stabilise::check(&opened, TaskStatus::Open, T0).unwrap();
    assert_eq!(first.event, "task.opened");
    assert!(
        stabilise::check(&first.task, TaskStatus::Open, T0).is_none(),
        "a duplicate emits nothing"
    );
    // Resolved and held: task.completed; reopened later: task.reopened.
    let (resolved, _) = run(
        std::slice::from_ref(&first.task),
        &findings(vec![], &[TaskType::UpdateTtl]),
        T0 + Duration::hours(5),
    );
    let done = &resolved[0];
    let completed = stabilise::check(done, TaskStatus::Done, done.status_since).unwrap();
    assert_eq!(completed.event, "task.completed");
    let (back, _) = run(
        std::slice::from_ref(&completed.task),
        &findings(
            vec![problem(TaskType::UpdateTtl, "update_ttl", 3)],
            &[TaskType::UpdateTtl],
        ),
        T0 + Duration::hours(10),
    );
    let reopened = stabilise::check(&back[0], TaskStatus::Open, back[0].status_since).unwrap();
    assert_eq!(reopened.event, "task.reopened");

    // Flapping: opened and resolved inside the window emits nothing at all.
    let (fresh, _) = run(
        &[],
        &findings(
            vec![problem(TaskType::SetUpTlsRpt, "set_up_tls_rpt", 3)],
            &[TaskType::SetUpTlsRpt],
        ),
        T0,
    );
    let (gone, _) = run(
        &fresh,
        &findings(vec![], &[TaskType::SetUpTlsRpt]),
        T0 + Duration::hours(1),
    );
    assert!(
        stabilise::check(&gone[0], TaskStatus::Open, T0).is_none(),
        "no longer open"
    );
    assert!(
        stabilise::check(&gone[0], TaskStatus::Done, gone[0].status_since).is_none(),
        "nobody heard it open, so its closing is not news"
    );
}

#[test]
fn tasks_sort_by_priority_then_rollout_then_recency() {
    let mk = |n: u128, priority: u8, sequence: u8, age_h: i64, status: TaskStatus| Task {
        id: Uuid::from_u128(n),
        org_id: Uuid::from_u128(1),
        domain_id: Uuid::from_u128(2),
        task_type: TaskType::UpdateTtl,
        problem_key: n.to_string(),
        status,
        priority,
        sequence,
        description: String::new(),
        score_gain: 0,
        sending_domain: None,
        source_id: None,
        source_alias: None,
        snoozed_until: None,
        marked_pending_at: None,
        resolved_at: (status == TaskStatus::Done).then_some(T0 - Duration::hours(age_h)),
        resolution_reason: None,
        status_since: T0,
        announced_open: false,
        ever_announced: false,
        created_at: T0 - Duration::hours(age_h),
        updated_at: T0,
    };
    let mut tasks = vec![
        mk(1, 2, 10, 1, TaskStatus::Open),
        mk(2, 0, 60, 5, TaskStatus::Open),
        mk(3, 2, 10, 0, TaskStatus::Pending),
        mk(4, 1, 20, 3, TaskStatus::Done),
    ];
    let order = |tasks: &[Task]| tasks.iter().map(|t| t.id.as_u128()).collect::<Vec<_>>();
    mailward_tasks::sort::sort(&mut tasks, "priority", false);
    assert_eq!(
        order(&tasks),
        [2, 4, 3, 1],
        "priority, then sequence, then newest"
    );
    mailward_tasks::sort::sort(&mut tasks, "status", false);
    assert_eq!(
        order(&tasks),
        [3, 2, 1, 4],
        "pending, open (by priority), done"
    );
    mailward_tasks::sort::sort(&mut tasks, "resolved_at", true);
    assert_eq!(order(&tasks)[0], 4, "never resolved last");
    mailward_tasks::sort::sort(&mut tasks, "sequence", false);
    assert_eq!(order(&tasks), [3, 1, 4, 2]);
}

#[test]
fn the_plan_moves_through_its_stages() {
    fn input(tasks: &[Task], monitoring_set_up: bool, policy: Policy) -> PlanInput<'_> {
        PlanInput {
            domain: "plan.test",
            parked: false,
            evaluated: true,
            monitoring_set_up,
            policy,
            tasks,
            impact: None,
        }
    }
    let f = findings(
        vec![
            problem(TaskType::SetUpDmarcRecord, "set_up_dmarc_record", 0),
            problem(TaskType::SetUpTlsRpt, "set_up_tls_rpt", 3),
        ],
        &[],
    );
    let (tasks, _) = run(&[], &f, T0);
    let plan = build(&input(&tasks, false, Policy::None));
    assert_eq!(plan.current_stage, Some(1));
    assert_eq!(plan.stages[0].steps[0].key, "dmarc-setup");
    assert_eq!(plan.stages[0].steps[0].status, "in_progress");
    assert_eq!(plan.stages[0].steps[0].task_ids.len(), 1);
    assert_eq!(plan.stages[1].status, "pending");
    // Monitoring set up, DMARC task done: enforcement is current (alignment has no work).
    let mut done = tasks.clone();
    done.iter_mut()
        .find(|t| t.task_type == TaskType::SetUpDmarcRecord)
        .unwrap()
        .status = TaskStatus::Done;
    let plan = build(&input(&done, true, Policy::None));
    assert_eq!(plan.current_stage, Some(3));
    assert_eq!(plan.stages[0].status, "completed");
    let keys: Vec<&str> = plan.stages[2]
        .steps
        .iter()
        .map(|s| s.key.as_str())
        .collect();
    assert_eq!(keys, ["dmarc-quarantine", "dmarc-reject-full"]);
    assert_eq!(upcoming_steps(&plan, false, true).len(), 2);
    assert!(upcoming_steps(&plan, false, false).is_empty());
    // At reject, only hardening remains.
    let plan = build(&input(&done, true, Policy::Reject));
    assert_eq!(plan.current_stage, Some(4));
    assert_eq!(plan.stages[3].steps[0].key, "tls-rpt");
}
