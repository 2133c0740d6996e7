//! Building the records a domain should publish from its options: pure, no I/O.
//!
//! Generation problems (an unusable report address, a BIMI logo that cannot be published, ...)
//! never fail the whole plan: the record is built from what is usable, or left out, and the
//! problem becomes a [`Warning`] that [`crate::warnings`] reports.

use crate::model::{DkimPlan, ExpectedRecord, PlanContext, Purpose, RecordKind, Warning};
use mailward_dmarc::{GenerateError, GenerateOptions, SubdomainPolicyOption, generate_record};
use mailward_domain::domain::{Policy, SubdomainPolicy};
use mailward_records::ProblemCode;

/// The TTL recommended for every planned record: one hour. Long enough to keep resolver load
/// and lookup latency low, short enough that a mistake is corrected within the hour. No lower
/// "while verifying" TTL: verification uses uncached lookups against the resolver, and
/// authoritative changes show at once on most providers.
pub const RECOMMENDED_TTL: u32 = 3600;

/// RFC 7208 §4.6.4: at most ten DNS-querying terms per evaluation.
pub const SPF_LOOKUP_LIMIT: u32 = 10;

/// The CNAME target of a delegated DMARC record: `<domain>._dmarc.<hosted_zone>`, where Mailward
/// serves the TXT value of [`dmarc_txt_value`].
pub fn dmarc_cname_target(domain: &str, hosted_zone: &str) -> String {
    format!("{}._dmarc.{}", norm_name(domain), norm_name(hosted_zone))
}

/// Where Mailward serves a domain's hosted SPF record: `<owner>._spf.<hosted_zone>` (`owner` is
/// the domain's hosted owner name), which
/// the customer's record includes (further records of a long chain are `s2.`, `s3.`… below it).
pub fn spf_include_target(domain: &str, hosted_zone: &str) -> String {
    format!("{}._spf.{}", norm_name(domain), norm_name(hosted_zone))
}

/// The SPF record the plan would ask for without hosted SPF: what hosted SPF flattens.
pub fn planned_spf_source(ctx: &PlanContext) -> String {
    source_spf_value(ctx, &mut Vec::new())
}

/// Where Mailward serves a hosted domain's `_mta-sts` TXT: `<owner>._mta-sts.<hosted_zone>`.
pub fn mta_sts_txt_target(domain: &str, hosted_zone: &str) -> String {
    format!("{}._mta-sts.{}", norm_name(domain), norm_name(hosted_zone))
}

/// The CNAME target of `mta-sts.<domain>`: `<domain>.mta-sts.<hosted_zone>` (no underscore: it is
/// an HTTPS host name), where Mailward serves the policy file.
pub fn mta_sts_policy_target(domain: &str, hosted_zone: &str) -> String {
    format!("{}.mta-sts.{}", norm_name(domain), norm_name(hosted_zone))
}

/// The DMARC TXT value for the domain's options: what the domain publishes at `_dmarc` (TXT
/// plan) or what Mailward serves at the delegation target (CNAME plan). `rua` is
/// `monitoring_email` then `additional_emails` (duplicates dropped, case-insensitively); `ruf`
/// is the domain's failure-report address when `dmarc_options.failure_reports`, then
/// `legacy_ruf_emails`; `pct < 100` becomes `t=y` (see `mailward_dmarc::generate_record`).
/// Unusable addresses are dropped (reported by [`crate::warnings`]); `None` only when even the
/// monitoring address is unusable.
pub fn dmarc_txt_value(ctx: &PlanContext) -> Option<String> {
    dmarc_txt(ctx, &mut Vec::new())
}

/// The `_dmarc` CNAME delegation record, whatever `dmarc_delegated` says: what
/// `POST /domains/{id}/hosted-dmarc` returns.
pub fn dmarc_delegation_record(ctx: &PlanContext) -> ExpectedRecord {
    record(
        ctx,
        Purpose::Dmarc,
        RecordKind::Cname,
        &format!("_dmarc.{}", norm_name(&ctx.domain)),
        dmarc_cname_target(&ctx.hosted_owner, &ctx.hosted_zone),
        true,
    )
}

