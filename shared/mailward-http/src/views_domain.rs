//! The Domain wire shape (SPEC §2.1): every field always present except `group` and `tasks`,
//! which appear only with `expand[]`.

use crate::config::Config;
use mailward_domain::domain::{
    self as model, FailureDetail, FailureReason, MonitoringStatus, Policy, ScoreBand,
    SubdomainPolicy,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// `dmarc_options`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DmarcOptionsView {
    /// Extra aggregate-report addresses (Mailward's own is always added).
    #[serde(default)]
    pub additional_emails: Vec<String>,
    /// Failure-report addresses (`ruf`).
    #[serde(default)]
    pub legacy_ruf_emails: Vec<String>,
    /// none, quarantine or reject.
    #[schema(value_type = String, example = "none")]
    pub policy: Policy,
    /// 0-100. RFC 9989 dropped `pct`: 100 publishes no `t` tag; below 100 publishes `t=y`
    /// ("testing": receivers apply the policy one step weaker).
    #[schema(minimum = 0, maximum = 100)]
    pub pct: u8,
    /// none, quarantine, reject or same.
    #[schema(value_type = String, example = "same")]
    pub sp: SubdomainPolicy,
    /// `aspf=s`.
    pub strict_spf: bool,
    /// `adkim=s`.
    pub strict_dkim: bool,
}

impl From<&model::DmarcOptions> for DmarcOptionsView {
    fn from(o: &model::DmarcOptions) -> Self {
        Self {
            additional_emails: o.additional_emails.clone(),
            legacy_ruf_emails: o.legacy_ruf_emails.clone(),
            policy: o.policy,
            pct: o.pct,
            sp: o.sp,
            strict_spf: o.strict_spf,
            strict_dkim: o.strict_dkim,
        }
    }
}

/// `spf_options`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SpfOptionsView {
    pub force_flattening: bool,
    pub enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mechanism_descriptions: Option<BTreeMap<String, String>>,
}

/// `bimi_options`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BimiOptionsView {
    pub enabled: bool,
    /// https URL of an SVG Tiny PS logo, or null.
    pub logo: Option<String>,
    /// https URL of the VMC/CMC, or null.
    pub certificate: Option<String>,
}

/// Per-record hosted-DNS state.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct ManagedDnsStatus {
    pub dmarc: String,
    pub spf: String,
    pub dkim: String,
    pub bimi: String,
    pub mta_sts: String,
}

/// When each record last entered `syncing`; `dmarc` falls back to `dmarc_setup_at`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct ManagedDnsStatusSince {
    pub dmarc: Option<String>,
    pub spf: Option<String>,
    pub dkim: Option<String>,
    pub bimi: Option<String>,
    pub mta_sts: Option<String>,
}

/// `monitoring_failure_detail`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct FailureDetailView {
    pub observed: Option<String>,
    pub expected_rua: Option<String>,
    pub from_hostname: Option<String>,
    pub record_count: Option<u32>,
}

impl From<&FailureDetail> for FailureDetailView {
    fn from(d: &FailureDetail) -> Self {
        Self {
            observed: d.observed.clone(),
            expected_rua: d.expected_rua.clone(),
            from_hostname: d.from_hostname.clone(),
            record_count: d.record_count,
        }
    }
}

/// A monitored domain.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Domain {
    pub id: Uuid,
    /// The domain name.
    pub url: String,
    /// The policy last observed in DNS (`none` until one is seen).
    pub dmarc_policy: String,
    pub dmarc_options: DmarcOptionsView,
    pub spf_options: SpfOptionsView,
    pub managed_dns_status: ManagedDnsStatus,
    pub managed_dns_status_since: ManagedDnsStatusSince,
    /// none, pending, setup, drifted or failed.
    pub monitoring_status: String,
    /// Why monitoring failed, or null.
    pub monitoring_failure_reason: Option<String>,
    pub monitoring_failure_detail: Option<FailureDetailView>,
    /// The aggregate-report address Mailward reads for this domain.
    pub monitoring_email: String,
    pub open_tasks_count: u32,
    pub highest_open_task_priority: Option<u8>,
    /// 0-100.
    pub score: u8,
    /// critical, bad, good or great.
    pub score_band: String,
    pub is_parked: bool,
    pub is_dmarc_managed: bool,
    pub is_spf_managed: bool,
    pub is_dkim_managed: bool,
    pub is_bimi_managed: bool,
    pub is_mta_sts_managed: bool,
    pub bimi_options: BimiOptionsView,
    pub bimi_error_reason: Option<String>,
    pub dmarc_error_reason: Option<String>,
    pub spf_error_reason: Option<String>,
    pub dkim_error_reason: Option<String>,
    pub mta_sts_error_reason: Option<String>,
    /// Unresolved DNS conflicts (empty for a healthy domain).
    #[schema(value_type = Vec<Object>)]
    pub dns_conflicts: Vec<serde_json::Value>,
    /// The host `default._bimi.<domain>` is CNAMEd to for hosted BIMI.
    pub bimi_cname_target: String,
    /// The BIMI TXT value when a logo is set (`a=` only with a certificate).
    pub bimi_txt_value: Option<String>,
    pub target_spf: Option<String>,
    pub last_14_days_volume: u64,
    pub last_14_days_dmarc_pass_pct: f64,
    pub last_14_days_spf_pass_pct: f64,
    pub last_14_days_dkim_pass_pct: f64,
    pub group_id: Option<Uuid>,
    pub registrar: Option<String>,
    /// Only with `expand[]=group`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub group: Option<serde_json::Value>,
    /// Only with `expand[]=tasks`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub tasks: Option<Vec<serde_json::Value>>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub dmarc_setup_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub dmarc_verified_at: Option<OffsetDateTime>,
    /// First day an aggregate report arrived (yyyy-MM-dd), or null.
    pub monitoring_since: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

