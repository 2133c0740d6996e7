//! The remediation task engine (SPEC §2.3, §2.9, §3, §6.5). Pure: it sees values, never the
//! store, DNS or a clock.
//!
//! - [`problems::derive`] turns one evaluation of a domain (the sweep's audit and monitoring
//!   verdict, its DNS conflicts, TTLs and certificates, and later what aggregate reports say of
//!   its senders) into the problems present, each the subject of one task;
//! - [`reconcile::reconcile`] brings the domain's tasks in line with them (open, reopen,
//!   resolve as verified, cancel, wake) and [`reconcile::counters`] gives the domain's
//!   `open_tasks_count` and `highest_open_task_priority`;
//! - [`transitions`] is a person's status change and its rules;
//! - [`stabilise`] decides the task events at the end of the four-hour window;
//! - [`score_gain`] is what fixing a problem adds to the score, by the audit's own scoring;
//! - [`plan`] is the four-stage rollout plan; [`sort`] the orders of the task list;
//!   [`instructions`] the steps and records that fix a task.

pub mod instructions;
pub mod model;
pub mod plan;
pub mod problems;
pub mod reconcile;
pub mod score_gain;
pub mod sort;
pub mod stabilise;
pub mod transitions;

pub use model::{ResolutionReason, Task, TaskStatus, TaskType};
pub use problems::{Evidence, Findings, PlannedRecord, Problem, derive};
pub use reconcile::{Change, Owner, Transition, counters, reconcile};
