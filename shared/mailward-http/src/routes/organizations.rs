//! Organizations (SPEC §4.2): create, update, delete (asynchronous) and dismiss onboarding.

use crate::auth::{Credential, Principal};
use crate::error::ApiError;
use crate::extract::{Json, OptionalJson, PathId};
use crate::jobs;
use crate::repo::outbox::OutboxEvent;
use crate::repo::{accounts, api_keys, orgs};
use crate::state::AppState;
use crate::views::{self, ErrorBody, PricingTypeView};
use axum::extract::State;
use axum::http::StatusCode;
use mailward_domain::email::EmailAddress;
use mailward_domain::model::{
    ApiKeyAccess, EmailNotifications, Membership, OrgState, Organization, PricingType, Role,
    validate_org_name,
};
use mailward_domain::store::{Condition, WriteOp};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

/// `POST /organizations` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateOrganizationRequest {
    /// 3 to 128 characters.
    #[schema(min_length = 3, max_length = 128)]
    pub name: String,
    /// Invites this address as an administrator. Must be omitted or null with an API key.
    /// Invitations are not available yet: a non-null value answers 400 naming `invite_email`.
    #[serde(default, deserialize_with = "crate::extract::double_option")]
    #[schema(value_type = Option<String>, nullable, format = "email")]
    pub invite_email: Option<Option<String>>,
    /// Free-text referer.
    pub referer: Option<String>,
    /// Plan (honoured only where self-serve is enabled; Mailward stores it as given).
    pub pricing_type: Option<PricingTypeView>,
    /// Attribution id.
    pub attribution_id: Option<Uuid>,
}

/// `POST /organizations` response: the organization, plus (for API-key callers only) a
/// read-write key for the new organization, shown once — without it a script could not reach
/// the organization it just created.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct OrganizationCreated {
    #[serde(flatten)]
    pub organization: views::Organization,
    /// Present only when the caller used an API key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key: Option<views::ApiKeyWithSecret>,
}

/// Partial notification settings.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EmailNotificationsUpdate {
    pub domain_drifted: Option<bool>,
    pub domain_failed: Option<bool>,
    pub domain_setup: Option<bool>,
    pub tasks_digests: Option<bool>,
    pub setup_reminders: Option<bool>,
    pub first_report: Option<bool>,
    pub invitation_reminders: Option<bool>,
    pub billing_notices: Option<bool>,
    pub hosted_spf_live: Option<bool>,
    pub delegation_missing: Option<bool>,
}

/// Partial settings.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingsUpdate {
    pub email_notifications: Option<EmailNotificationsUpdate>,
}

/// `POST /organizations/{id}` body: any subset; `null` clears the nullable fields.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateOrganizationRequest {
    pub is_active: Option<bool>,
    #[schema(min_length = 3, max_length = 128)]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "crate::extract::double_option")]
    #[schema(value_type = Option<String>, nullable, format = "uri")]
    pub logo_url: Option<Option<String>>,
    #[serde(default, deserialize_with = "crate::extract::double_option")]
    #[schema(value_type = Option<String>, nullable, format = "email")]
    pub email: Option<Option<String>>,
    #[serde(default, deserialize_with = "crate::extract::double_option")]
    #[schema(value_type = Option<String>, nullable)]
    pub phone_number: Option<Option<String>>,
    #[serde(default, deserialize_with = "crate::extract::double_option")]
    #[schema(value_type = Option<String>, nullable, format = "uri")]
    pub website: Option<Option<String>>,
    pub settings: Option<SettingsUpdate>,
    /// Changeable only by an administrator's signed-in session that completed MFA; otherwise
    /// 403 `mfa_confirmation_required`.
    pub require_mfa: Option<bool>,
}

fn validate_url(param: &'static str, raw: &str) -> Result<String, ApiError> {
    let parsed = url::Url::parse(raw.trim()).map_err(|_| {
        ApiError::invalid_param(param, format!("{param} must be an absolute http(s) URL"))
    })?;
    if !matches!(parsed.scheme(), "https" | "http")
        || parsed.host_str().is_none()
        || raw.len() > 2048
    {
        return Err(ApiError::invalid_param(
            param,
            format!("{param} must be an absolute http(s) URL"),
        ));
    }
    Ok(parsed.to_string())
}