/// The records the domain should publish, in a stable order: DMARC, SPF, DKIM (plan order),
/// MTA-STS TXT, MTA-STS policy host, TLS-RPT, BIMI. DMARC and SPF (and DKIM keys) are
/// `required`; MTA-STS, TLS-RPT and BIMI records only improve an enabled feature and are not.
pub fn expected_records(ctx: &PlanContext) -> Vec<ExpectedRecord> {
    build(ctx).0
}

/// The records plus the warnings their generation produced.
pub(crate) fn build(ctx: &PlanContext) -> (Vec<ExpectedRecord>, Vec<Warning>) {
    if ctx.parked {
        return build_unlocked(&locked_down(ctx));
    }
    build_unlocked(ctx)
}

/// A parked domain's context: it sends no mail, so receivers should reject everything claiming
/// to come from it (M3AAWG's parked-domain practice): DMARC `p=reject`, `sp=reject`, no testing
/// flag; SPF `v=spf1 -all` unless the customer set `target_spf`; no DKIM keys.
fn locked_down(ctx: &PlanContext) -> PlanContext {
    let mut locked = ctx.clone();
    locked.dmarc.policy = Policy::Reject;
    locked.dmarc.sp = SubdomainPolicy::Reject;
    locked.dmarc.pct = 100;
    if locked
        .target_spf
        .as_deref()
        .is_none_or(|t| t.trim().is_empty())
    {
        locked.target_spf = Some("v=spf1 -all".to_owned());
    }
    locked.hosted_spf_record = None;
    locked.known_sender_includes.clear();
    locked.dkim.clear();
    locked
}

fn build_unlocked(ctx: &PlanContext) -> (Vec<ExpectedRecord>, Vec<Warning>) {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let domain = norm_name(&ctx.domain);

    // DMARC.
    if ctx.dmarc_delegated {
        // The hosted TXT is still generated so its problems are reported.
        let _ = dmarc_txt(ctx, &mut warnings);
        out.push(dmarc_delegation_record(ctx));
    } else if let Some(value) = dmarc_txt(ctx, &mut warnings) {
        out.push(record(
            ctx,
            Purpose::Dmarc,
            RecordKind::Txt,
            &format!("_dmarc.{domain}"),
            value,
            true,
        ));
    }
    external_rua_warnings(ctx, &mut warnings);

    // SPF.
    let spf = spf_value(ctx, &mut warnings);
    out.push(record(
        ctx,
        Purpose::Spf,
        RecordKind::Txt,
        &domain,
        spf,
        true,
    ));

    // DKIM.
    for key in &ctx.dkim {
        if let Some(r) = dkim_record(ctx, key, &mut warnings) {
            out.push(r);
        }
    }

    // MTA-STS.
    if let Some(plan) = &ctx.mta_sts {
        match mailward_records::mta_sts::generate(plan.mode, &plan.mx_hosts, plan.max_age) {
            Ok(generated) => {
                let (kind, value) = match &plan.txt_target {
                    Some(target) => (RecordKind::Cname, norm_name(target)),
                    None => (RecordKind::Txt, generated.txt),
                };
                out.push(record(
                    ctx,
                    Purpose::MtaSts,
                    kind,
                    &format!("_mta-sts.{domain}"),
                    value,
                    false,
                ));
                out.push(record(
                    ctx,
                    Purpose::MtaStsPolicy,
                    RecordKind::Cname,
                    &format!("mta-sts.{domain}"),
                    mta_sts_policy_target(&domain, &ctx.hosted_zone),
                    false,
                ));
                for (name, target) in &plan.certificate_validation {
                    out.push(record(
                        ctx,
                        Purpose::MtaStsPolicy,
                        RecordKind::Cname,
                        &norm_name(name),
                        norm_name(target),
                        false,
                    ));
                }
            }
            Err(problems) => warnings.push(Warning::new(
                "mta_sts_invalid",
                format!("MTA-STS records left out: {}", join_problems(&problems)),
            )),
        }
    }

    // TLS-RPT.
    if let Some(rua) = ctx.tls_rpt_rua.as_deref().filter(|r| !r.trim().is_empty()) {
        match mailward_records::tls_rpt::generate(&[rua]) {
            Ok(value) => {
                let mut planned = record(
                    ctx,
                    Purpose::TlsRpt,
                    RecordKind::Txt,
                    &format!("_smtp._tls.{domain}"),
                    value,
                    false,
                );
                // The HTTPS address is an option beside mailto:, never a change: a published
                // mailto-only record stays verified.
                if let Some(https) = ctx.tls_rpt_https.as_deref()
                    && let Ok(both) = mailward_records::tls_rpt::generate(&[rua, https])
                {
                    planned.alternatives.push(both);
                }
                out.push(planned);
            }
            Err(problems) => warnings.push(Warning::new(
                "tls_rpt_invalid",
                format!("TLS-RPT record left out: {}", join_problems(&problems)),
            )),
        }
    }

    // BIMI.
    if ctx.bimi.enabled {
        bimi(ctx, &domain, &mut out, &mut warnings);
    }
    (out, warnings)
}

