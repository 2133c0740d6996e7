//! Every sentence of a prospecting report, in English and French.
//!
//! Why one module: the HTML and the PDF only lay out what the content says, so a translation
//! is complete once this file is; the report never mixes languages.

use mailward_api_types::prospecting::{FindingStatus, Language, RiskLevel};

/// Picks the sentence for the report's language.
pub fn pick(lang: Language, en: &str, fr: &str) -> String {
    match lang {
        Language::En => en.to_owned(),
        Language::Fr => fr.to_owned(),
    }
}

/// The report's title.
pub fn title(lang: Language) -> String {
    pick(
        lang,
        "Email security assessment",
        "Évaluation de la sécurité de la messagerie",
    )
}

/// The subtitle under the title.
pub fn subtitle(lang: Language) -> String {
    pick(
        lang,
        "How well your domains are protected against impersonation, checked from public DNS.",
        "Le niveau de protection de vos domaines contre l'usurpation d'identité, vérifié dans le DNS public.",
    )
}

/// The risk words, lowest first.
pub fn risk_word(lang: Language, risk: RiskLevel) -> String {
    match risk {
        RiskLevel::Low => pick(lang, "Low", "Faible"),
        RiskLevel::Moderate => pick(lang, "Moderate", "Modéré"),
        RiskLevel::High => pick(lang, "High", "Élevé"),
        RiskLevel::Critical => pick(lang, "Critical", "Critique"),
    }
}

/// The cover's summary paragraph.
pub fn summary(
    lang: Language,
    audited: usize,
    unprotected: usize,
    generated_for: &str,
    deadline: &str,
) -> String {
    if audited == 0 {
        return pick(
            lang,
            "None of the requested domains could be audited: their nameservers returned nothing usable.",
            "Aucun des domaines demandés n'a pu être audité : leurs serveurs de noms n'ont rien renvoyé d'exploitable.",
        );
    }
    match lang {
        Language::En => {
            let head = format!(
                "We audited {audited} domain{} for {generated_for}.",
                if audited == 1 { "" } else { "s" }
            );
            let body = if unprotected == 0 {
                " Every audited domain enforces DMARC: impersonated mail is rejected by receivers."
                    .to_owned()
            } else {
                format!(
                    " {unprotected} of them can be impersonated today: anyone can send email that \
                     appears to come from them, and receivers will deliver it."
                )
            };
            format!(
                "{head}{body} The plan below brings every domain to full protection by {deadline}."
            )
        }
        Language::Fr => {
            let head = format!(
                "Nous avons audité {audited} domaine{} pour {generated_for}.",
                if audited == 1 { "" } else { "s" }
            );
            let body = if unprotected == 0 {
                " Chaque domaine audité applique DMARC : les messages usurpés sont rejetés par les destinataires."
                    .to_owned()
            } else {
                format!(
                    " {unprotected} d'entre eux peuvent être usurpés aujourd'hui : n'importe qui peut \
                     envoyer des messages qui semblent en provenir, et les destinataires les livreront."
                )
            };
            format!(
                "{head}{body} Le plan ci-dessous amène chaque domaine à une protection complète d'ici le {deadline}."
            )
        }
    }
}

/// The label of a dimension.
pub fn dimension_label(dimension: &str) -> &'static str {
    match dimension {
        "mx" => "MX",
        "spf" => "SPF",
        "dkim" => "DKIM",
        "dmarc" => "DMARC",
        "bimi" => "BIMI",
        "mta_sts" => "MTA-STS",
        "tls_rpt" => "TLS-RPT",
        "dane" => "DANE",
        _ => "DNS",
    }
}

