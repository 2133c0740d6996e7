//! DNS snapshots (SPEC §4.1 `dns-snapshots`): what DNS served for each record type of a domain.

use crate::common::PageInfo;
use mailward_domain::snapshots::Snapshot;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// A snapshot as the API shows it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SnapshotView {
    pub id: Uuid,
    pub domain_id: Uuid,
    /// spf, dmarc, bimi, mx, dkim, ns, mta_sts or tls_rpt.
    #[serde(rename = "type")]
    pub record_type: String,
    /// The values DNS served (sorted; empty when there were none): TXT values, `preference host`
    /// for MX, name servers for NS, `selector: record` for DKIM.
    pub values: Vec<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub captured_at: OffsetDateTime,
    /// With `diff`: the change from the previous snapshot of the same type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<SnapshotDiff>,
}

/// What changed since the previous snapshot of the same type.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SnapshotDiff {
    /// The previous snapshot's id; null for the first snapshot of its type.
    pub previous_id: Option<Uuid>,
    /// Values present now and not before.
    pub added: Vec<String>,
    /// Values present before and not now.
    pub removed: Vec<String>,
}

impl From<&Snapshot> for SnapshotView {
    fn from(s: &Snapshot) -> Self {
        Self {
            id: s.id,
            domain_id: s.domain_id,
            record_type: s.record_type.clone(),
            values: s.values.clone(),
            captured_at: s.captured_at,
            diff: None,
        }
    }
}

/// A page of snapshots.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SnapshotList {
    pub data: Vec<SnapshotView>,
    pub page_info: PageInfo,
}

/// `GET /domains/{id}/dns-snapshots` parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SnapshotFilters {
    /// spf, dmarc, bimi, mx, dkim, ns, mta_sts or tls_rpt.
    #[serde(rename = "type")]
    #[param(rename = "type", value_type = Option<SnapshotType>, inline)]
    pub record_type: Option<String>,
    /// 1-based page (default 1).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 1000000)]
    pub page: Option<u32>,
    /// Page size, 1-100 (default 25).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 100)]
    pub per_page: Option<u32>,
}

/// `GET /domains/{id}/dns-snapshots/{snapshot_id}` parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DiffParam {
    /// Include the change from the previous snapshot of the same type: bare `diff`, `true` or
    /// `1` turn it on; `false`, `0` or leaving it out turn it off.
    #[param(value_type = Option<DiffFlag>, inline)]
    pub diff: Option<String>,
}

crate::words!(
    /// `type` of the snapshot list.
    pub SnapshotType = mailward_domain::snapshots::TYPES.iter().copied()
);
crate::words!(
    /// `diff` of a snapshot read; empty is the bare flag.
    pub DiffFlag = ["", "true", "1", "false", "0"]
);