fn bimi(ctx: &PlanContext, domain: &str, out: &mut Vec<ExpectedRecord>, w: &mut Vec<Warning>) {
    if ctx.bimi_delegated {
        // Hosted: Mailward serves the record built from the files it validated and hosts.
        out.push(record(
            ctx,
            Purpose::Bimi,
            RecordKind::Cname,
            &format!("default._bimi.{domain}"),
            format!(
                "{}.bimi.{}",
                norm_name(&ctx.hosted_owner),
                norm_name(&ctx.hosted_zone)
            ),
            false,
        ));
        enforcement_warning(ctx, w);
        return;
    }
    let Some(logo) = ctx.bimi.logo.as_deref().filter(|l| !l.trim().is_empty()) else {
        w.push(Warning::new(
            "bimi_logo_missing",
            "BIMI is enabled but no logo URL is set: no BIMI record can be built",
        ));
        return;
    };
    match mailward_records::bimi::generate(logo, ctx.bimi.certificate.as_deref()) {
        Ok(generated) => {
            // `missing_certificate` is expected when no certificate is set; other warnings
            // (e.g. a logo not ending in .svg) are worth reading.
            let notes: Vec<_> = generated
                .warnings
                .iter()
                .filter(|p| p.code.as_str() != "missing_certificate")
                .collect();
            if !notes.is_empty() {
                w.push(Warning::new(
                    "bimi_record_warning",
                    notes
                        .iter()
                        .map(|p| p.message.as_str())
                        .collect::<Vec<_>>()
                        .join("; "),
                ));
            }
            out.push(record(
                ctx,
                Purpose::Bimi,
                RecordKind::Txt,
                &format!("default._bimi.{domain}"),
                generated.value,
                false,
            ));
        }
        Err(problems) => w.push(Warning::new(
            "bimi_invalid",
            format!("BIMI record left out: {}", join_problems(&problems)),
        )),
    }
    enforcement_warning(ctx, w);
}

/// BIMI logos show only under an enforcing DMARC policy applied in full.
fn enforcement_warning(ctx: &PlanContext, w: &mut Vec<Warning>) {
    if ctx.dmarc.policy == Policy::None || ctx.dmarc.pct < 100 {
        w.push(Warning::new(
            "bimi_requires_enforcement",
            "mailbox providers show a BIMI logo only under an enforcing DMARC policy (quarantine or reject) applied in full (pct 100)",
        ));
    }
}

fn dkim_record(ctx: &PlanContext, key: &DkimPlan, w: &mut Vec<Warning>) -> Option<ExpectedRecord> {
    let selector = norm_name(&key.selector);
    let value = key.value.trim();
    if selector.is_empty() || value.is_empty() {
        w.push(Warning::new(
            "dkim_key_invalid",
            format!(
                "DKIM key with selector \"{}\" has an empty selector or value and is left out",
                key.selector
            ),
        ));
        return None;
    }
    let value = match key.record_type {
        RecordKind::Txt => value.to_string(),
        RecordKind::Cname => norm_name(value),
        RecordKind::Ns => {
            w.push(Warning::new(
                "dkim_key_invalid",
                format!("DKIM key \"{selector}\" has record type NS; only TXT and CNAME can be published"),
            ));
            return None;
        }
    };
    let host = format!("{selector}._domainkey.{}", norm_name(&ctx.domain));
    Some(record(
        ctx,
        Purpose::Dkim,
        key.record_type,
        &host,
        value,
        true,
    ))
}

