//! Domains (SPEC §2.1, §4.1): the Domain wire shape (every field always present except `group`
//! and `tasks`, which appear only with `expand[]`), the list and bulk shapes, and the bodies and
//! parameters of the domain routes.

use crate::common::{Order, PageInfo, double_option};
use mailward_domain::conflicts::StoredConflict;
use mailward_domain::domain::{
    self as model, FailureDetail, FailureReason, Policy, ScoreBand, SubdomainPolicy,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// `dmarc_options`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DmarcOptionsView {
    /// Extra aggregate-report addresses (Mailward's own is always added), at most 20.
    #[serde(default)]
    #[schema(format = Email, max_items = 20)]
    pub additional_emails: Vec<String>,
    /// Failure-report addresses (`ruf`), at most 20.
    #[serde(default)]
    #[schema(format = Email, max_items = 20)]
    pub legacy_ruf_emails: Vec<String>,
    /// none, quarantine or reject.
    #[schema(example = "none")]
    pub policy: Policy,
    /// 0-100. RFC 9989 dropped `pct`: 100 publishes no `t` tag; below 100 publishes `t=y`
    /// ("testing": receivers apply the policy one step weaker).
    #[schema(minimum = 0, maximum = 100)]
    pub pct: u8,
    /// none, quarantine, reject or same.
    #[schema(value_type = SubdomainPolicyWord, example = "same")]
    pub sp: SubdomainPolicy,
    /// `aspf=s`.
    pub strict_spf: bool,
    /// `adkim=s`.
    pub strict_dkim: bool,
    /// An extension: receive DMARC failure reports (RFC 9991) at Mailward. When true, the
    /// record's `ruf` starts with the domain's failure-report address (`ruf+<domain id>@…`),
    /// and the reports are listed at `/domains/{id}/failure-reports`. Default false: no
    /// published record changes until a domain opts in.
    #[serde(default)]
    pub failure_reports: bool,
}

crate::words!(
    /// `dmarc_options.sp`.
    pub SubdomainPolicyWord = ["none", "quarantine", "reject", "same"]
);

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
            failure_reports: o.failure_reports,
        }
    }
}

/// `spf_options`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SpfOptionsView {
    pub force_flattening: bool,
    pub enabled: bool,
    /// Notes for people on the SPF mechanisms (key: the mechanism, 1 to 255 characters; value:
    /// at most 500), at most 50, without control characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<MechanismDescriptions>)]
    pub mechanism_descriptions: Option<BTreeMap<String, String>>,
}

crate::schema_type!(
    /// `spf_options.mechanism_descriptions`: at most 50 notes, keyed by mechanism (1 to 255
    /// characters, not blank), each at most 500 characters, none with a control character.
    pub MechanismDescriptions = utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Object)
        .property_names(Some(crate::constraints::plain_text(true, 255)))
        .additional_properties(Some(utoipa::openapi::schema::ObjectBuilder::from(
            crate::constraints::plain_text(false, 500),
        )))
        .max_properties(Some(50))
);

/// `bimi_options`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BimiOptionsView {
    pub enabled: bool,
    /// https URL of an SVG Tiny PS logo, or null.
    #[schema(value_type = Option<crate::constraints::RecordUrl>)]
    pub logo: Option<String>,
    /// https URL of the VMC/CMC, or null.
    #[schema(value_type = Option<crate::constraints::RecordUrl>)]
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
    /// Open and pending tasks (opportunities such as set_up_bimi excluded).
    pub open_tasks_count: u32,
    /// The most severe priority among them (0 critical), or null.
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
    pub dns_conflicts: Vec<StoredConflict>,
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
    /// Only with `expand[]=tasks`: the domain's open work (open and pending tasks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Vec<crate::tasks::Task>>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub dmarc_setup_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub dmarc_verified_at: Option<OffsetDateTime>,
    /// The first UTC day an aggregate report covered (yyyy-MM-dd), or null.
    pub monitoring_since: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// Where the service's own records live: what a domain's wire shape needs beyond the stored
