//! Failure injection: which fault applies to a query.

use mailward_domain::dns::RecordType;
use std::collections::HashMap;
use std::time::Duration;

/// Where a fault applies: lets a test break one name (or one name and type) while the rest of
/// the zone keeps answering.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Every query.
    Global,
    /// Queries for this name (any case, trailing dot optional), any type.
    Name(String),
    /// Queries for this name and type only.
    NameType(String, RecordType),
}

impl Scope {
    /// A scope for one name.
    pub fn name(name: &str) -> Self {
        Scope::Name(crate::rdata::canonical(name))
    }

    /// A scope for one name and record type.
    pub fn name_type(name: &str, record_type: RecordType) -> Self {
        Scope::NameType(crate::rdata::canonical(name), record_type)
    }

    fn normalized(self) -> Self {
        match self {
            Scope::Global => Scope::Global,
            Scope::Name(n) => Scope::name(&n),
            Scope::NameType(n, t) => Scope::name_type(&n, t),
        }
    }
}

/// A misbehaviour to inject, the failure modes an audit must survive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Answer only after this delay (latencies of matching scopes add up).
    Latency(Duration),
    /// Never answer.
    Timeout,
    /// Answer SERVFAIL.
    ServFail,
    /// Answer REFUSED.
    Refused,
    /// Over UDP, answer with the TC bit and no records so the client must retry over TCP (TCP
    /// answers normally).
    Truncate,
    /// Lose the next this many queries that arrive over UDP (no answer, as a datagram lost on
    /// the way), then answer normally: a client must resend, not wait out its timeout.
    Lose(u32),
    /// Lose every other query, over any transport (the flag: whether the next one is lost),
    /// as a flaky path that drops half the answers.
    LoseHalf(bool),
}

/// What to do with one query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Plan {
    pub(crate) latency: Duration,
    pub(crate) action: Option<Fault>,
}

/// The injected faults, by scope.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    rules: HashMap<Scope, Vec<Fault>>,
}

impl Faults {
    pub(crate) fn add(&mut self, scope: Scope, fault: Fault) {
        self.rules
            .entry(scope.normalized())
            .or_default()
            .push(fault);
    }

    pub(crate) fn clear(&mut self, scope: Scope) {
        self.rules.remove(&scope.normalized());
    }

    pub(crate) fn clear_all(&mut self) {
        self.rules.clear();
    }

    /// The plan for a query: latencies of every matching scope add up; the most specific
    /// scope's latest non-latency fault wins; a [`Fault::Lose`] with datagrams left to lose
    /// loses this one when it came over UDP (and counts it).
    pub(crate) fn plan(&mut self, name: &str, record_type: Option<RecordType>, udp: bool) -> Plan {
        let name = crate::rdata::canonical(name);
        let mut scopes = vec![Scope::Global, Scope::Name(name.clone())];
        if let Some(t) = record_type {
            scopes.push(Scope::NameType(name, t));
        }
        let mut plan = Plan::default();
        for scope in &scopes {
            for fault in self.rules.get_mut(scope).into_iter().flatten() {
                match fault {
                    Fault::Latency(d) => plan.latency += *d,
                    Fault::Lose(left) => {
                        if udp && *left > 0 {
                            *left -= 1;
                            plan.action = Some(Fault::Timeout);
                        }
                    }
                    Fault::LoseHalf(next) => {
                        if *next {
                            plan.action = Some(Fault::Timeout);
                        }
                        *next = !*next;
                    }
                    other => plan.action = Some(*other),
                }
            }
        }
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_specific_wins_and_latency_adds_up() {
        let mut faults = Faults::default();
        faults.add(Scope::Global, Fault::ServFail);
        faults.add(Scope::Global, Fault::Latency(Duration::from_millis(5)));
        faults.add(Scope::name("A.example.test."), Fault::Refused);
        faults.add(
            Scope::name("a.example.test"),
            Fault::Latency(Duration::from_millis(7)),
        );
        faults.add(
            Scope::name_type("a.example.test", RecordType::Txt),
            Fault::Timeout,
        );
        let plan = faults.plan("a.example.test.", Some(RecordType::Txt), true);
        assert_eq!(plan.latency, Duration::from_millis(12));
        assert_eq!(plan.action, Some(Fault::Timeout));
        assert_eq!(
            faults
                .plan("a.example.test", Some(RecordType::A), true)
                .action,
            Some(Fault::Refused)
        );
        assert_eq!(
            faults.plan("b.example.test", None, true).action,
            Some(Fault::ServFail)
        );
        faults.clear(Scope::Global);
        assert_eq!(faults.plan("b.example.test", None, true), Plan::default());
        faults.clear_all();
        assert_eq!(faults.plan("a.example.test", None, true), Plan::default());
    }

    #[test]
    fn lost_datagrams_are_counted_down_over_udp_only() {
        let mut faults = Faults::default();
        faults.add(Scope::name("a.example.test"), Fault::Lose(2));
        let lost = |f: &mut Faults, udp| f.plan("a.example.test", None, udp).action;
        assert_eq!(lost(&mut faults, false), None, "TCP is never lost");
        assert_eq!(lost(&mut faults, true), Some(Fault::Timeout));
        assert_eq!(lost(&mut faults, true), Some(Fault::Timeout));
        assert_eq!(lost(&mut faults, true), None, "then answered");
    }
}