/// A finding's one-line title.
pub fn finding_title(lang: Language, dimension: &str, status: FindingStatus) -> String {
    use FindingStatus::{Error, Fail, Pass, Warn};
    let (en, fr) = match (dimension, status) {
        (_, Error) => {
            let label = dimension_label(dimension);
            return match lang {
                Language::En => format!("{label} could not be checked"),
                Language::Fr => format!("{label} n'a pas pu être vérifié"),
            };
        }
        ("mx", Pass) => (
            "Mail servers are published",
            "Les serveurs de messagerie sont publiés",
        ),
        ("mx", Warn) => (
            "Some mail servers have problems",
            "Certains serveurs de messagerie posent problème",
        ),
        ("mx", Fail) => (
            "No working mail server",
            "Aucun serveur de messagerie fonctionnel",
        ),
        ("spf", Pass) => (
            "SPF lists the authorised senders",
            "SPF liste les expéditeurs autorisés",
        ),
        ("spf", Warn) => ("SPF has weaknesses", "SPF présente des faiblesses"),
        ("spf", Fail) => ("SPF is missing or broken", "SPF est absent ou invalide"),
        ("dkim", Pass) => (
            "Messages are signed with DKIM",
            "Les messages sont signés avec DKIM",
        ),
        ("dkim", Warn) => ("DKIM has weaknesses", "DKIM présente des faiblesses"),
        ("dkim", Fail) => (
            "No DKIM signing key found",
            "Aucune clé de signature DKIM trouvée",
        ),
        ("dmarc", Pass) => (
            "DMARC rejects impersonated mail",
            "DMARC rejette les messages usurpés",
        ),
        ("dmarc", Warn) => (
            "DMARC does not stop impersonation yet",
            "DMARC ne bloque pas encore l'usurpation",
        ),
        ("dmarc", Fail) => ("No DMARC protection", "Aucune protection DMARC"),
        ("bimi", Pass) => (
            "The brand logo is published (BIMI)",
            "Le logo de la marque est publié (BIMI)",
        ),
        ("bimi", Warn) => (
            "No brand logo in inboxes (BIMI)",
            "Aucun logo de marque dans les boîtes de réception (BIMI)",
        ),
        ("bimi", Fail) => (
            "The BIMI record is broken",
            "L'enregistrement BIMI est invalide",
        ),
        ("mta_sts", Pass) => (
            "Incoming mail must be encrypted (MTA-STS)",
            "Le courrier entrant doit être chiffré (MTA-STS)",
        ),
        ("mta_sts", Warn) => (
            "Encryption of incoming mail is not enforced (MTA-STS)",
            "Le chiffrement du courrier entrant n'est pas imposé (MTA-STS)",
        ),
        ("mta_sts", Fail) => (
            "The MTA-STS policy is broken",
            "La politique MTA-STS est invalide",
        ),
        ("tls_rpt", Pass) => (
            "Encryption failures are reported (TLS-RPT)",
            "Les échecs de chiffrement sont signalés (TLS-RPT)",
        ),
        ("tls_rpt", Warn) => (
            "Encryption failures are not reported (TLS-RPT)",
            "Les échecs de chiffrement ne sont pas signalés (TLS-RPT)",
        ),
        ("tls_rpt", Fail) => (
            "The TLS-RPT record is broken",
            "L'enregistrement TLS-RPT est invalide",
        ),
        ("dane", Pass) => (
            "Mail servers are pinned with DANE",
            "Les serveurs de messagerie sont épinglés avec DANE",
        ),
        ("dane", Warn) => (
            "Mail servers are not pinned with DANE",
            "Les serveurs de messagerie ne sont pas épinglés avec DANE",
        ),
        ("dane", Fail) => (
            "The DANE records are unusable",
            "Les enregistrements DANE sont inutilisables",
        ),
        _ => ("DNS check", "Vérification DNS"),
    };
    pick(lang, en, fr)
}

/// Why a dimension matters, in one sentence.
pub fn why(lang: Language, dimension: &str) -> String {
    let (en, fr) = match dimension {
        "mx" => (
            "MX records say which servers receive the domain's mail.",
            "Les enregistrements MX indiquent quels serveurs reçoivent le courrier du domaine.",
        ),
        "spf" => (
            "SPF lists the servers allowed to send mail for the domain.",
            "SPF liste les serveurs autorisés à envoyer du courrier pour le domaine.",
        ),
        "dkim" => (
            "DKIM signs each message so receivers can prove it was not forged or altered.",
            "DKIM signe chaque message pour que les destinataires puissent prouver qu'il n'a été ni falsifié ni modifié.",
        ),
        "dmarc" => (
            "DMARC tells receivers to reject mail that fails SPF and DKIM: it is what stops impersonation.",
            "DMARC demande aux destinataires de rejeter le courrier qui échoue à SPF et DKIM : c'est ce qui arrête l'usurpation.",
        ),
        "bimi" => (
            "BIMI shows the brand's logo next to authenticated mail in major inboxes.",
            "BIMI affiche le logo de la marque à côté du courrier authentifié dans les principales messageries.",
        ),
        "mta_sts" => (
            "MTA-STS makes sending servers use encryption when they deliver to the domain.",
            "MTA-STS oblige les serveurs expéditeurs à chiffrer lorsqu'ils livrent au domaine.",
        ),
        "tls_rpt" => (
            "TLS-RPT asks senders to report failed encrypted deliveries.",
            "TLS-RPT demande aux expéditeurs de signaler les livraisons chiffrées en échec.",
        ),
        "dane" => (
            "DANE publishes the mail servers' certificates in DNSSEC-signed DNS, so sending servers that check it cannot be tricked into unencrypted delivery.",
            "DANE publie les certificats des serveurs de messagerie dans un DNS signé par DNSSEC, pour que les serveurs expéditeurs qui le vérifient ne puissent pas être amenés à livrer sans chiffrement.",
        ),
        _ => ("", ""),
    };
    pick(lang, en, fr)
}