/// Generates the DMARC TXT value, dropping addresses the generator refuses (each becomes an
/// `invalid_report_address` warning). Bounded: every retry removes one address.
fn dmarc_txt(ctx: &PlanContext, w: &mut Vec<Warning>) -> Option<String> {
    let mut rua: Vec<String> = Vec::new();
    for a in std::iter::once(&ctx.monitoring_email).chain(&ctx.dmarc.additional_emails) {
        let a = a.trim();
        if !a.is_empty() && !rua.iter().any(|r| r.eq_ignore_ascii_case(a)) {
            rua.push(a.to_string());
        }
    }
    let mut ruf: Vec<String> = Vec::new();
    let own = ctx
        .dmarc
        .failure_reports
        .then(|| mailward_domain::domain::failure_address(&ctx.monitoring_email))
        .flatten();
    for a in own.iter().chain(&ctx.dmarc.legacy_ruf_emails) {
        let a = a.trim();
        if !a.is_empty() && !ruf.iter().any(|r| r.eq_ignore_ascii_case(a)) {
            ruf.push(a.to_string());
        }
    }
    let monitoring = ctx.monitoring_email.trim().to_string();
    let mut options = GenerateOptions {
        policy: dmarc_policy(ctx.dmarc.policy),
        subdomain_policy: match ctx.dmarc.sp {
            SubdomainPolicy::None => SubdomainPolicyOption::None,
            SubdomainPolicy::Quarantine => SubdomainPolicyOption::Quarantine,
            SubdomainPolicy::Reject => SubdomainPolicyOption::Reject,
            SubdomainPolicy::Same => SubdomainPolicyOption::Same,
        },
        pct: ctx.dmarc.pct.min(100),
        strict_spf: ctx.dmarc.strict_spf,
        strict_dkim: ctx.dmarc.strict_dkim,
        rua,
        ruf,
    };
    if ctx.dmarc.pct > 100 {
        w.push(Warning::new(
            "dmarc_pct_invalid",
            format!("pct {} is above 100; 100 is used", ctx.dmarc.pct),
        ));
    }
    let limit = options.rua.len() + options.ruf.len() + 1;
    for _ in 0..limit {
        match generate_record(&options) {
            Ok(value) => return Some(value),
            Err(GenerateError::InvalidAddress { address }) => {
                if address.trim().eq_ignore_ascii_case(&monitoring) {
                    w.push(Warning::new(
                        "dmarc_record_unavailable",
                        format!("Mailward's report address {address} cannot be published in a DMARC record; no DMARC record can be planned"),
                    ));
                    return None;
                }
                w.push(Warning::new(
                    "invalid_report_address",
                    format!("{address} is not a usable DMARC report address and is left out"),
                ));
                options.rua.retain(|a| *a != address);
                options.ruf.retain(|a| *a != address);
            }
            Err(GenerateError::InvalidPct) => return None,
        }
    }
    None
}

/// Additional `rua` addresses on another domain than the policy domain and Mailward's report
/// domain only receive reports if that domain publishes an authorization record (RFC 9989
/// external destinations): worth saying before the user wonders where the reports went.
fn external_rua_warnings(ctx: &PlanContext, w: &mut Vec<Warning>) {
    let domain = norm_name(&ctx.domain);
    let report = norm_name(&ctx.report_domain);
    for a in ctx
        .dmarc
        .additional_emails
        .iter()
        .chain(&ctx.dmarc.legacy_ruf_emails)
    {
        let Some((_, host)) = a.trim().rsplit_once('@') else {
            continue;
        };
        let host = norm_name(host);
        let own = host == domain || host.ends_with(&format!(".{domain}"));
        let ours = !report.is_empty() && (host == report || host.ends_with(&format!(".{report}")));
        if !own && !ours {
            w.push(Warning::new(
                "external_report_destination",
                format!("reports for {a} are only sent if {host} publishes {domain}._report._dmarc.{host} TXT \"v=DMARC1\""),
            ));
        }
    }
}

