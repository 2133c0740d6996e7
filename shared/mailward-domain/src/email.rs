//! Email addresses: syntax, normalisation and the disposable-domain rule of signup.

use std::sync::OnceLock;

/// Why an address was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmailError {
    /// Not a syntactically valid address (RFC 5322 addr-spec with a dotted domain).
    #[error("not a valid email address")]
    Invalid,
    /// The domain is on the disposable-address list.
    #[error("disposable email domains are not accepted")]
    Disposable,
}

/// A syntactically valid, normalised address: trimmed and lower-cased (accounts are keyed by
/// it, and mailbox providers treat local parts case-insensitively in practice).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EmailAddress(String);

impl EmailAddress {
    /// Parses and normalises an address. Requires a dotted domain: `root@localhost` is refused.
    pub fn parse(raw: &str) -> Result<Self, EmailError> {
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.len() > 254 {
            return Err(EmailError::Invalid);
        }
        let lowered = trimmed.to_ascii_lowercase();
        let parsed = email_address::EmailAddress::parse_with_options(
            &lowered,
            email_address::Options::default()
                .without_display_text()
                .without_domain_literal(),
        )
        .map_err(|_| EmailError::Invalid)?;
        let domain = parsed.domain();
        let labels_ok = domain.split('.').count() >= 2
            && domain
                .split('.')
                .all(|label| crate::names::is_label(label, false));
        if !labels_ok {
            return Err(EmailError::Invalid);
        }
        Ok(Self(parsed.as_str().to_owned()))
    }

    /// The normalised address.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The domain part.
    pub fn domain(&self) -> &str {
        self.0.rsplit_once('@').map(|(_, d)| d).unwrap_or_default()
    }
}

impl std::fmt::Display for EmailAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

const BLOCKLIST: &str = include_str!("../data/disposable_email_blocklist.txt");

fn blocklist() -> &'static [&'static str] {
    static LIST: OnceLock<Vec<&'static str>> = OnceLock::new();
    LIST.get_or_init(|| {
        let mut list: Vec<&str> = BLOCKLIST.lines().filter(|l| !l.is_empty()).collect();
        list.sort_unstable();
        list
    })
}

/// True when `domain` or any parent domain of it is a listed disposable-mail domain
/// (so `x.mailinator.com` is caught as well as `mailinator.com`).
pub fn is_disposable_domain(domain: &str) -> bool {
    let list = blocklist();
    let domain = domain.trim_end_matches('.').to_ascii_lowercase();
    let mut candidate = domain.as_str();
    loop {
        if list.binary_search(&candidate).is_ok() {
            return true;
        }
        match candidate.split_once('.') {
            Some((_, parent)) if parent.contains('.') => candidate = parent,
            _ => return false,
        }
    }
}

/// Parses an address for signup: valid syntax and not disposable.
pub fn parse_signup_email(raw: &str) -> Result<EmailAddress, EmailError> {
    let email = EmailAddress::parse(raw)?;
    if is_disposable_domain(email.domain()) {
        return Err(EmailError::Disposable);
    }
    Ok(email)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_normalises() {
        let e = EmailAddress::parse("  Alice@Example.COM ").unwrap();
        assert_eq!(e.as_str(), "alice@example.com");
        assert_eq!(e.domain(), "example.com");
    }

    #[test]
    fn refuses_malformed_addresses() {
        for bad in [
            "",
            "alice",
            "alice@",
            "@example.com",
            "alice@localhost",
            "alice@exa mple.com",
            "alice@-example.com",
            "alice@[127.0.0.1]",
            "Alice <alice@example.com>",
            "a@b@example.com",
        ] {
            assert_eq!(EmailAddress::parse(bad), Err(EmailError::Invalid), "{bad}");
        }
    }

    #[test]
    fn disposable_domains_and_their_subdomains_are_refused() {
        assert_eq!(
            parse_signup_email("x@mailinator.com"),
            Err(EmailError::Disposable)
        );
        assert_eq!(
            parse_signup_email("x@eu.mailinator.com"),
            Err(EmailError::Disposable)
        );
        assert!(parse_signup_email("x@example.com").is_ok());
        assert!(parse_signup_email("x@gmail.com").is_ok());
    }
}
