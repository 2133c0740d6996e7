//! Whom to ask and when. A registrar changes rarely (a transfer), so an answer is kept for
//! [`REFRESH_AFTER`]; a failed lookup (a registry down, rate limiting, a timeout) keeps what was
//! known and is tried again after [`RETRY_AFTER`], not on every sweep pass.
//!
//! The name asked is the registered one: a watched `mail.example.com` is registered as
//! `example.com`. The organizational domain of the RFC 9989 tree walk comes first, then the
//! Public Suffix List's registrable domain ([`mailward_domain::senders::registrable_part`])
//! when it differs (the tree walk stops at the watched name itself when no DMARC record is
//! published above it).

use time::{Duration, OffsetDateTime};

/// How long an answer is kept before the registrar is looked up again.
pub const REFRESH_AFTER: Duration = Duration::days(7);

/// How long after a failed lookup the next one is tried.
pub const RETRY_AFTER: Duration = Duration::days(1);

/// What one lookup came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The registry answered with a domain object: its registrar, or none named in it.
    Answered(Option<String>),
    /// No RDAP service covers the name (the bootstrap registry lists none for its TLD): asked
    /// again a week later, when the registry may have changed.
    NoService,
    /// Asked, and no usable answer (a timeout, a refusal, 404, 429, 5xx, not a domain object):
    /// what was known is kept, and a day passes before the next try.
    Failed(String),
    /// Not asked (lookups off, the bootstrap registry unavailable, too many lookups in flight):
    /// nothing is recorded, so the next pass may try.
    NotTried,
}

/// A domain's registrar as stored, with its lookup times.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegistrarState {
    /// The registrar last read.
    pub registrar: Option<String>,
    /// When a lookup last got an answer (or found no service for the name).
    pub checked_at: Option<OffsetDateTime>,
    /// When a lookup was last tried, whatever came of it.
    pub tried_at: Option<OffsetDateTime>,
}

impl RegistrarState {
    /// Whether a lookup is due at `now`: the last answer is older than [`REFRESH_AFTER`] (or
    /// there is none), and no try in the last [`RETRY_AFTER`].
    pub fn due(&self, now: OffsetDateTime) -> bool {
        let stale = self.checked_at.is_none_or(|at| now - at >= REFRESH_AFTER);
        let resting = self.tried_at.is_some_and(|at| now - at < RETRY_AFTER);
        stale && !resting
    }

    /// The state to store after `lookup` at `now`; `None` when nothing is to be recorded.
    pub fn after(&self, lookup: &Lookup, now: OffsetDateTime) -> Option<Self> {
        let answered = |registrar: Option<String>| Self {
            registrar,
            checked_at: Some(now),
            tried_at: Some(now),
        };
        match lookup {
            Lookup::Answered(name) => Some(answered(name.clone())),
            Lookup::NoService => Some(answered(self.registrar.clone())),
            Lookup::Failed(_) => Some(Self {
                tried_at: Some(now),
                ..self.clone()
            }),
            Lookup::NotTried => None,
        }
    }
}

/// The names to ask for `domain`, in order (at most two, none a bare TLD): its organizational
/// domain when `domain` is it or below it, then the registrable-part guess when it differs.
pub fn lookup_names(domain: &str, organizational: Option<&str>) -> Vec<String> {
    let domain = domain.trim_end_matches('.').to_ascii_lowercase();
    let mut names = Vec::new();
    if let Some(org) = organizational.map(|o| o.trim_end_matches('.').to_ascii_lowercase())
        && (domain == org || domain.ends_with(&format!(".{org}")))
    {
        names.push(org);
    }
    let guess = mailward_domain::senders::registrable_part(&domain);
    if !names.contains(&guess) {
        names.push(guess);
    }
    names.retain(|n| n.contains('.') && !n.starts_with('.'));
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2026-03-10 12:00 UTC);

    fn state(checked: Option<Duration>, tried: Option<Duration>) -> RegistrarState {
        RegistrarState {
            registrar: Some("Example Registrar, Inc.".into()),
            checked_at: checked.map(|ago| NOW - ago),
            tried_at: tried.map(|ago| NOW - ago),
        }
    }

    #[test]
    fn an_answer_is_kept_a_week_and_a_failure_rests_a_day() {
        let cases = [
            (None, None, true),
            (Some(Duration::days(6)), Some(Duration::days(6)), false),
            (Some(Duration::days(7)), Some(Duration::days(7)), true),
            // Failed an hour ago: not on every pass.
            (None, Some(Duration::hours(1)), false),
            (Some(Duration::days(9)), Some(Duration::hours(23)), false),
            // A day after the failure: tried again.
            (None, Some(Duration::days(1)), true),
            (Some(Duration::days(9)), Some(Duration::days(2)), true),
        ];
        for (checked, tried, due) in cases {
            assert_eq!(state(checked, tried).due(NOW), due, "{checked:?} {tried:?}");
        }
    }

    #[test]
    fn a_failure_keeps_the_registrar_and_an_answer_replaces_it() {
        let before = state(Some(Duration::days(8)), Some(Duration::days(8)));
        let failed = before
            .after(&Lookup::Failed("HTTP 503".into()), NOW)
            .unwrap();
        assert_eq!(failed.registrar, before.registrar);
        assert_eq!(failed.checked_at, before.checked_at);
        assert_eq!(failed.tried_at, Some(NOW));
        assert!(!failed.due(NOW + Duration::hours(12)));
        assert!(failed.due(NOW + Duration::days(1)));

        let moved = before
            .after(&Lookup::Answered(Some("New Registrar LLC".into())), NOW)
            .unwrap();
        assert_eq!(moved.registrar.as_deref(), Some("New Registrar LLC"));
        assert_eq!((moved.checked_at, moved.tried_at), (Some(NOW), Some(NOW)));
        assert!(!moved.due(NOW + Duration::days(6)));

        let none = before.after(&Lookup::NoService, NOW).unwrap();
        assert_eq!(none.registrar, before.registrar);
        assert_eq!(none.checked_at, Some(NOW));
        assert_eq!(before.after(&Lookup::NotTried, NOW), None);
    }

    #[test]
    fn the_registered_name_is_asked_not_the_subdomain() {
        let check = |domain: &str, org: Option<&str>, expect: &[&str]| {
            assert_eq!(lookup_names(domain, org), expect, "{domain} {org:?}");
        };
        check("example.com", Some("example.com"), &["example.com"]);
        check("example.com", None, &["example.com"]);
        check("mail.example.com", Some("example.com"), &["example.com"]);
        // No DMARC record above the watched name: the walk stops at it; the guess follows.
        check(
            "mail.example.com",
            Some("mail.example.com"),
            &["mail.example.com", "example.com"],
        );
        check("shop.example.co.uk", None, &["example.co.uk"]);
        // The Public Suffix List knows `ltd.uk`: the guess agrees with the tree walk.
        check(
            "shop.example.ltd.uk",
            Some("example.ltd.uk"),
            &["example.ltd.uk"],
        );
        check("shop.example.ltd.uk", None, &["example.ltd.uk"]);
        // An organizational domain that is not above the name is ignored.
        check("Example.COM.", Some("other.net"), &["example.com"]);
        check("com", None, &[]);
    }
}