fn dmarc_policy(p: Policy) -> mailward_dmarc::Policy {
    match p {
        Policy::None => mailward_dmarc::Policy::None,
        Policy::Quarantine => mailward_dmarc::Policy::Quarantine,
        Policy::Reject => mailward_dmarc::Policy::Reject,
    }
}

/// The SPF value to publish. Rules:
///
/// 1. `target_spf` set: that record, whitespace collapsed (a parse failure is warned about,
///    the user's record is still what they asked for).
/// 2. Otherwise the live record's terms (when it parses; an unparseable one is warned about and
///    ignored) followed by `include:<x>` for every known sender include not already present
///    (compared case-insensitively, qualifier `+` ignored), then the `all` term, then the live
///    modifiers (`redirect=`, `exp=`, ...).
/// 3. The `all` term: `-all` is kept when the live record has it; `~all` otherwise (also
///    replacing a permissive `+all`/`?all`/`all`, with a warning). Mailward never escalates to
///    `-all` on its own: DMARC enforcement is the lever, and `-all` can make receivers reject
///    forwarded mail before DMARC is evaluated. A live record ending in `redirect=` without
///    `all` keeps its redirect and gets no `all` (it would disable the redirect).
/// 4. The ten-lookup limit is never exceeded silently: a count of the record's own
///    lookup terms over 10 is warned about here; [`crate::compare`] adds the count through the
///    whole include tree.
///
/// With hosted SPF the customer's record (one include of the served chain) replaces all of it.
fn spf_value(ctx: &PlanContext, w: &mut Vec<Warning>) -> String {
    if let Some(hosted) = ctx
        .hosted_spf_record
        .as_deref()
        .filter(|h| !h.trim().is_empty())
    {
        return hosted.to_owned();
    }
    source_spf_value(ctx, w)
}

fn source_spf_value(ctx: &PlanContext, w: &mut Vec<Warning>) -> String {
    if let Some(target) = ctx.target_spf.as_deref().filter(|t| !t.trim().is_empty()) {
        let value = target.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Err(e) = mailward_spf::parse_record(&value) {
            w.push(Warning::new(
                "spf_target_invalid",
                format!("target_spf does not parse as an SPF record ({e:?}); receivers will treat it as permerror"),
            ));
        }
        static_lookup_warning(&value, w);
        return value;
    }
    let live = ctx
        .live_spf
        .as_deref()
        .map(str::trim)
        .filter(|l| !l.is_empty());
    let live_terms: Vec<String> = match live {
        Some(l) if mailward_spf::parse_record(l).is_ok() => {
            l.split_whitespace().skip(1).map(str::to_string).collect()
        }
        Some(l) => {
            w.push(Warning::new(
                "spf_live_record_invalid",
                format!("the live SPF record \"{l}\" does not parse; the planned record is built from the known senders only"),
            ));
            Vec::new()
        }
        None => Vec::new(),
    };
    let mut mechanisms: Vec<String> = Vec::new();
    let mut modifiers: Vec<String> = Vec::new();
    let mut live_all: Option<String> = None;
    for term in live_terms {
        if is_all(&term) {
            live_all.get_or_insert(term);
        } else if is_modifier(&term) {
            modifiers.push(term);
        } else {
            mechanisms.push(term);
        }
    }
    for include in &ctx.known_sender_includes {
        let target = include.trim();
        let target = match (target.get(..8), target.get(8..)) {
            (Some(prefix), Some(rest)) if prefix.eq_ignore_ascii_case("include:") => rest,
            _ => target,
        };
        let target = norm_name(target);
        if target.is_empty() {
            continue;
        }
        let term = format!("include:{target}");
        let present = mechanisms
            .iter()
            .any(|m| m.trim_start_matches('+').eq_ignore_ascii_case(&term));
        if !present {
            mechanisms.push(term);
        }
    }
    let has_redirect = modifiers
        .iter()
        .any(|m| m.to_ascii_lowercase().starts_with("redirect="));
    let all = match live_all.as_deref() {
        Some("-all") => Some("-all".to_string()),
        Some("~all") => Some("~all".to_string()),
        Some(other) => {
            w.push(Warning::new(
                "spf_permissive_all_replaced",
                format!("the live SPF record ends in \"{other}\", which authorizes every host; the planned record uses ~all"),
            ));
            Some("~all".to_string())
        }
        None if has_redirect => None,
        None => Some("~all".to_string()),
    };
    if mechanisms.is_empty() && !has_redirect {
        w.push(Warning::new(
            "spf_no_senders",
            "the planned SPF record authorizes no sender: add your sending services (known senders or target_spf) before enforcing DMARC",
        ));
    }
    let mut terms = vec!["v=spf1".to_string()];
    terms.extend(mechanisms);
    terms.extend(all);
    terms.extend(modifiers);
    let value = terms.join(" ");
    static_lookup_warning(&value, w);
    value
}

