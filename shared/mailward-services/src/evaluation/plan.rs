//! What an evaluation of a domain is made of, shared by the records guidance, the sweep's task
//! derivation and the change preview: the records plan's context, the planned records, and a
//! resolver wrapper that notes record TTLs as answers pass.

use crate::state::AppState;
use async_trait::async_trait;
use mailward_audit::AuditResult;
use mailward_domain::dns::{Answer, DnsError, DnsResolver, RecordType};
use mailward_domain::domain::Domain;
use mailward_domain::purpose::Purpose;
use mailward_plan::{DkimPlan, PlanContext, RecordKind};
use mailward_tasks::problems::{PlannedRecord, RecordTtl};
use std::sync::Mutex;

/// The plan's inputs for a stored domain, given its live SPF record and the DKIM keys it serves.
pub fn plan_context(
    app: &AppState,
    domain: &Domain,
    live_spf: Option<String>,
    dkim: Vec<DkimPlan>,
) -> PlanContext {
    let monitoring = domain.monitoring_email(&app.config.report_domain);
    PlanContext {
        domain: domain.url.clone(),
        dmarc: domain.dmarc_options.clone(),
        spf: domain.spf_options.clone(),
        bimi: domain.bimi_options.clone(),
        target_spf: domain.target_spf.clone(),
        hosted_spf_record: domain
            .is_spf_managed
            .then(|| domain.hosted_spf_record.clone())
            .flatten(),
        live_spf,
        // TLS-RPT reports go to the domain's own report address, like DMARC aggregates.
        tls_rpt_rua: Some(monitoring.clone()),
        // Or over HTTPS (RFC 8460 §3): the domain's upload address, offered beside mailto: when
        // the service is served over HTTPS (the plan drops an http:// one).
        tls_rpt_https: Some(format!(
            "{}/tlsrpt/{}",
            app.config.base_url.trim_end_matches('/'),
            domain.id.simple()
        )),
        monitoring_email: monitoring,
        report_domain: app.config.report_domain.clone(),
        hosted_zone: app.config.hosted_zone.clone(),
        // Hosted DMARC: the customer publishes the CNAME delegation instead of the TXT. MTA-STS
        // hosting, registered DKIM keys and confirmed senders arrive with their own endpoints;
        // until then DKIM is the keys the domain already serves.
        hosted_owner: mailward_domain::hosted_zone::owner_name(domain.id, &domain.url),
        dmarc_delegated: domain.is_dmarc_managed,
        bimi_delegated: domain.is_bimi_managed,
        mta_sts: domain
            .mta_sts
            .as_ref()
            .filter(|_| domain.is_mta_sts_managed)
            .map(|m| mailward_plan::MtaStsPlan {
                mode: match m.mode {
                    mailward_domain::mta_sts::StsMode::Testing => {
                        mailward_records::mta_sts::Mode::Testing
                    }
                    mailward_domain::mta_sts::StsMode::Enforce => {
                        mailward_records::mta_sts::Mode::Enforce
                    }
                    mailward_domain::mta_sts::StsMode::None => {
                        mailward_records::mta_sts::Mode::None
                    }
                },
                max_age: m.max_age,
                mx_hosts: m.mx.clone(),
                txt_target: Some(mailward_plan::mta_sts_txt_target(
                    &mailward_domain::hosted_zone::owner_name(domain.id, &domain.url),
                    &app.config.hosted_zone,
                )),
                certificate_validation: m
                    .front
                    .iter()
                    .flat_map(|f| &f.validation)
                    .filter(|v| v.record_type.eq_ignore_ascii_case("CNAME"))
                    .map(|v| (v.name.clone(), v.value.clone()))
                    .collect(),
            }),
        dkim: if domain.is_parked { Vec::new() } else { dkim },
        known_sender_includes: Vec::new(),
        parked: domain.is_parked,
        previously_verified: domain.verified_purposes.iter().copied().collect(),
    }
}

/// The DKIM keys an audit found, as the plan takes them.
pub fn dkim_from_audit(audit: &AuditResult) -> Vec<DkimPlan> {
    audit
        .dkim
        .as_ref()
        .map(|d| {
            d.selectors
                .iter()
                .filter(|s| s.found && s.usable)
                .filter_map(|s| {
                    let (record_type, value) = match (&s.cname_target, &s.record) {
                        (Some(target), _) => (RecordKind::Cname, target.clone()),
                        (None, Some(record)) => (RecordKind::Txt, record.clone()),
                        (None, None) => return None,
                    };
                    Some(DkimPlan {
                        selector: s.selector.clone(),
                        record_type,
                        value,
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The records the plan asks for, as the task engine takes them.
pub fn planned_records(ctx: &PlanContext) -> Vec<PlannedRecord> {
    mailward_plan::expected_records(ctx)
        .into_iter()
        .map(|r| PlannedRecord {
            purpose: r.purpose,
            record_type: match r.record_type {
                RecordKind::Txt => "TXT",
                RecordKind::Cname => "CNAME",
                RecordKind::Ns => "NS",
            }
            .to_owned(),
            host: r.host,
            value: r.value,
        })
        .collect()
}

/// A resolver that notes the TTL of every TXT answer for the names it is told to watch.
pub struct TtlRecorder<'a> {
    inner: &'a dyn DnsResolver,
    watched: Vec<(String, Purpose)>,
    seen: Mutex<Vec<RecordTtl>>,
}

impl<'a> TtlRecorder<'a> {
    /// Watches `watched` (host, purpose) TXT answers through `inner`.
    pub fn new(inner: &'a dyn DnsResolver, watched: Vec<(String, Purpose)>) -> Self {
        Self {
            inner,
            watched,
            seen: Mutex::new(Vec::new()),
        }
    }

    /// The TTLs noted, one per watched host (the largest seen).
    pub fn ttls(&self) -> Vec<RecordTtl> {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner()).clone();
        seen.sort_by(|a, b| a.host.cmp(&b.host).then(b.ttl.cmp(&a.ttl)));
        seen.dedup_by(|a, b| a.host == b.host);
        seen
    }
}

#[async_trait]
impl DnsResolver for TtlRecorder<'_> {
    async fn lookup(&self, name: &str, record_type: RecordType) -> Result<Answer, DnsError> {
        let answer = self.inner.lookup(name, record_type).await;
        if record_type == RecordType::Txt
            && let Ok(a) = &answer
            && let Some(ttl) = a.ttl
        {
            let host = name.trim_end_matches('.').to_ascii_lowercase();
            if let Some((_, purpose)) = self.watched.iter().find(|(h, _)| *h == host) {
                self.seen
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(RecordTtl {
                        purpose: *purpose,
                        host,
                        ttl,
                    });
            }
        }
        answer
    }

    async fn lookup_uncached(
        &self,
        name: &str,
        record_type: RecordType,
    ) -> Result<Answer, DnsError> {
        self.lookup(name, record_type).await
    }
}