/// What an audit code means, when the report has words for it.
pub fn code_sentence(lang: Language, code: &str) -> Option<String> {
    let (en, fr) = match code {
        "dns_lookup_failed" => (
            "A DNS lookup failed, so the record's presence is unknown.",
            "Une requête DNS a échoué : la présence de l'enregistrement est inconnue.",
        ),
        "null_mx" => (
            "The domain declares that it receives no mail (null MX).",
            "Le domaine déclare ne recevoir aucun courrier (MX nul).",
        ),
        "mx_host_unresolvable" | "mx_all_hosts_unresolvable" => (
            "A mail server name does not resolve to an address.",
            "Le nom d'un serveur de messagerie ne se résout pas en adresse.",
        ),
        "no_spf_record" => (
            "No SPF record is published.",
            "Aucun enregistrement SPF n'est publié.",
        ),
        "multiple_spf_records" => (
            "Several SPF records are published; receivers treat that as an error.",
            "Plusieurs enregistrements SPF sont publiés ; les destinataires le traitent comme une erreur.",
        ),
        "lookup_limit_exceeded" => (
            "The SPF record needs more than 10 DNS lookups; receivers stop and fail it.",
            "L'enregistrement SPF nécessite plus de 10 requêtes DNS ; les destinataires l'abandonnent en erreur.",
        ),
        "permissive_all" => (
            "The SPF record ends in a permissive all (+all or ?all): it does not turn other servers away.",
            "L'enregistrement SPF se termine par un all permissif (+all ou ?all) : il ne refuse pas les autres serveurs.",
        ),
        "syntax_error" => (
            "The SPF record has a syntax error, so receivers treat it as broken.",
            "L'enregistrement SPF contient une erreur de syntaxe : les destinataires le considèrent invalide.",
        ),
        "include_target_without_spf" => (
            "An include points at a name with no SPF record.",
            "Un include pointe vers un nom sans enregistrement SPF.",
        ),
        "ptr_deprecated" => (
            "The SPF record uses the deprecated ptr mechanism.",
            "L'enregistrement SPF utilise le mécanisme ptr, obsolète.",
        ),
        "no_dkim_key_found" => (
            "No DKIM key was found at the selectors used by common services.",
            "Aucune clé DKIM n'a été trouvée aux sélecteurs des services courants.",
        ),
        "no_usable_dkim_key" => (
            "DKIM keys exist but none is usable (revoked, malformed or too weak).",
            "Des clés DKIM existent mais aucune n'est utilisable (révoquée, malformée ou trop faible).",
        ),
        "dmarc_record_missing" => (
            "No DMARC record is published: receivers accept mail that impersonates the domain.",
            "Aucun enregistrement DMARC n'est publié : les destinataires acceptent le courrier qui usurpe le domaine.",
        ),
        "dmarc_record_invalid" => (
            "The DMARC record cannot be parsed, so receivers ignore it.",
            "L'enregistrement DMARC est illisible, les destinataires l'ignorent donc.",
        ),
        "dmarc_multiple_records" => (
            "Several DMARC records are published; receivers ignore them all.",
            "Plusieurs enregistrements DMARC sont publiés ; les destinataires les ignorent tous.",
        ),
        "policy_none" => (
            "The policy is p=none: failing mail is only reported, never blocked.",
            "La politique est p=none : le courrier en échec est seulement signalé, jamais bloqué.",
        ),
        "policy_quarantine" => (
            "The policy is p=quarantine: impersonated mail goes to spam instead of being rejected.",
            "La politique est p=quarantine : le courrier usurpé va en spam au lieu d'être rejeté.",
        ),
        "testing_mode" => (
            "The policy applies to only part of the mail (pct or t=y).",
            "La politique ne s'applique qu'à une partie du courrier (pct ou t=y).",
        ),
        "subdomain_policy_weaker" => (
            "Subdomains have a weaker policy (sp) than the domain.",
            "Les sous-domaines ont une politique (sp) plus faible que le domaine.",
        ),
        "rua_missing" => (
            "No aggregate-report address (rua): nobody sees who sends as the domain.",
            "Aucune adresse de rapports agrégés (rua) : personne ne voit qui envoie au nom du domaine.",
        ),
        "rua_destination_unauthorized" => (
            "The report address is on another domain that has not authorised it; reports are dropped.",
            "L'adresse de rapports est sur un autre domaine qui ne l'a pas autorisée ; les rapports sont perdus.",
        ),
        "bimi_record_missing" => (
            "No BIMI record is published.",
            "Aucun enregistrement BIMI n'est publié.",
        ),
        "dmarc_not_enforced_for_bimi" => (
            "BIMI needs DMARC at quarantine or reject first.",
            "BIMI exige d'abord DMARC en quarantine ou reject.",
        ),
        "mta_sts_not_configured" => (
            "No MTA-STS policy is published.",
            "Aucune politique MTA-STS n'est publiée.",
        ),
        "mode_testing" => (
            "The MTA-STS policy is in testing mode: failures are reported, not blocked.",
            "La politique MTA-STS est en mode test : les échecs sont signalés, pas bloqués.",
        ),
        "mode_none" => (
            "The MTA-STS policy is switched off (mode none).",
            "La politique MTA-STS est désactivée (mode none).",
        ),
        "tls_rpt_not_configured" => (
            "No TLS-RPT record is published.",
            "Aucun enregistrement TLS-RPT n'est publié.",
        ),
        "dane_not_configured" => (
            "No mail server publishes a DANE TLSA record.",
            "Aucun serveur de messagerie ne publie d'enregistrement DANE TLSA.",
        ),
        "dane_zone_unsigned" => (
            "TLSA records are published in a zone without DNSSEC: senders ignore them.",
            "Des enregistrements TLSA sont publiés dans une zone sans DNSSEC : les expéditeurs les ignorent.",
        ),
        "dane_no_usable_record" => (
            "A mail server's TLSA records are all unusable for email.",
            "Les enregistrements TLSA d'un serveur de messagerie sont tous inutilisables pour le courrier.",
        ),
        "dane_partial" => (
            "Only some mail servers publish DANE records.",
            "Seuls certains serveurs de messagerie publient des enregistrements DANE.",
        ),
        _ => return None,
    };
    Some(pick(lang, en, fr))
}

