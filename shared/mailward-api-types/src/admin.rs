//! Organization administration (SPEC §2.4, §2.12, §4.2): groups, members, invitations and
//! usage.

use crate::common::{Order, PageInfo};
use mailward_domain::model::Role;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// A role (SPEC §2.12): admin, editor or viewer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoleView {
    Admin,
    Editor,
    Viewer,
}

impl From<Role> for RoleView {
    fn from(r: Role) -> Self {
        match r {
            Role::Admin => RoleView::Admin,
            Role::Editor => RoleView::Editor,
            Role::Viewer => RoleView::Viewer,
        }
    }
}

impl From<RoleView> for Role {
    fn from(r: RoleView) -> Self {
        match r {
            RoleView::Admin => Role::Admin,
            RoleView::Editor => Role::Editor,
            RoleView::Viewer => Role::Viewer,
        }
    }
}

/// A group's domain figures (with `expand[]=domains`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct GroupDomains {
    /// How many domains the group holds.
    pub count: u64,
    /// Share of its domains whose observed DMARC policy is quarantine or reject, 0-100.
    pub enforcement_pct: f64,
    /// Messages in the group's aggregate reports over the last 14 days.
    pub last_14_days_volume: u64,
    /// DMARC pass share of those messages, 0-100 (0 without messages).
    pub last_14_days_dmarc_pass_pct: f64,
    /// Mean score of its domains (0 when it has none).
    pub average_score: f64,
}

/// A group (SPEC §2.4).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Group {
    pub id: Uuid,
    pub name: String,
    pub external_customer_id: Option<String>,
    pub external_billing_entity_id: Option<String>,
    /// Only with `expand[]=domains`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domains: Option<GroupDomains>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

/// A page of groups.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct GroupList {
    pub data: Vec<Group>,
    pub page_info: PageInfo,
}

/// `GET /groups` parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListGroupsParams {
    /// created_at (default) or name.
    #[param(value_type = Option<GroupSort>, inline)]
    pub sort: Option<String>,
    /// desc (default) or asc.
    #[param(value_type = Option<Order>, inline)]
    pub order: Option<String>,
    /// domains.
    #[serde(rename = "expand[]", default)]
    #[param(rename = "expand[]", value_type = Vec<GroupExpand>, inline)]
    pub expand: Vec<String>,
    /// 1-based page (default 1).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 1000000)]
    pub page: Option<u32>,
    /// Page size, 1-100 (default 25).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 100)]
    pub per_page: Option<u32>,
}

crate::words!(
    /// `sort` of `GET /groups`.
    pub GroupSort = ["created_at", "name"]
);
crate::words!(
    /// `expand[]` of the group reads.
    pub GroupExpand = ["domains"]
);

/// `GET /groups/{id}` parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct GroupExpandParams {
    /// domains.
    #[serde(rename = "expand[]", default)]
    #[param(rename = "expand[]", value_type = Vec<GroupExpand>, inline)]
    pub expand: Vec<String>,
}

/// `POST /groups` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateGroupRequest {
    /// 1 to 128 characters without control characters (surrounding spaces are trimmed).
    #[schema(value_type = GroupName)]
    pub name: String,
    /// At most 255 characters without control characters; blank clears it.
    #[schema(value_type = Option<ExternalId>)]
    pub external_customer_id: Option<String>,
    /// At most 255 characters without control characters; blank clears it.
    #[schema(value_type = Option<ExternalId>)]
    pub external_billing_entity_id: Option<String>,
}

crate::schema_type!(
    /// A group's name: 1 to 128 characters without control characters, surrounding spaces
    /// trimmed.
    pub GroupName = crate::constraints::text(1, 128)
);
crate::schema_type!(
    /// An external id of a group: at most 255 characters without control characters,
    /// surrounding spaces trimmed.
    pub ExternalId = crate::constraints::text(0, 255)
);

/// `POST /groups/{id}` body: any subset; null clears the external ids.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateGroupRequest {
    /// 1 to 128 characters without control characters.
    #[schema(value_type = Option<GroupName>)]
    pub name: Option<String>,
    /// At most 255 characters; blank or null clears it.
    #[serde(default, deserialize_with = "crate::common::double_option")]
    #[schema(value_type = Option<ExternalId>, nullable)]
    pub external_customer_id: Option<Option<String>>,
    /// At most 255 characters; blank or null clears it.
    #[serde(default, deserialize_with = "crate::common::double_option")]
    #[schema(value_type = Option<ExternalId>, nullable)]
    pub external_billing_entity_id: Option<Option<String>>,
    /// `true` queues a re-derivation of the tasks of every domain of the group.
    pub backfill_tickets: Option<bool>,
}

/// How a member signs in (SPEC §2.13: an enumeration of three values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuthProvider {
    /// An emailed one-time code (Mailward's own sign-in).
    EmailCode,
    /// Google.
    Google,
    /// Microsoft.
    Microsoft,
    /// Any other OpenID Connect provider of the organization (SPEC §9.6 allows additions).
    Oidc,
}

