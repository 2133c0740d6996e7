//! Domain-name helpers shared by the DNS-facing modules, and the serializable form of a failed
//! lookup.

use mailward_domain::dns::{Answer, DnsError};
use serde::Serialize;

/// Why a lookup gave no usable answer, in a form that can be serialized into an audit result.
/// NXDOMAIN is not here: it is a definitive "no record", never a failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DnsFailure {
    /// The server failed (SERVFAIL).
    ServFail,
    /// The server refused (REFUSED).
    Refused,
    /// No answer in time.
    Timeout,
    /// The request's query budget is spent.
    BudgetExhausted,
    /// The name could not be queried (too long, empty label, ...).
    InvalidName,
    /// Any other failure.
    Other,
}

impl DnsFailure {
    /// Maps a port error to a failure; `None` for NXDOMAIN, which is an answer.
    pub(crate) fn from_error(error: &DnsError) -> Option<DnsFailure> {
        match error {
            DnsError::NxDomain => None,
            DnsError::ServFail => Some(DnsFailure::ServFail),
            DnsError::Refused => Some(DnsFailure::Refused),
            DnsError::Timeout => Some(DnsFailure::Timeout),
            DnsError::BudgetExhausted => Some(DnsFailure::BudgetExhausted),
            DnsError::InvalidName(_) => Some(DnsFailure::InvalidName),
            DnsError::Other(_) => Some(DnsFailure::Other),
        }
    }
}

/// A lookup result with NXDOMAIN folded into "no records": `Ok(None)` for NXDOMAIN,
/// `Ok(Some(answer))` for an answer (possibly NODATA), `Err` for a failure.
pub(crate) fn fold_nxdomain(
    result: Result<Answer, DnsError>,
) -> Result<Option<Answer>, DnsFailure> {
    match result {
        Ok(answer) => Ok(Some(answer)),
        Err(error) => match DnsFailure::from_error(&error) {
            None => Ok(None),
            Some(failure) => Err(failure),
        },
    }
}

/// Lower-cases a domain, strips one trailing dot and checks DNS length limits (253 octets in
/// text form, labels of 1..=63). Returns `None` for anything that cannot be queried.
pub(crate) fn normalize_domain(domain: &str) -> Option<String> {
    let trimmed = domain.trim();
    let trimmed = trimmed.strip_suffix('.').unwrap_or(trimmed);
    if trimmed.is_empty() || trimmed.len() > 253 || !trimmed.is_ascii() {
        return None;
    }
    let lower = trimmed.to_ascii_lowercase();
    if lower
        .split('.')
        .any(|label| label.is_empty() || label.len() > 63 || label.contains(char::is_whitespace))
    {
        return None;
    }
    Some(lower)
}

/// True when `host` is a syntactically acceptable host name for a report address: LDH labels
/// (underscores tolerated), at least two labels, no IP literal.
pub(crate) fn is_host_name(host: &str) -> bool {
    let Some(host) = normalize_domain(host) else {
        return false;
    };
    let labels: Vec<&str> = host.split('.').collect();
    labels.len() >= 2
        && labels.iter().all(|label| {
            label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
        && !labels
            .last()
            .is_some_and(|tld| tld.bytes().all(|b| b.is_ascii_digit()))
}

/// The number of labels in a normalized name.
pub(crate) fn label_count(name: &str) -> usize {
    name.split('.').count()
}

/// The last `n` labels of a normalized name (the whole name when it has fewer).
pub(crate) fn last_labels(name: &str, n: usize) -> String {
    let labels: Vec<&str> = name.split('.').collect();
    let start = labels.len().saturating_sub(n);
    labels[start..].join(".")
}
