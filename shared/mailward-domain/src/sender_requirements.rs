//! Mailbox providers' published requirements for senders (Gmail and Yahoo since February 2024,
//! Outlook.com since 5 May 2025), and what an organization keeps per domain to judge them: the
//! verdicts of its most recent header analysis of the domain's mail (never the headers), and
//! the spam rates it supplied. Judging happens in `mailward-insights::requirements`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use time::OffsetDateTime;
use uuid::Uuid;

/// A mailbox provider with published sender requirements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    Gmail,
    Yahoo,
    Outlook,
}

impl Provider {
    pub const ALL: [Provider; 3] = [Provider::Gmail, Provider::Yahoo, Provider::Outlook];

    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Gmail => "gmail",
            Provider::Yahoo => "yahoo",
            Provider::Outlook => "outlook",
        }
    }

    pub fn parse(raw: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.as_str() == raw)
    }

    /// How people call it.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Gmail => "Gmail",
            Provider::Yahoo => "Yahoo",
            Provider::Outlook => "Outlook.com",
        }
    }

    /// The provider whose receivers sent an aggregate report, from the report's `org_name`:
    /// `google.com` (Gmail and Google Workspace), `Yahoo`/`Yahoo! Inc.` and `AOL` (Yahoo's
    /// mail, under the same requirements), `Outlook.com` (Microsoft's consumer mail). Reports
    /// of `Enterprise Outlook` (Microsoft 365 business tenants) are not Outlook.com's
    /// requirements and are not counted.
    pub fn of_reporter(reporter: &str) -> Option<Provider> {
        let name = reporter.trim().trim_end_matches('.').to_ascii_lowercase();
        match name.as_str() {
            "google.com" | "google" | "google inc" | "google llc" => Some(Provider::Gmail),
            "yahoo" | "yahoo.com" | "yahoo! inc" | "yahoo! inc." | "yahoo inc" | "aol"
            | "aol.com" => Some(Provider::Yahoo),
            "outlook.com" | "microsoft corporation" | "hotmail.com" => Some(Provider::Outlook),
            _ => None,
        }
    }
}

/// One requirement a provider publishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Requirement {
    /// SPF passes for the envelope domain.
    Spf,
    /// A DKIM signature verifies.
    Dkim,
    /// A DMARC record is published (p=none at least) and mail passes it aligned.
    Dmarc,
    /// The sending IPs have forward-confirmed reverse DNS.
    ReverseDns,
    /// Mail is sent over TLS.
    Tls,
    /// RFC 8058 one-click unsubscribe, its headers covered by the DKIM signature.
    OneClickUnsubscribe,
    /// Spam complaints stay below the provider's rate.
    SpamRate,
}

impl Requirement {
    pub const ALL: [Requirement; 7] = [
        Requirement::Spf,
        Requirement::Dkim,
        Requirement::Dmarc,
        Requirement::ReverseDns,
        Requirement::Tls,
        Requirement::OneClickUnsubscribe,
        Requirement::SpamRate,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Requirement::Spf => "spf",
            Requirement::Dkim => "dkim",
            Requirement::Dmarc => "dmarc",
            Requirement::ReverseDns => "reverse_dns",
            Requirement::Tls => "tls",
            Requirement::OneClickUnsubscribe => "one_click_unsubscribe",
            Requirement::SpamRate => "spam_rate",
        }
    }

    pub fn parse(raw: &str) -> Option<Requirement> {
        Requirement::ALL.into_iter().find(|r| r.as_str() == raw)
    }
}

/// A requirement's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Fail,
    Unknown,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Unknown => "unknown",
        }
    }
}

/// What a header analysis of one of the domain's messages showed, kept 30 days.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeaderCheck {
    #[serde(with = "time::serde::rfc3339")]
    pub analyzed_at: OffsetDateTime,
    /// The authentication service whose results the analysis trusted (the receiver).
    pub receiver: Option<String>,
    /// One-click unsubscribe (RFC 8058).
    pub one_click_unsubscribe: Status,
    pub one_click_detail: String,
    /// Whether the receiver's hop was over TLS.
    pub tls: Status,
    pub tls_detail: String,
}