fn validate_phone(raw: &str) -> Result<String, ApiError> {
    let phone = raw.trim();
    let digits = phone.bytes().filter(u8::is_ascii_digit).count();
    let allowed = phone
        .bytes()
        .all(|b| b.is_ascii_digit() || b" +-().".contains(&b));
    if !allowed || !(4..=20).contains(&digits) || phone.len() > 32 {
        return Err(ApiError::invalid_param(
            "phone_number",
            "phone_number must be 4 to 20 digits with optional + - ( ) . and spaces",
        ));
    }
    Ok(phone.to_owned())
}

fn validate_name(raw: &str) -> Result<String, ApiError> {
    validate_org_name(raw).map_err(|m| ApiError::invalid_param("name", format!("name {m}")))
}

/// Creates another organization. With a session the caller becomes its administrator; with an
/// API key the calling organization's administrators do, and the response carries a key.
#[utoipa::path(post, path = "/organizations", tag = "organizations", request_body = CreateOrganizationRequest,
    description = "Administrators or read-write API keys. With an API key `invite_email` must be \
omitted or null (400 naming `invite_email` otherwise); the calling organization's administrators \
become the new organization's administrators and the response carries `api_key`, a read-write key \
for the new organization shown once. With a session the signed-in person becomes its administrator.",
    security(("api_key" = []), ("session" = [])),
    responses(
        (status = 201, body = OrganizationCreated),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
    ))]
pub async fn create_organization(
    State(state): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateOrganizationRequest>,
) -> Result<(StatusCode, axum::Json<OrganizationCreated>), ApiError> {
    principal.require_admin()?;
    let name = validate_name(&body.name)?;
    if let Some(Some(_)) = &body.invite_email {
        return Err(match principal.credential {
            Credential::ApiKey { .. } => ApiError::invalid_param(
                "invite_email",
                "invite_email must be omitted or null when using an API key",
            ),
            Credential::Session { .. } => ApiError::invalid_param(
                "invite_email",
                "invitations are not available yet; create the organization without invite_email",
            ),
        });
    }
    let referer = body
        .referer
        .map(|r| r.trim().chars().take(512).collect::<String>())
        .filter(|r| !r.is_empty());
    let now = state.clock.now();
    let creator = match principal.credential {
        Credential::Session { account_id, .. } => Some(account_id),
        Credential::ApiKey { .. } => None,
    };
    let org = Organization {
        id: Uuid::new_v4(),
        name,
        is_active: true,
        state: OrgState::Active,
        pricing_type: body.pricing_type.map_or(PricingType::Free, Into::into),
        referer,
        attribution_id: body.attribution_id,
        logo_url: None,
        email: None,
        phone_number: None,
        website: None,
        require_mfa: false,
        email_notifications: EmailNotifications::default(),
        onboarding_dismissed_at: None,
        created_by: creator,
        created_at: now,
        updated_at: now,
    };
    let admins: Vec<Uuid> = match creator {
        Some(account) => vec![account],
        None => accounts::members_of(state.store.as_ref(), principal.org_id)
            .await?
            .into_iter()
            .filter(|m| m.roles.contains(&Role::Admin))
            .map(|m| m.account_id)
            .take(90)
            .collect(),
    };
    let mut ops = vec![orgs::create_op(&org)?];
    for account_id in admins {
        ops.push(WriteOp::Put {
            item: accounts::membership_item(&Membership {
                org_id: org.id,
                account_id,
                roles: vec![Role::Admin],
                created_at: now,
            })?,
            condition: Condition::NotExists,
        });
    }
    let key = match principal.credential {
        Credential::ApiKey { .. } => {
            let key = api_keys::generate(
                org.id,
                format!("Created by API key {}", short(principal.subject())),
                ApiKeyAccess::ReadWrite,
                None,
                now,
            );
            ops.extend(api_keys::create_ops(&key.meta)?);
            Some(key)
        }
        Credential::Session { .. } => None,
    };
    state.store.transact(ops).await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(OrganizationCreated {
            organization: views::Organization::from(&org),
            api_key: key.map(|k| views::ApiKeyWithSecret {
                api_key: views::ApiKey::from(&k.meta),
                key: k.secret,
            }),
        }),
    ))
}

fn short(subject: String) -> String {
    subject.trim_start_matches("key:").chars().take(8).collect()
}