/// domain (its report address and hosted-record targets).
#[derive(Debug, Clone, Copy)]
pub struct ServiceZones<'a> {
    /// The host of the aggregate-report addresses.
    pub report_domain: &'a str,
    /// The zone hosting delegated records (BIMI, MTA-STS, DMARC CNAME targets).
    pub hosted_zone: &'a str,
}

/// The wire shape of a stored domain.
pub fn domain_view(d: &model::Domain, zones: ServiceZones<'_>) -> Domain {
    let figures = d.report_figures.clone().unwrap_or_default();
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
            dmarc: d.managed_dmarc.status.as_str().to_owned(),
            spf: d.managed_spf.status.as_str().to_owned(),
            dkim: d.managed_dkim.status.as_str().to_owned(),
            bimi: d.managed_bimi.status.as_str().to_owned(),
            mta_sts: d.managed_mta_sts.status.as_str().to_owned(),
        },
        managed_dns_status_since: ManagedDnsStatusSince {
            // SPEC §2.1: when the hosted-record move predates tracking (never hosted), it falls
            // back to `dmarc_setup_at`.
            dmarc: d.managed_dmarc.since.or(d.dmarc_setup_at).and_then(|at| {
                at.format(&time::format_description::well_known::Rfc3339)
                    .ok()
            }),
            spf: d.managed_spf.since.and_then(|at| {
                at.format(&time::format_description::well_known::Rfc3339)
                    .ok()
            }),
            dkim: d.managed_dkim.since.and_then(|at| {
                at.format(&time::format_description::well_known::Rfc3339)
                    .ok()
            }),
            bimi: d.managed_bimi.since.and_then(|at| {
                at.format(&time::format_description::well_known::Rfc3339)
                    .ok()
            }),
            mta_sts: d.managed_mta_sts.since.and_then(|at| {
                at.format(&time::format_description::well_known::Rfc3339)
                    .ok()
            }),
        },
        monitoring_status: d.monitoring_status.as_str().to_owned(),
        monitoring_failure_reason: d
            .monitoring_failure_reason
            .as_ref()
            .map(|r: &FailureReason| r.as_str().to_owned()),
        monitoring_failure_detail: d
            .monitoring_failure_detail
            .as_ref()
            .map(FailureDetailView::from),
        monitoring_email: d.monitoring_email(zones.report_domain),
        open_tasks_count: d.open_tasks_count,
        highest_open_task_priority: d.highest_open_task_priority,
        score: d.score,
        score_band: ScoreBand::of(d.score).as_str().to_owned(),
        is_parked: d.is_parked,
        is_dmarc_managed: d.is_dmarc_managed,
        is_spf_managed: d.is_spf_managed,
        is_dkim_managed: d.is_dkim_managed,
        is_bimi_managed: d.is_bimi_managed,
        is_mta_sts_managed: d.is_mta_sts_managed,
        bimi_options: BimiOptionsView {
            enabled: d.bimi_options.enabled,
            logo: d.bimi_options.logo.clone(),
            certificate: d.bimi_options.certificate.clone(),
        },
        bimi_error_reason: d.managed_bimi.error_reason.map(|r| r.as_str().to_owned()),
        dmarc_error_reason: d.managed_dmarc.error_reason.map(|r| r.as_str().to_owned()),
        spf_error_reason: d.managed_spf.error_reason.map(|r| r.as_str().to_owned()),
        dkim_error_reason: d.managed_dkim.error_reason.map(|r| r.as_str().to_owned()),
        mta_sts_error_reason: d
            .managed_mta_sts
            .error_reason
            .map(|r| r.as_str().to_owned()),
        dns_conflicts: d.dns_conflicts.clone(),
        bimi_cname_target: format!(
            "{}.bimi.{}",
            mailward_domain::hosted_zone::owner_name(d.id, &d.url),
            zones.hosted_zone
        ),
        bimi_txt_value: d.bimi_options.txt_value(),
        target_spf: d.target_spf.clone(),
        last_14_days_volume: figures.volume,
        last_14_days_dmarc_pass_pct: figures.pct(figures.dmarc_pass),
        last_14_days_spf_pass_pct: figures.pct(figures.spf_aligned_pass),
        last_14_days_dkim_pass_pct: figures.pct(figures.dkim_aligned_pass),
        group_id: d.group_id,
        registrar: d.registrar.clone(),
        group: None,
        tasks: None,
        dmarc_setup_at: d.dmarc_setup_at,
        dmarc_verified_at: d.dmarc_verified_at,
        monitoring_since: d.monitoring_since.clone(),
        created_at: d.created_at,
        updated_at: d.updated_at,
    }
}

