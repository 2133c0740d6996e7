//! Domain names as people type them, turned into the one form the service stores and asks DNS
//! for. One normaliser for every input: a route parameter, a domain to watch, a tool's host.

/// Why a name was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Empty, too long, bad labels, an IP address or not a name at all.
    #[error("not a domain name")]
    Invalid,
}

/// The one rule for a label of a domain name: 1 to 63 octets of ASCII letters, digits and
/// hyphens, not starting or ending with a hyphen (RFC 1123 §2.1); with `underscores`, `_` too, for
/// service labels such as `_dmarc` and `_domainkey` (RFC 8552). Every check of a name in the
/// service (domains to watch, email domains, host names, the source catalogue) goes through here.
pub fn is_label(label: &str, underscores: bool) -> bool {
    !label.is_empty()
        && label.len() <= 63
        && !label.starts_with('-')
        && !label.ends_with('-')
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || (underscores && b == b'_'))
}

/// A DNS host name as tools and lookups accept it: trims, drops one trailing dot, IDNA to ASCII,
/// lower case, 1-253 characters, at least two labels of 1-63 letters, digits, hyphens or
/// underscores (so `_dmarc.example.com` passes). IP addresses and URLs are refused.
pub fn normalize_host(raw: &str) -> Result<String, NameError> {
    let trimmed = raw.trim();
    let trimmed = trimmed.strip_suffix('.').unwrap_or(trimmed);
    if trimmed.is_empty() || trimmed.len() > 253 || trimmed.contains("..") {
        return Err(NameError::Invalid);
    }
    let ascii = match url::Host::parse(trimmed) {
        Ok(url::Host::Domain(d)) => d.to_ascii_lowercase(),
        Ok(_) => return Err(NameError::Invalid),
        // The URL host parser refuses underscores; a plain ASCII name with them is still a
        // DNS name (`_dmarc.`, `_domainkey.`).
        Err(_)
            if trimmed
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.') =>
        {
            trimmed.to_ascii_lowercase()
        }
        _ => return Err(NameError::Invalid),
    };
    let labels_ok = ascii.split('.').all(|label| is_label(label, true));
    if !labels_ok || ascii.len() > 253 || !ascii.contains('.') {
        return Err(NameError::Invalid);
    }
    Ok(ascii)
}

/// Normalises a domain name for storage and uniqueness: trimmed, lower-case, no trailing dot,
/// IDNA already applied by the caller. Returns `None` for names that cannot be a registrable
/// domain or subdomain (no dot, bad labels, over 253 characters).
pub fn normalize_domain_name(raw: &str) -> Option<String> {
    let name = raw.trim().trim_end_matches('.').to_ascii_lowercase();
    let ok = !name.is_empty()
        && name.len() <= 253
        && name.contains('.')
        && name.split('.').all(|label| is_label(label, false))
        && !name
            .rsplit('.')
            .next()
            .is_some_and(|tld| tld.bytes().all(|b| b.is_ascii_digit()));
    ok.then_some(name)
}

/// A domain to watch, from what a person pastes: `example.com`, `Example.COM.`,
/// `https://example.com/path` or an IDN. The host is normalised by [`normalize_host`] and must
/// then be a registrable domain or subdomain ([`normalize_domain_name`]: no
/// underscores, hyphen rules, not numeric).
pub fn domain_from_input(raw: &str) -> Result<String, NameError> {
    let trimmed = raw.trim();
    let without_scheme = trimmed
        .strip_prefix("https://")
        .or_else(|| trimmed.strip_prefix("http://"))
        .unwrap_or(trimmed);
    let host = without_scheme.split(['/', '?', '#']).next().unwrap_or("");
    let ascii = normalize_host(host)?;
    normalize_domain_name(&ascii).ok_or(NameError::Invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_normalised_or_refused() {
        assert_eq!(normalize_host(" Example.COM. ").unwrap(), "example.com");
        assert_eq!(
            normalize_host("_dmarc.example.com").unwrap(),
            "_dmarc.example.com"
        );
        assert_eq!(normalize_host("bücher.de").unwrap(), "xn--bcher-kva.de");
        for bad in [
            "",
            ".",
            "localhost",
            "a..b.com",
            "exa mple.com",
            "http://example.com",
            "1.2.3.4",
            &"a".repeat(64),
            "x@y.com",
        ] {
            assert_eq!(normalize_host(bad), Err(NameError::Invalid), "{bad}");
        }
    }

    #[test]
    fn pasted_urls_and_idns_become_domains() {
        assert_eq!(
            domain_from_input("https://Example.com/path?q").unwrap(),
            "example.com"
        );
        assert_eq!(domain_from_input("bücher.de.").unwrap(), "xn--bcher-kva.de");
        for bad in [
            "",
            "localhost",
            "_dmarc.example.com",
            "1.2.3.4",
            "http://",
            "exa mple.com",
        ] {
            assert_eq!(domain_from_input(bad), Err(NameError::Invalid), "{bad}");
        }
    }
}