fn is_all(term: &str) -> bool {
    term.trim_start_matches(['+', '-', '~', '?'])
        .eq_ignore_ascii_case("all")
}

/// `name=value` with no `:` or `/` before the `=`: a modifier (RFC 7208 §4.6.1).
fn is_modifier(term: &str) -> bool {
    term.find('=')
        .and_then(|i| term.get(..i))
        .is_some_and(|name| !name.is_empty() && !name.contains([':', '/']))
}

/// Terms of the record itself that cost a lookup (include, a, mx, ptr, exists, redirect).
pub(crate) fn own_lookup_terms(value: &str) -> u32 {
    let mut n = 0u32;
    for term in value.split_whitespace().skip(1) {
        let t = term
            .trim_start_matches(['+', '-', '~', '?'])
            .to_ascii_lowercase();
        let name = t.split([':', '/', '=']).next().unwrap_or("");
        let costs = match name {
            "include" | "exists" | "ptr" | "a" | "mx" => {
                !t.starts_with("a=") && !t.starts_with("mx=")
            }
            "redirect" => t.starts_with("redirect="),
            _ => false,
        };
        if costs {
            n = n.saturating_add(1);
        }
    }
    n
}

fn static_lookup_warning(value: &str, w: &mut Vec<Warning>) {
    let n = own_lookup_terms(value);
    if n > SPF_LOOKUP_LIMIT {
        w.push(Warning::new(
            "spf_lookup_limit",
            format!("the planned SPF record has {n} lookup terms of its own, over the limit of {SPF_LOOKUP_LIMIT}: receivers will return permerror; enable SPF flattening or remove senders"),
        ));
    }
}

fn record(
    ctx: &PlanContext,
    purpose: Purpose,
    record_type: RecordKind,
    host: &str,
    value: String,
    required: bool,
) -> ExpectedRecord {
    let domain = norm_name(&ctx.domain);
    let host = norm_name(host);
    let relative_host = if host == domain {
        "@".to_string()
    } else {
        host.strip_suffix(&format!(".{domain}"))
            .unwrap_or(&host)
            .to_string()
    };
    ExpectedRecord {
        purpose,
        record_type,
        host,
        relative_host,
        value,
        ttl: RECOMMENDED_TTL,
        required,
        alternatives: Vec::new(),
        previously_verified: ctx.previously_verified.contains(&purpose),
    }
}

/// Lower-case, trimmed, without trailing dot: how names are compared everywhere here.
pub(crate) fn norm_name(name: &str) -> String {
    name.trim().trim_end_matches('.').to_ascii_lowercase()
}

fn join_problems<C: ProblemCode>(problems: &[mailward_records::Problem<C>]) -> String {
    problems
        .iter()
        .map(|p| format!("{} ({})", p.message, p.code.as_str()))
        .collect::<Vec<_>>()
        .join("; ")
}