/// `POST /domains` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateDomainRequest {
    /// The domain name (a pasted URL is reduced to its host).
    #[schema(value_type = PastedDomain)]
    pub url: String,
    /// A group of the organization.
    pub group_id: Option<Uuid>,
    /// Seed the score and parked flag from the stored activation scan of this domain.
    #[serde(default)]
    pub use_stored_scan: bool,
}

/// `GET /domains` parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListDomainsParams {
    /// 1-based page (default 1).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 1000000)]
    pub page: Option<u32>,
    /// Page size, 1-100 (default 25).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 100)]
    pub per_page: Option<u32>,
    /// Filter: none, pending, setup, drifted or failed.
    #[param(value_type = Option<model::MonitoringStatus>, inline)]
    pub monitoring_status: Option<String>,
    /// Filter: none, quarantine or reject (the policy observed in DNS).
    #[param(value_type = Option<Policy>, inline)]
    pub dmarc_policy: Option<String>,
    /// Filter: true or false.
    #[serde(default, deserialize_with = "crate::constraints::present")]
    pub is_parked: Option<bool>,
    /// Filter: true or false (whether Mailward hosts the DMARC record).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    pub is_dmarc_managed: Option<bool>,
    /// Filter: true or false (whether Mailward hosts the SPF record).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    pub is_spf_managed: Option<bool>,
    /// Filter: true or false (whether Mailward hosts the DKIM records).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    pub is_dkim_managed: Option<bool>,
    /// Filter: true or false (whether Mailward hosts the BIMI record).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    pub is_bimi_managed: Option<bool>,
    /// Filter: true or false (whether Mailward hosts MTA-STS).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    pub is_mta_sts_managed: Option<bool>,
    /// Filter: a group id.
    pub group_id: Option<Uuid>,
    /// created_at (default), url, monitoring_status, dmarc_policy, score, last_14_days_volume,
    /// last_14_days_dmarc_pass_pct, last_14_days_spf_pass_pct, last_14_days_dkim_pass_pct,
    /// open_tasks_count, severity, status or group.
    #[param(value_type = Option<DomainSort>, inline)]
    pub sort: Option<String>,
    /// desc (default) or asc.
    #[param(value_type = Option<Order>, inline)]
    pub order: Option<String>,
    /// group and/or tasks.
    #[serde(rename = "expand[]", default)]
    #[param(rename = "expand[]", value_type = Vec<DomainExpand>, inline)]
    pub expand: Vec<String>,
}

/// The `sort` keys of `GET /domains`.
pub const SORT_KEYS: &[&str] = &[
    "created_at",
    "url",
    "monitoring_status",
    "dmarc_policy",
    "score",
    "last_14_days_volume",
    "last_14_days_dmarc_pass_pct",
    "last_14_days_spf_pass_pct",
    "last_14_days_dkim_pass_pct",
    "open_tasks_count",
    "severity",
    "status",
    "group",
];

crate::words!(
    /// `sort` of `GET /domains`.
    pub DomainSort = SORT_KEYS.iter().copied()
);
crate::words!(
    /// `expand[]` of the domain reads.
    pub DomainExpand = ["group", "tasks"]
);

