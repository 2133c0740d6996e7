//! Domain-name helpers shared by the evaluator and the auditor.
//!
//! SPF distinguishes two checks. A *domain-spec* in a record is checked syntactically by the
//! parser (RFC 7208 §7.1, it must end in a macro or a valid top label). A *target name* produced
//! by macro expansion is not re-checked for syntax (the suite's `invalid-hello-macro`), but it can
//! still be impossible to put in a DNS query: an empty label, a label over 63 octets. Those are
//! treated as names that do not exist (§4.3, §4.8), which is what [`is_queryable`] decides.

use std::net::IpAddr;

/// Longest domain name SPF will query (RFC 7208 §7.3: expansions are cut from the left to fit).
pub const MAX_DOMAIN_LEN: usize = 253;

/// Longest DNS label.
pub const MAX_LABEL_LEN: usize = 63;

/// Removes one trailing dot, since `example.com.` and `example.com` are the same name (§7.3).
pub fn strip_trailing_dot(name: &str) -> &str {
    name.strip_suffix('.').unwrap_or(name)
}

/// True when `name` (without its trailing dot) can be sent as a DNS query: not empty, every label
/// 1 to 63 octets, at most 253 octets in all. Characters are not restricted: `%` and spaces can
/// legitimately appear after macro expansion (the suite's `macro-mania-in-domain`).
pub fn is_queryable(name: &str) -> bool {
    let name = strip_trailing_dot(name);
    !name.is_empty()
        && name.len() <= MAX_DOMAIN_LEN
        && name
            .split('.')
            .all(|label| !label.is_empty() && label.len() <= MAX_LABEL_LEN)
}

/// True when `domain` is acceptable as the starting `<domain>` of `check_host()` (§4.3): queryable,
/// multi-label, and made of letters, digits, hyphens and underscores only, so that a domain
/// literal such as `[192.0.2.1]` or a single-label HELO gives `none` rather than a lookup.
pub fn is_valid_initial_domain(domain: &str) -> bool {
    let domain = strip_trailing_dot(domain);
    is_queryable(domain)
        && domain.contains('.')
        && domain
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// Cuts labels from the left until the name fits in 253 octets (RFC 7208 §7.3). A name that
/// cannot be made to fit (one enormous label) is returned unchanged and fails [`is_queryable`].
pub fn truncate_left(name: &str) -> &str {
    let mut rest = name;
    while rest.len() > MAX_DOMAIN_LEN {
        match rest.find('.') {
            Some(dot) => rest = &rest[dot + 1..],
            None => return name,
        }
    }
    rest
}

/// Case-insensitive "is `name` equal to or a subdomain of `parent`", used by `ptr` and `%{p}`.
pub fn is_same_or_subdomain(name: &str, parent: &str) -> bool {
    let name = strip_trailing_dot(name).to_ascii_lowercase();
    let parent = strip_trailing_dot(parent).to_ascii_lowercase();
    name == parent
        || name
            .strip_suffix(parent.as_str())
            .is_some_and(|prefix| prefix.len() > 1 && prefix.ends_with('.'))
}

/// The reverse-lookup name of an address (`4.3.2.1.in-addr.arpa`, nibbles under `ip6.arpa`).
pub fn reverse_name(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            format!("{}.{}.{}.{}.in-addr.arpa", o[3], o[2], o[1], o[0])
        }
        IpAddr::V6(_) => format!("{}.ip6.arpa", nibbles(ip, false, true)),
    }
}

/// The `%{i}` form of an address (RFC 7208 §7.3): dotted quad for IPv4, dot-separated nibbles
/// for IPv6. Nibbles are upper-case as the RFC 7208 suite expects (`v-macro-ip6`); DNS does not
/// care about case, and only explanation text can show the difference.
pub fn macro_ip(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(_) => nibbles(ip, true, false),
    }
}