/// Why a domain was left out.
pub fn skipped_message(lang: Language, reason: &str) -> String {
    let (en, fr) = match reason {
        "invalid_domain" => (
            "Not a valid domain name.",
            "Ce n'est pas un nom de domaine valide.",
        ),
        "duplicate" => ("Listed more than once.", "Indiqué plusieurs fois."),
        "domain_not_found" => (
            "The domain does not exist in DNS.",
            "Le domaine n'existe pas dans le DNS.",
        ),
        _ => (
            "Its nameservers returned nothing usable.",
            "Ses serveurs de noms n'ont rien renvoyé d'exploitable.",
        ),
    };
    pick(lang, en, fr)
}

/// The plan's steps, in order.
pub fn plan_steps(lang: Language) -> [String; 5] {
    [
        pick(
            lang,
            "Publish a DMARC record with reporting (p=none) on every domain",
            "Publier un enregistrement DMARC avec rapports (p=none) sur chaque domaine",
        ),
        pick(
            lang,
            "Identify every service that sends mail as the domains, from the DMARC reports",
            "Identifier, grâce aux rapports DMARC, chaque service qui envoie au nom des domaines",
        ),
        pick(
            lang,
            "Authorise those services in SPF and sign their mail with DKIM",
            "Autoriser ces services dans SPF et signer leur courrier avec DKIM",
        ),
        pick(
            lang,
            "Move DMARC to p=quarantine and watch the reports",
            "Passer DMARC à p=quarantine et surveiller les rapports",
        ),
        pick(
            lang,
            "Enforce DMARC with p=reject; add MTA-STS and TLS-RPT",
            "Appliquer DMARC avec p=reject ; ajouter MTA-STS et TLS-RPT",
        ),
    ]
}