/// A spam rate the organization read from a provider's tools (e.g. Google Postmaster Tools).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuppliedSpamRate {
    pub provider: Provider,
    /// Percent of delivered mail reported as spam, 0-100.
    pub rate_pct: f64,
    #[serde(with = "time::serde::rfc3339")]
    pub supplied_at: OffsetDateTime,
}

/// One provider's aggregate reports over the window (the last 30 days), the domain's own mail
/// only: rows passing DMARC, or from a sender that is confirmed, or recognised and not
/// discarded; forwarded messages left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProviderFigures {
    /// Reports the provider sent.
    pub reports: u32,
    /// The domain's own messages.
    pub messages: u64,
    pub dmarc_pass: u64,
    /// Own messages in rows that kept the raw SPF and DKIM results (rows imported since they
    /// are kept), and how many of them passed each.
    pub raw_messages: u64,
    pub spf_pass: u64,
    pub dkim_pass: u64,
    /// Messages from anyone else (not judged), for the evidence.
    pub others: u64,
    /// The addresses of the domain's own mail and their reverse DNS: `Some(true)`
    /// forward-confirmed, `Some(false)` none, `None` not looked up yet.
    pub addresses: BTreeMap<String, Option<bool>>,
}

/// Most addresses kept per provider (the item stays small).
pub const MAX_ADDRESSES: usize = 200;

/// What the organization keeps for one domain's requirements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequirementInputs {
    pub org_id: Uuid,
    pub domain_id: Uuid,
    #[serde(default)]
    pub header_check: Option<HeaderCheck>,
    #[serde(default)]
    pub spam_rates: Vec<SuppliedSpamRate>,
    /// Each provider's figures as sender identification last computed them (after each
    /// import), and the last day they cover (YYYY-MM-DD).
    #[serde(default)]
    pub reports: BTreeMap<Provider, ProviderFigures>,
    #[serde(default)]
    pub reports_through: Option<String>,
}

/// How long a header analysis's verdicts, or a supplied spam rate, count.
pub const KEPT_DAYS: i64 = 30;

impl RequirementInputs {
    pub fn new(org_id: Uuid, domain_id: Uuid) -> Self {
        RequirementInputs {
            org_id,
            domain_id,
            header_check: None,
            spam_rates: Vec::new(),
            reports: BTreeMap::new(),
            reports_through: None,
        }
    }

    /// The header check, unless older than [`KEPT_DAYS`].
    pub fn header_check_at(&self, now: OffsetDateTime) -> Option<&HeaderCheck> {
        self.header_check
            .as_ref()
            .filter(|c| now - c.analyzed_at <= time::Duration::days(KEPT_DAYS))
    }

    /// The provider's supplied spam rate, unless older than [`KEPT_DAYS`].
    pub fn spam_rate_at(
        &self,
        provider: Provider,
        now: OffsetDateTime,
    ) -> Option<&SuppliedSpamRate> {
        self.spam_rates.iter().find(|r| {
            r.provider == provider && now - r.supplied_at <= time::Duration::days(KEPT_DAYS)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reporters_map_to_their_providers() {
        assert_eq!(Provider::of_reporter("google.com"), Some(Provider::Gmail));
        assert_eq!(
            Provider::of_reporter(" Yahoo! Inc. "),
            Some(Provider::Yahoo)
        );
        assert_eq!(Provider::of_reporter("AOL"), Some(Provider::Yahoo));
        assert_eq!(
            Provider::of_reporter("Outlook.com"),
            Some(Provider::Outlook)
        );
        assert_eq!(Provider::of_reporter("Enterprise Outlook"), None);
        assert_eq!(Provider::of_reporter("Mail.Ru"), None);
    }

    #[test]
    fn old_verdicts_stop_counting_after_thirty_days() {
        let now = time::macros::datetime!(2026-11-27 12:00 UTC);
        let mut inputs = RequirementInputs::new(Uuid::nil(), Uuid::nil());
        inputs.spam_rates.push(SuppliedSpamRate {
            provider: Provider::Gmail,
            rate_pct: 0.1,
            supplied_at: now - time::Duration::days(31),
        });
        assert!(inputs.spam_rate_at(Provider::Gmail, now).is_none());
        inputs.spam_rates[0].supplied_at = now - time::Duration::days(29);
        assert!(inputs.spam_rate_at(Provider::Gmail, now).is_some());
        assert!(inputs.spam_rate_at(Provider::Yahoo, now).is_none());
    }
}
