//! DNS hosting providers recognised from a domain's name servers (SPEC §2.11): the pattern table
//! behind `GET /dns-providers/detect` and the `dns_provider` of the records guidance.

/// NS host suffix → provider id. Ordered: the first match wins.
const PROVIDER_PATTERNS: &[(&str, &str)] = &[
    ("ns.cloudflare.com", "cloudflare"),
    ("awsdns-", "route53"),
    ("googledomains.com", "google"),
    ("ns-cloud-", "google"),
    ("azure-dns.", "azure"),
    ("domaincontrol.com", "godaddy"),
    ("registrar-servers.com", "namecheap"),
    ("digitalocean.com", "digitalocean"),
    ("linode.com", "linode"),
    ("hetzner.com", "hetzner"),
    ("hetzner.de", "hetzner"),
    ("ovh.net", "ovh"),
    ("gandi.net", "gandi"),
    ("dnsimple.com", "dnsimple"),
    ("dnsmadeeasy.com", "dnsmadeeasy"),
    ("nsone.net", "ns1"),
    ("ultradns.", "ultradns"),
    ("akam.net", "akamai"),
    ("dynect.net", "dyn"),
    ("wixdns.net", "wix"),
    ("squarespacedns.com", "squarespace"),
    ("ui-dns.", "ionos"),
    ("vercel-dns.com", "vercel"),
    ("porkbun.com", "porkbun"),
    ("name.com", "namecom"),
    ("dnsowl.com", "namesilo"),
    ("cloudns.net", "cloudns"),
    ("easydns.", "easydns"),
    ("he.net", "hurricane_electric"),
    ("bluehost.com", "bluehost"),
    ("hostgator.com", "hostgator"),
    ("hostinger.com", "hostinger"),
    ("dns-parking.com", "hostinger"),
    ("netlify.com", "netlify"),
    ("wordpress.com", "wordpress"),
    ("shopify.com", "shopify"),
    ("one.com", "one_com"),
    ("strato.de", "strato"),
    ("transip.net", "transip"),
    ("transip.nl", "transip"),
    ("nic.ru", "ru_center"),
    ("yandex.net", "yandex"),
    ("alidns.com", "alibaba"),
    ("dnspod.net", "dnspod"),
];

/// The provider id of a set of name servers: the first pattern matching any of them.
pub fn provider_of(nameservers: &[String]) -> Option<&'static str> {
    PROVIDER_PATTERNS.iter().find_map(|(pattern, id)| {
        nameservers
            .iter()
            .any(|ns| {
                let ns = ns.trim_end_matches('.').to_ascii_lowercase();
                if pattern.ends_with('.') || pattern.ends_with('-') {
                    ns.contains(pattern)
                } else {
                    ns == *pattern || ns.ends_with(&format!(".{pattern}"))
                }
            })
            .then_some(*id)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_are_detected_from_name_servers() {
        let ns = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            provider_of(&ns(&["ada.ns.cloudflare.com", "bob.ns.cloudflare.com"])),
            Some("cloudflare")
        );
        assert_eq!(provider_of(&ns(&["ns-123.awsdns-45.com"])), Some("route53"));
        assert_eq!(
            provider_of(&ns(&["ns01.domaincontrol.com."])),
            Some("godaddy")
        );
        assert_eq!(provider_of(&ns(&["ns1-01.azure-dns.com"])), Some("azure"));
        assert_eq!(provider_of(&ns(&["ns1.example.net"])), None);
        assert_eq!(
            provider_of(&ns(&["ns1.notname.com"])),
            None,
            "suffix match is on label boundaries"
        );
        assert_eq!(provider_of(&[]), None);
    }
}