/// A member of the organization.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Member {
    /// The member's account id (the id of the member routes).
    pub id: Uuid,
    pub email: String,
    pub roles: Vec<RoleView>,
    /// Groups the member is limited to; empty: every domain.
    pub groups: Vec<Uuid>,
    pub auth_provider: AuthProvider,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Extension (tenant trust): `active`, or `pending_acceptance` for an account added by
    /// `POST /members` that must first accept through the link emailed to it (it grants
    /// nothing until then, and is listed by `GET /invitations` meanwhile).
    pub status: MemberStatus,
}

/// Whether a membership is in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemberStatus {
    /// A member.
    Active,
    /// Added, waiting for the person to accept by the emailed link.
    PendingAcceptance,
}

/// `POST /members` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddMemberRequest {
    /// An existing account's address.
    #[schema(format = "email")]
    pub email: String,
    /// At least one role.
    #[schema(min_items = 1)]
    pub roles: Vec<RoleView>,
    /// Groups to limit the member to (empty or omitted: none).
    #[serde(default)]
    pub groups: Vec<Uuid>,
}

/// `POST /members/{id}` body.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateMemberRequest {
    /// At least one role.
    #[schema(min_items = 1)]
    pub roles: Option<Vec<RoleView>>,
    pub groups: Option<Vec<Uuid>>,
}

/// A member's MFA status.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct MemberMfaStatus {
    pub member_id: Uuid,
    pub email: String,
    /// Whether the member has a confirmed authenticator app (TOTP).
    pub mfa_enabled: bool,
    /// When a session of theirs first completed a second factor.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub mfa_seen_at: Option<OffsetDateTime>,
    /// Whether the organization requires MFA and the member has no authenticator yet (every
    /// route and tool of the organization answers them 403 `mfa_enrollment_required`).
    pub blocked_by_requirement: bool,
}

/// An invitation (SPEC §2.12).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Invitation {
    pub id: Uuid,
    pub email: String,
    pub roles: Vec<RoleView>,
    pub groups: Vec<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub expires_at: OffsetDateTime,
    /// When the email was last sent; null when sending failed (`upstream_failure`).
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub sent_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

/// `POST /invitations` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateInvitationRequest {
    #[schema(format = "email")]
    pub email: String,
    /// At least one role.
    #[schema(min_items = 1)]
    pub roles: Vec<RoleView>,
    #[serde(default)]
    pub groups: Vec<Uuid>,
    /// Seconds the invitation stays valid: 86400 to 2592000, default 1209600.
    #[schema(minimum = 86400, maximum = 2592000)]
    pub ttl_sec: Option<i64>,
}

/// `POST /invitations/accept` body (public: the token is the credential).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AcceptInvitationRequest {
    /// The token from the invitation email.
    pub token: String,
}

/// `POST /invitations/accept` response.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct InvitationAccepted {
    pub organization_id: Uuid,
    pub organization_name: String,
    pub member: Member,
}

/// One usage line item (SPEC §2.12).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct UsageLineItem {
    /// DOMAIN-ACTIVE-TRIAL, DOMAIN-ACTIVE-FREE, DOMAIN-ACTIVE-1TO10, DOMAIN-ACTIVE-11TO100,
    /// DOMAIN-ACTIVE-101TO1000, DOMAIN-ACTIVE-1001PLUS, DOMAIN-INACTIVE, DOMAIN-PARKED or
    /// AGENT-ADDON.
    pub code: String,
    pub quantity: u64,
}

/// A domain as counted by usage.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct UsageDomain {
    pub id: Uuid,
    pub url: String,
    /// active, inactive or parked.
    pub state: String,
}

/// An organization created from this one, with its counts.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct UsageOrganization {
    pub id: Uuid,
    pub name: String,
    pub active_domains: u64,
    pub inactive_domains: u64,
    pub parked_domains: u64,
}

/// `GET /usage` response.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Usage {
    /// Domains with monitoring under way or established (not `none`), not parked.
    pub active_domains: u64,
    /// Domains not monitored yet (`none`), not parked.
    pub inactive_domains: u64,
    pub parked_domains: u64,
    /// free, it_teams or msp.
    pub pricing_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_items: Option<Vec<UsageLineItem>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domains: Option<Vec<UsageDomain>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub organizations: Option<Vec<UsageOrganization>>,
    /// Messages that passed DMARC (aligned SPF or DKIM) in aggregate reports of the current
    /// calendar month (UTC) so far, over every domain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aligned_messages: Option<u64>,
}

/// `GET /usage` parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UsageParams {
    /// domains, organizations, line_items and/or aligned_messages.
    #[serde(rename = "expand[]", default)]
    #[param(rename = "expand[]", value_type = Vec<UsageExpand>, inline)]
    pub expand: Vec<String>,
}

crate::words!(
    /// `expand[]` of `GET /usage`.
    pub UsageExpand = ["domains", "organizations", "line_items", "aligned_messages"]
);