/// The potential-loss model in words.
pub fn loss_explanation(lang: Language, reference: &str) -> String {
    match lang {
        Language::En => format!(
            "Illustrative estimate, not a quote: each domain's yearly exposure is a reference \
             impersonation incident cost of {reference} times the share of protection the domain \
             lacks ((100 - score) / 100); domains that send no mail count one fifth."
        ),
        Language::Fr => format!(
            "Estimation indicative, non contractuelle : l'exposition annuelle de chaque domaine est \
             le coût de référence d'un incident d'usurpation, {reference}, multiplié par la part de \
             protection qui lui manque ((100 - score) / 100) ; les domaines qui n'envoient pas de \
             courrier comptent pour un cinquième."
        ),
    }
}

/// Labels the HTML and PDF renderings use around the content.
pub struct Labels {
    pub prepared_for: String,
    pub prepared_by: String,
    pub date: String,
    pub deadline: String,
    pub average_score: String,
    pub overall_risk: String,
    pub score: String,
    pub risk: String,
    pub findings: String,
    pub sending_services: String,
    pub no_sending_services: String,
    pub dkim: String,
    pub dns_records: String,
    pub potential_loss: String,
    pub total: String,
    pub plan: String,
    pub week: String,
    pub skipped: String,
    pub parked: String,
    pub footer: String,
}

/// The labels in the report's language.
pub fn labels(lang: Language) -> Labels {
    Labels {
        prepared_for: pick(lang, "Prepared for", "Préparé pour"),
        prepared_by: pick(lang, "Prepared by", "Préparé par"),
        date: pick(lang, "Audit date", "Date de l'audit"),
        deadline: pick(lang, "Recommended completion", "Achèvement recommandé"),
        average_score: pick(lang, "Average score", "Score moyen"),
        overall_risk: pick(lang, "Overall risk", "Risque global"),
        score: pick(lang, "Score", "Score"),
        risk: pick(lang, "Risk", "Risque"),
        findings: pick(lang, "Findings", "Constats"),
        sending_services: pick(
            lang,
            "Authorised sending services",
            "Services d'envoi autorisés",
        ),
        no_sending_services: pick(
            lang,
            "The SPF record authorises no known sending service.",
            "L'enregistrement SPF n'autorise aucun service d'envoi connu.",
        ),
        dkim: pick(lang, "DKIM", "DKIM"),
        dns_records: pick(lang, "Published DNS records", "Enregistrements DNS publiés"),
        potential_loss: pick(lang, "Potential loss", "Perte potentielle"),
        total: pick(lang, "Total per year", "Total par an"),
        plan: pick(lang, "Recommended plan", "Plan recommandé"),
        week: pick(lang, "Week", "Semaine"),
        skipped: pick(lang, "Domains not audited", "Domaines non audités"),
        parked: pick(
            lang,
            "Sends no mail: only SPF and DMARC are judged.",
            "N'envoie pas de courrier : seuls SPF et DMARC sont évalués.",
        ),
        footer: pick(
            lang,
            "Checked from public DNS by Mailward.",
            "Vérifié dans le DNS public par Mailward.",
        ),
    }
}

/// A DKIM state in words.
pub fn dkim_state(lang: Language, state: mailward_api_types::prospecting::DkimState) -> String {
    use mailward_api_types::prospecting::DkimState::{Missing, Signed, Unknown};
    match state {
        Signed => pick(lang, "signed", "signé"),
        Missing => pick(lang, "missing", "absent"),
        Unknown => pick(lang, "unknown", "inconnu"),
    }
}

/// A finding status in words.
pub fn status_word(lang: Language, status: FindingStatus) -> String {
    match status {
        FindingStatus::Pass => pick(lang, "pass", "conforme"),
        FindingStatus::Warn => pick(lang, "warning", "attention"),
        FindingStatus::Fail => pick(lang, "fail", "échec"),
        FindingStatus::Error => pick(lang, "error", "erreur"),
    }
}
