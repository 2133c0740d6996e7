//! Host-name syntax shared by the MX, MTA-STS and URL checks.

/// True when `name` is a syntactically valid host name (RFC 1123 letters, digits and hyphens;
/// labels 1..=63 octets, not starting or ending with a hyphen; at most 253 octets; one trailing
/// dot allowed). IP literals are not host names: an all-numeric last label is refused. Why: MX
/// targets and MTA-STS patterns must be names, and audits need one shared definition.
pub fn is_hostname(name: &str) -> bool {
    let name = name.strip_suffix('.').unwrap_or(name);
    if name.is_empty() || name.len() > 253 {
        return false;
    }
    let labels: Vec<&str> = name.split('.').collect();
    if !labels
        .iter()
        .all(|l| mailward_domain::names::is_label(l, false))
    {
        return false;
    }
    // A name whose top label is all digits looks like (or is) an IPv4 literal.
    labels
        .last()
        .is_some_and(|tld| !tld.bytes().all(|b| b.is_ascii_digit()))
}

/// Lower-cases a host name and strips one trailing dot, the form comparisons use.
pub(crate) fn normalize(name: &str) -> String {
    let trimmed = name.trim();
    trimmed
        .strip_suffix('.')
        .unwrap_or(trimmed)
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostnames() {
        assert!(is_hostname("mail.example.com"));
        assert!(is_hostname("mail.example.com."));
        assert!(is_hostname("localhost"));
        assert!(!is_hostname(""));
        assert!(!is_hostname("."));
        assert!(!is_hostname("a..b"));
        assert!(!is_hostname("-a.example"));
        assert!(!is_hostname("192.0.2.1"));
        assert!(!is_hostname("under_score.example"));
        assert!(!is_hostname(&"a".repeat(64)));
        assert!(!is_hostname(&format!("{}.com", "a.".repeat(130))));
        assert!(!is_hostname("mail.exämple.com"));
    }
}