/// The 32 nibbles of an IPv6 address, dot-separated, most significant first unless `reversed`.
fn nibbles(ip: IpAddr, upper: bool, reversed: bool) -> String {
    let IpAddr::V6(v6) = ip else {
        return String::new();
    };
    let mut parts = Vec::with_capacity(32);
    for byte in v6.octets() {
        parts.push(byte >> 4);
        parts.push(byte & 0x0f);
    }
    if reversed {
        parts.reverse();
    }
    let digits: Vec<String> = parts
        .iter()
        .map(|n| {
            if upper {
                format!("{n:X}")
            } else {
                format!("{n:x}")
            }
        })
        .collect();
    digits.join(".")
}

/// Converts an IPv4-mapped IPv6 address to IPv4 (RFC 7208 §5: it MUST be treated as IPv4).
pub fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => ip,
        },
        IpAddr::V4(_) => ip,
    }
}

/// True when `ip` lies in `network/prefix`; families never match each other.
pub fn in_network(ip: IpAddr, network: IpAddr, prefix: u8) -> bool {
    match (ip, network) {
        (IpAddr::V4(a), IpAddr::V4(b)) => {
            let prefix = u32::from(prefix.min(32));
            let mask = if prefix == 0 {
                0
            } else {
                u32::MAX << (32 - prefix)
            };
            (u32::from(a) & mask) == (u32::from(b) & mask)
        }
        (IpAddr::V6(a), IpAddr::V6(b)) => {
            let prefix = u32::from(prefix.min(128));
            let mask = if prefix == 0 {
                0
            } else {
                u128::MAX << (128 - prefix)
            };
            (u128::from(a) & mask) == (u128::from(b) & mask)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queryable_names() {
        for (name, expect) in [
            ("example.com", true),
            ("example.com.", true),
            ("a..b", false),
            ("", false),
            (".", false),
            ("macro%percent  space%20url-space.example.com", true),
            (&format!("{}.com", "a".repeat(64)), false),
            (&format!("{}.com", "a".repeat(63)), true),
        ] {
            assert_eq!(is_queryable(name), expect, "{name}");
        }
    }

    #[test]
    fn initial_domains() {
        for (name, expect) in [
            ("example.com", true),
            ("A2345678", false),
            ("[1.2.3.5]", false),
            ("a...example.com", false),
            ("_spf.example.com", true),
        ] {
            assert_eq!(is_valid_initial_domain(name), expect, "{name}");
        }
    }

    #[test]
    fn truncation_removes_whole_labels() {
        let long = format!(
            "foobar.{}example.com",
            "somewhat.long.exp.example.com.".repeat(8)
        );
        let cut = truncate_left(&long);
        assert!(cut.len() <= MAX_DOMAIN_LEN);
        assert!(cut.starts_with("somewhat."));
        assert_eq!(truncate_left("short.example"), "short.example");
        let one_label = "x".repeat(300);
        assert_eq!(truncate_left(&one_label), one_label);
    }

    #[test]
    fn reverse_names_and_networks() {
        let v6: IpAddr = "2001:db8::1".parse().unwrap();
        assert!(reverse_name(v6).starts_with("1.0.0.0."));
        assert!(reverse_name(v6).ends_with("8.b.d.0.1.0.0.2.ip6.arpa"));
        assert_eq!(
            reverse_name("192.0.2.1".parse().unwrap()),
            "1.2.0.192.in-addr.arpa"
        );
        assert!(in_network(
            "1.2.3.4".parse().unwrap(),
            "1.1.1.1".parse().unwrap(),
            0
        ));
        assert!(!in_network(
            "1.2.3.4".parse().unwrap(),
            "::1".parse().unwrap(),
            0
        ));
        assert_eq!(
            canonical_ip("::ffff:1.2.3.4".parse().unwrap()),
            "1.2.3.4".parse::<IpAddr>().unwrap()
        );
        assert!(is_same_or_subdomain("mx.Example.com.", "example.COM"));
        assert!(!is_same_or_subdomain("badexample.com", "example.com"));
    }
}