/// The old values of the top-level fields that differ between two JSON objects (the
/// `previous_attributes` of change events).
pub fn previous_attributes(old: &Value, new: &Value) -> Option<Value> {
    let (Value::Object(old), Value::Object(new)) = (old, new) else {
        return None;
    };
    let changed: serde_json::Map<String, Value> = old
        .iter()
        .filter(|(k, v)| k.as_str() != "updated_at" && new.get(k.as_str()) != Some(v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!changed.is_empty()).then_some(Value::Object(changed))
}

/// Saves an organization change with its `organization.updated` event in one transaction.
async fn save_with_event(
    state: &AppState,
    before: &Organization,
    after: &Organization,
    read_version: u64,
) -> Result<(), ApiError> {
    let old_view =
        serde_json::to_value(views::Organization::from(before)).map_err(ApiError::internal)?;
    let new_view =
        serde_json::to_value(views::Organization::from(after)).map_err(ApiError::internal)?;
    let mut extra = Vec::new();
    if let Some(previous) = previous_attributes(&old_view, &new_view) {
        let event = OutboxEvent::new(
            "organization.updated",
            after.id,
            after.updated_at,
            new_view,
            Some(previous),
        );
        extra.push(event.write_op()?);
    }
    orgs::save(state.store.as_ref(), after, read_version, extra).await?;
    Ok(())
}

async fn load_own(
    state: &AppState,
    principal: &Principal,
    id: Uuid,
) -> Result<crate::repo::Versioned<Organization>, ApiError> {
    principal.require_own_org(id)?;
    orgs::get(state.store.as_ref(), id)
        .await?
        .filter(|o| o.value.state == OrgState::Active)
        .ok_or_else(|| ApiError::not_found("organization"))
}

/// Updates an organization.
#[utoipa::path(post, path = "/organizations/{id}", tag = "organizations", request_body = UpdateOrganizationRequest,
    params(("id" = uuid::Uuid, Path, description = "Organization id: the credential's own")),
    description = "Administrators or read-write API keys. Any other organization's id answers 404. \
`require_mfa` may be changed only by an administrator's signed-in session whose sign-in completed \
MFA (`amr` contains `mfa`); otherwise 403 `mfa_confirmation_required`. A concurrent update answers \
409 `conflict`. Emits `organization.updated` when something changed.",
    security(("api_key" = []), ("session" = [])),
    responses(
        (status = 200, body = views::Organization),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
    ))]
pub async fn update_organization(
    State(state): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Json(body): Json<UpdateOrganizationRequest>,
) -> Result<axum::Json<views::Organization>, ApiError> {
    principal.require_admin()?;
    let current = load_own(&state, &principal, id).await?;
    let before = current.value.clone();
    let mut org = current.value;
    if let Some(is_active) = body.is_active {
        org.is_active = is_active;
    }
    if let Some(name) = &body.name {
        org.name = validate_name(name)?;
    }
    if let Some(logo) = &body.logo_url {
        org.logo_url = logo
            .as_deref()
            .map(|u| validate_url("logo_url", u))
            .transpose()?;
    }
    if let Some(website) = &body.website {
        org.website = website
            .as_deref()
            .map(|u| validate_url("website", u))
            .transpose()?;
    }
    if let Some(email) = &body.email {
        org.email = email
            .as_deref()
            .map(|e| EmailAddress::parse(e).map(|e| e.as_str().to_owned()))
            .transpose()
            .map_err(|_| ApiError::invalid_param("email", "email is not a valid address"))?;
    }
    if let Some(phone) = &body.phone_number {
        org.phone_number = phone.as_deref().map(validate_phone).transpose()?;
    }
    if let Some(n) = body.settings.and_then(|s| s.email_notifications) {
        apply_notifications(&mut org.email_notifications, n);
    }
    if let Some(require_mfa) = body.require_mfa.filter(|wanted| *wanted != org.require_mfa) {
        let allowed = matches!(
            principal.credential,
            Credential::Session {
                role: Role::Admin,
                mfa: true,
                ..
            }
        );
        if !allowed {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "mfa_confirmation_required",
                "require_mfa can be changed only by an administrator signed in with MFA, not with an API key",
            )
            .param("require_mfa"));
        }
        org.require_mfa = require_mfa;
    }
    if org == before {
        return Ok(axum::Json(views::Organization::from(&org)));
    }
    org.updated_at = state.clock.now();
    save_with_event(&state, &before, &org, current.version).await?;
    Ok(axum::Json(views::Organization::from(&org)))
}