/// A page of domains.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DomainList {
    pub data: Vec<Domain>,
    pub page_info: PageInfo,
}

/// `expand[]` on a single read.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ExpandParams {
    /// group and/or tasks.
    #[serde(rename = "expand[]", default)]
    #[param(rename = "expand[]", value_type = Vec<DomainExpand>, inline)]
    pub expand: Vec<String>,
}

/// `POST /domains/{id}` body: any subset.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateDomainRequest {
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<Uuid>, nullable)]
    pub group_id: Option<Option<Uuid>>,
    pub is_parked: Option<bool>,
    pub dmarc_options: Option<DmarcOptionsView>,
    pub spf_options: Option<SpfOptionsView>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>, nullable, format = "date-time")]
    pub dmarc_setup_at: Option<Option<String>>,
    /// The SPF record the domain should publish (must parse as `v=spf1`), or null.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>, nullable)]
    pub target_spf: Option<Option<String>>,
    pub bimi_options: Option<BimiOptionsView>,
    /// `true` re-derives the domain's tasks at once (evaluates the domain as the sweep does)
    /// and answers the domain as that evaluation left it.
    pub backfill_tickets: Option<bool>,
    /// Whether the rollout plan proposes next steps for this domain; null follows the
    /// organization's setting.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<bool>, nullable)]
    pub agent_proposals_enabled: Option<Option<bool>>,
}

/// Most entries one bulk request may carry.
pub const MAX_BULK: usize = 500;

/// One bulk entry as documented. Entries are read one by one from JSON (see
/// [`parse_bulk_entry`]), so a malformed entry fails alone.
#[derive(Debug, Deserialize, ToSchema)]
pub struct BulkDomain {
    /// The domain name.
    pub url: String,
    /// A group of the organization, or null.
    pub group_id: Option<Uuid>,
}

/// `POST /domains/bulk` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkRequest {
    /// 1 to 500 entries `{url, group_id}`, each checked on its own: an entry that is not one
    /// fails alone, with its reason in the answer.
    #[schema(value_type = BulkEntries)]
    pub domains: Vec<serde_json::Value>,
}

crate::schema_type!(
    /// A domain to watch as people paste it: a domain name (letters, digits and hyphens in
    /// dot-separated labels, the last starting with a letter), optionally after `http://` or
    /// `https://` and before a path, which are dropped.
    pub PastedDomain = crate::constraints::pasted_domain()
);
crate::schema_type!(
    /// The entries of a bulk add: 1 to 500, each meant to be a `BulkDomain`; any other value is
    /// taken too and fails alone (`result` failed).
    pub BulkEntries = utoipa::openapi::schema::ArrayBuilder::new()
        .items(
            utoipa::openapi::schema::AnyOfBuilder::new()
                .item(utoipa::openapi::Ref::from_schema_name("BulkDomain"))
                .item(utoipa::openapi::schema::Object::with_type(
                    utoipa::openapi::schema::SchemaType::AnyValue,
                )),
        )
        .min_items(Some(1))
        .max_items(Some(MAX_BULK));
    uses BulkDomain
);

/// One bulk result, in request order.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct BulkEntry {
    /// The submitted `url`, echoed; null when the entry had no string `url`.
    pub url: Option<String>,
    /// `created` or `failed`.
    pub result: String,
    /// The created domain, or null.
    pub domain: Option<Domain>,
    /// Why it failed, as `<code>: <message>` (codes in the route description), or null.
    pub reason: Option<String>,
    /// The entry field to blame for a failure (`url`, `group_id` or an unknown key), or null.
    pub param: Option<String>,
}

/// `POST /domains/bulk` response.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct BulkResponse {
    /// How many were created.
    pub created_count: u32,
    /// How many failed.
    pub failed_count: u32,
    /// One entry per submitted domain, in request order.
    pub results: Vec<BulkEntry>,
}