fn snake<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The report address of a domain on the service's report host.
pub fn monitoring_email(domain: &model::Domain, config: &Config) -> String {
    format!("rua+{}@{}", domain.id.simple(), config.report_domain)
}

/// The BIMI TXT value for the options, when a logo is set.
pub fn bimi_txt_value(options: &model::BimiOptions) -> Option<String> {
    let logo = options.logo.as_deref()?;
    Some(match options.certificate.as_deref() {
        Some(cert) => format!("v=BIMI1; l={logo}; a={cert}"),
        None => format!("v=BIMI1; l={logo}"),
    })
}

/// The wire shape of a stored domain.
pub fn domain_view(d: &model::Domain, config: &Config) -> Domain {
    let unknown = || "unknown".to_owned();
    Domain {
        id: d.id,
        url: d.url.clone(),
        dmarc_policy: d.dmarc_policy.as_str().to_owned(),
        dmarc_options: DmarcOptionsView::from(&d.dmarc_options),
        spf_options: SpfOptionsView {
            force_flattening: d.spf_options.force_flattening,
            enabled: d.spf_options.enabled,
            mechanism_descriptions: d.spf_options.mechanism_descriptions.clone(),
        },
        managed_dns_status: ManagedDnsStatus {
            dmarc: unknown(),
            spf: unknown(),
            dkim: unknown(),
            bimi: unknown(),
            mta_sts: unknown(),
        },
        managed_dns_status_since: ManagedDnsStatusSince {
            // SPEC §2.1: the DMARC move predates tracking (hosted DMARC is not built), so it
            // falls back to `dmarc_setup_at`.
            dmarc: d.dmarc_setup_at.and_then(|at| {
                at.format(&time::format_description::well_known::Rfc3339)
                    .ok()
            }),
            spf: None,
            dkim: None,
            bimi: None,
            mta_sts: None,
        },
        monitoring_status: snake(&d.monitoring_status),
        monitoring_failure_reason: d
            .monitoring_failure_reason
            .as_ref()
            .map(|r: &FailureReason| snake(r)),
        monitoring_failure_detail: d
            .monitoring_failure_detail
            .as_ref()
            .map(FailureDetailView::from),
        monitoring_email: monitoring_email(d, config),
        open_tasks_count: 0,
        highest_open_task_priority: None,
        score: d.score,
        score_band: snake(&ScoreBand::of(d.score)),
        is_parked: d.is_parked,
        is_dmarc_managed: false,
        is_spf_managed: false,
        is_dkim_managed: false,
        is_bimi_managed: false,
        is_mta_sts_managed: false,
        bimi_options: BimiOptionsView {
            enabled: d.bimi_options.enabled,
            logo: d.bimi_options.logo.clone(),
            certificate: d.bimi_options.certificate.clone(),
        },
        bimi_error_reason: None,
        dmarc_error_reason: None,
        spf_error_reason: None,
        dkim_error_reason: None,
        mta_sts_error_reason: None,
        dns_conflicts: d.dns_conflicts.clone(),
        bimi_cname_target: format!("{}.bimi.{}", d.url, config.hosted_zone),
        bimi_txt_value: bimi_txt_value(&d.bimi_options),
        target_spf: d.target_spf.clone(),
        last_14_days_volume: 0,
        last_14_days_dmarc_pass_pct: 0.0,
        last_14_days_spf_pass_pct: 0.0,
        last_14_days_dkim_pass_pct: 0.0,
        group_id: d.group_id,
        registrar: d.registrar.clone(),
        group: None,
        tasks: None,
        dmarc_setup_at: d.dmarc_setup_at,
        dmarc_verified_at: d.dmarc_verified_at,
        monitoring_since: None,
        created_at: d.created_at,
        updated_at: d.updated_at,
    }
}

/// Whether a status is one of the set-up states (for the `status` sort).
pub fn is_configured(status: MonitoringStatus) -> bool {
    matches!(status, MonitoringStatus::Setup | MonitoringStatus::Drifted)
}