fn apply_notifications(n: &mut EmailNotifications, u: EmailNotificationsUpdate) {
    let set = |field: &mut bool, value: Option<bool>| {
        if let Some(v) = value {
            *field = v;
        }
    };
    set(&mut n.domain_drifted, u.domain_drifted);
    set(&mut n.domain_failed, u.domain_failed);
    set(&mut n.domain_setup, u.domain_setup);
    set(&mut n.tasks_digests, u.tasks_digests);
    set(&mut n.setup_reminders, u.setup_reminders);
    set(&mut n.first_report, u.first_report);
    set(&mut n.invitation_reminders, u.invitation_reminders);
    set(&mut n.billing_notices, u.billing_notices);
    set(&mut n.hosted_spf_live, u.hosted_spf_live);
    set(&mut n.delegation_missing, u.delegation_missing);
}

/// Deletes an organization asynchronously.
#[utoipa::path(delete, path = "/organizations/{id}", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "Organization id: the credential's own")),
    description = "Administrators or read-write API keys. Answers 202 at once: from then on every \
credential of the organization answers 401, and a background job removes all of its data (keys, \
memberships, settings). Repeating the call answers 404.",
    security(("api_key" = []), ("session" = [])),
    responses(
        (status = 202, description = "Deletion accepted"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
    ))]
pub async fn delete_organization(
    State(state): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    principal.require_admin()?;
    let current = load_own(&state, &principal, id).await?;
    let mut org = current.value;
    org.state = OrgState::Deleting;
    org.updated_at = state.clock.now();
    orgs::save(state.store.as_ref(), &org, current.version, Vec::new()).await?;
    jobs::enqueue_delete_organization(&state, id).await?;
    tracing::info!(org.id = %id, "organization deletion accepted");
    Ok(StatusCode::ACCEPTED)
}

/// Dismisses onboarding (idempotent: the first timestamp is kept).
#[utoipa::path(post, path = "/organizations/{id}/onboarding/dismiss", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "Organization id: the credential's own")),
    description = "Any credential of the organization that can read domains (read-only keys and \
viewers included). Repeating it keeps the first timestamp and changes nothing.",
    security(("api_key" = []), ("session" = [])),
    responses(
        (status = 200, body = views::Organization),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ))]
pub async fn dismiss_onboarding(
    State(state): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    OptionalJson(_): OptionalJson<EmptyBody>,
) -> Result<axum::Json<views::Organization>, ApiError> {
    let current = load_own(&state, &principal, id).await?;
    if current.value.onboarding_dismissed_at.is_some() {
        return Ok(axum::Json(views::Organization::from(&current.value)));
    }
    let before = current.value.clone();
    let mut org = current.value;
    let now = state.clock.now();
    org.onboarding_dismissed_at = Some(now);
    org.updated_at = now;
    match save_with_event(&state, &before, &org, current.version).await {
        Ok(()) => Ok(axum::Json(views::Organization::from(&org))),
        // A concurrent dismissal won: return what it stored.
        Err(e) if e.status == StatusCode::CONFLICT => {
            let latest = load_own(&state, &principal, id).await?;
            Ok(axum::Json(views::Organization::from(&latest.value)))
        }
        Err(e) => Err(e),
    }
}

/// A body that must be empty or `{}`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmptyBody {}

/// Routes of this module.
pub fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(create_organization))
        .routes(utoipa_axum::routes!(
            update_organization,
            delete_organization
        ))
        .routes(utoipa_axum::routes!(dismiss_onboarding))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn previous_attributes_lists_old_values_of_changed_fields() {
        let old = json!({"name": "A", "is_active": true, "updated_at": "x"});
        let new = json!({"name": "B", "is_active": true, "updated_at": "y"});
        assert_eq!(previous_attributes(&old, &new), Some(json!({"name": "A"})));
        assert_eq!(previous_attributes(&old, &old), None);
    }

    #[test]
    fn urls_and_phones_are_validated() {
        assert!(validate_url("website", "https://example.com/x").is_ok());
        assert_eq!(
            validate_url("website", "javascript:alert(1)")
                .unwrap_err()
                .param
                .as_deref(),
            Some("website")
        );
        assert!(validate_url("logo_url", "ftp://example.com").is_err());
        assert!(validate_phone("+1 (555) 010-0000").is_ok());
        assert!(validate_phone("call me").is_err());
    }
}
