//! The monitoring sweep's logic, without I/O of its own beyond the DNS port and without storage.
//!
//! One evaluation of one domain is three steps, each kept separate so it can be tested alone:
//!
//! 1. [`observe`]: ask DNS (through [`mailward_domain::dns::DnsResolver`]) what the domain
//!    publishes and keep the evidence verbatim: name servers, the record(s) at `_dmarc.<domain>`,
//!    the CNAME chain, the report addresses, the parent's record, the policy in force, and every
//!    lookup that failed transiently.
//! 2. [`classify`]: turn the observation into a [`Verdict`]: full monitoring (with the policy),
//!    not monitored (with a SPEC §2.1 `monitoring_failure_reason` and its detail), or
//!    indeterminate (DNS failed, nothing can be concluded).
//! 3. [`step`]: the pure `monitoring_status` state machine of SPEC §3: from the stored
//!    [`MonitoringState`], the verdict, the freshly computed score and the time, the next state
//!    and the domain events (SPEC §6.1) to write to the outbox in the same commit.
//!
//! The sweep's wiring (coordinator, batches, storage, outbox) belongs to the caller. Nothing here
//! panics on any input: DNS answers are attacker-controlled.

pub mod classify;
pub mod machine;
pub mod observe;

pub use classify::{Verdict, classify, escalate_lame_delegation};
pub use machine::{
    MonitoringEvent, MonitoringState, Step, SweepRules, events_to_names, is_loss, step,
};
pub use observe::{
    Delegation, DmarcOutcome, Expectation, LookupFailure, NameserverOutcome, Observation,
    ParentOutcome, TransientFailure, observe,
};
