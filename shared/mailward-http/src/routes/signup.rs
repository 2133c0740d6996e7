//! Headless signup (SPEC §4.7, §5.5): `POST /signup` emails a six-digit code; `POST
//! /signup/verify` trades it for an organization, its first admin account and an API key.

use crate::config::Scope;
use crate::error::ApiError;
use crate::extract::Json;
use crate::middleware::ClientIp;
use crate::rate_limit::{RateLimitLog, enforce_logged};
use crate::repo::{accounts, api_keys, orgs, signups};
use crate::state::AppState;
use crate::views::{
    self, ErrorBody, OrganizationWithKey, PricingTypeView, RateLimitBody, SignupStarted,
};
use axum::Extension;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use mailward_domain::email::{EmailError, parse_signup_email};
use mailward_domain::mailer::OutboundEmail;
use mailward_domain::model::{
    Account, ApiKeyAccess, EmailNotifications, Membership, OrgState, Organization, PricingType,
    Role, SIGNUP_CODE_TTL_SECS, SIGNUP_MAX_FAILED_ATTEMPTS, SignupChallenge, validate_org_name,
};
use mailward_domain::secrets;
use mailward_domain::store::{StoreError, WriteOp};
use serde::Deserialize;
use serde_json::json;
use time::Duration;
use utoipa::ToSchema;
use uuid::Uuid;

/// `POST /signup` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SignupRequest {
    /// Work or personal address; disposable domains are refused.
    #[schema(format = "email")]
    pub email: String,
    /// 3 to 128 characters.
    #[schema(min_length = 3, max_length = 128)]
    pub organization_name: String,
    /// Plan; defaults to `free`.
    pub pricing_type: Option<PricingTypeView>,
    /// Marketing attribution id.
    pub attribution_id: Option<Uuid>,
}

/// `POST /signup/verify` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyRequest {
    /// From `POST /signup`.
    pub signup_id: Uuid,
    /// The six digits from the email.
    #[schema(pattern = "^[0-9]{6}$")]
    pub code: String,
}

fn code_hash(state: &AppState, signup_id: Uuid, code: &str) -> String {
    secrets::hmac_sha256_hex(
        &state.config.secret_key,
        format!("signup:{signup_id}:{code}").as_bytes(),
    )
}

/// Starts a signup: validates, throttles per address, stores a challenge and emails the code.
#[utoipa::path(post, path = "/signup", tag = "signup", request_body = SignupRequest,
    description = "Emails a six-digit code valid for 15 minutes. Refuses disposable addresses (422 \
`disposable_email_domain`), more than the configured number of codes per address per hour (429 \
`signup_email_throttled`, default 5) and more than the `signup` bucket allows per client IP (429 \
`rate_limit_exceeded`). No account exists until the code is verified.",
    responses(
        (status = 201, description = "Code sent", body = SignupStarted),
        (status = 400, description = "Invalid field (`param` names it)", body = ErrorBody),
        (status = 422, description = "`disposable_email_domain`", body = ErrorBody),
        (status = 429, description = "`signup_email_throttled` (error body) or the `signup` bucket (rate-limit body)", body = RateLimitBody),
        (status = 503, description = "The email could not be sent", body = ErrorBody),
    ))]
pub async fn start_signup(
    State(state): State<AppState>,
    Extension(ClientIp(ip)): Extension<ClientIp>,
    log: Option<Extension<RateLimitLog>>,
    Json(body): Json<SignupRequest>,
) -> Result<(StatusCode, axum::Json<SignupStarted>), ApiError> {
    enforce_logged(&state, log.as_deref(), Scope::Signup, &format!("ip:{ip}")).await?;
    let email = parse_signup_email(&body.email).map_err(|e| match e {
        EmailError::Invalid => ApiError::invalid_param("email", "not a valid email address"),
        EmailError::Disposable => ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "disposable_email_domain",
            "disposable email domains are not accepted; use a work or personal address",
        )
        .param("email"),
    })?;
    let organization_name = validate_org_name(&body.organization_name).map_err(|m| {
        ApiError::invalid_param("organization_name", format!("organization_name {m}"))
    })?;

    let now = state.clock.now();
    let (sent, hour_end) =
        signups::count_code_sent(state.store.as_ref(), email.as_str(), now.unix_timestamp())
            .await?;
    if sent > i64::from(state.config.signup_codes_per_address_per_hour) {
        let retry = (hour_end - now.unix_timestamp()).max(1);
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "signup_email_throttled",
            format!("too many codes were sent to this address; retry in {retry} seconds"),
        )
        .param("email")
        .header(header::RETRY_AFTER, HeaderValue::from(retry)));
    }

    let id = Uuid::new_v4();
    let code = secrets::new_signup_code();
    let challenge = SignupChallenge {
        id,
        email: email.as_str().to_owned(),
        organization_name,
        pricing_type: body.pricing_type.map_or(PricingType::Free, Into::into),
        attribution_id: body.attribution_id,
        code_hash: code_hash(&state, id, &code),
        failed_attempts: 0,
        expires_at: now + Duration::seconds(SIGNUP_CODE_TTL_SECS),
    };
    signups::create(state.store.as_ref(), &challenge).await?;
    let message = OutboundEmail {
        to: challenge.email.clone(),
        subject: "Your Mailward signup code".into(),
        text: format!(
            "Your Mailward signup code is {code}.\n\nIt expires in 15 minutes. If you did not ask for it, ignore this email.\n"
        ),
    };
    if let Err(e) = state.mailer.send(message).await {
        let _ = signups::delete(state.store.as_ref(), id).await;
        return Err(ApiError::unavailable(e));
    }
    tracing::info!(signup.id = %id, "signup code sent");
    Ok((
        StatusCode::CREATED,
        axum::Json(SignupStarted {
            signup_id: id,
            expires_in_seconds: SIGNUP_CODE_TTL_SECS as u32,
        }),
    ))
}

fn challenge_invalid() -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "signup_challenge_invalid",
        "this signup is unknown, expired (15 minutes) or used up (5 incorrect codes); start again with POST /signup",
    )
    .param("signup_id")
}

/// Verifies the code and creates the organization, admin account and API key.
#[utoipa::path(post, path = "/signup/verify", tag = "signup", request_body = VerifyRequest,
    description = "Succeeds once per signup, within 15 minutes and before the fifth incorrect code. \
An incorrect code answers 400 `signup_code_incorrect` with `details.attempts_remaining`; an unknown, \
expired or exhausted signup answers 400 `signup_challenge_invalid`. The response carries the \
organization and an organization-scoped read-write API key, shown exactly once. An address that \
already has an account gets a new organization on that account.",
    responses(
        (status = 201, description = "Organization and API key created", body = OrganizationWithKey),
        (status = 400, description = "`signup_code_incorrect`, `signup_challenge_invalid` or an invalid field", body = ErrorBody),
    ))]
pub async fn verify_signup(
    State(state): State<AppState>,
    Json(body): Json<VerifyRequest>,
) -> Result<(StatusCode, axum::Json<OrganizationWithKey>), ApiError> {
    let code = body.code.trim();
    if code.len() != 6 || !code.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::invalid_param("code", "the code is six digits"));
    }
    let Some(current) = signups::get(state.store.as_ref(), body.signup_id).await? else {
        return Err(challenge_invalid());
    };
    let mut challenge = current.value.clone();
    if challenge.failed_attempts >= SIGNUP_MAX_FAILED_ATTEMPTS {
        return Err(challenge_invalid());
    }
    let expected = code_hash(&state, challenge.id, code);
    if !secrets::constant_time_eq(expected.as_bytes(), challenge.code_hash.as_bytes()) {
        challenge.failed_attempts += 1;
        let remaining = SIGNUP_MAX_FAILED_ATTEMPTS - challenge.failed_attempts;
        match signups::save(state.store.as_ref(), &challenge, current.version).await {
            Ok(()) => {}
            // Another attempt raced this one; it counted, and this one must not pass either.
            Err(StoreError::ConditionFailed) => return Err(challenge_invalid()),
            Err(e) => return Err(e.into()),
        }
        if remaining == 0 {
            let _ = signups::delete(state.store.as_ref(), challenge.id).await;
            return Err(challenge_invalid());
        }
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "signup_code_incorrect",
            "the code is incorrect",
        )
        .param("code")
        .details(json!({ "attempts_remaining": remaining })));
    }

    let now = state.clock.now();
    let existing = accounts::get_by_email(state.store.as_ref(), &challenge.email).await?;
    let (account, account_is_new) = match existing {
        Some(a) => (a.value, false),
        None => (
            Account {
                id: Uuid::new_v4(),
                email: challenge.email.clone(),
                created_at: now,
            },
            true,
        ),
    };
    let org = Organization {
        id: Uuid::new_v4(),
        name: challenge.organization_name.clone(),
        is_active: true,
        state: OrgState::Active,
        pricing_type: challenge.pricing_type,
        referer: None,
        attribution_id: challenge.attribution_id,
        logo_url: None,
        email: Some(challenge.email.clone()),
        phone_number: None,
        website: None,
        require_mfa: false,
        email_notifications: EmailNotifications::default(),
        onboarding_dismissed_at: None,
        created_by: Some(account.id),
        created_at: now,
        updated_at: now,
    };
    let key = api_keys::generate(
        org.id,
        "Signup key".into(),
        ApiKeyAccess::ReadWrite,
        None,
        now,
    );
    let mut ops: Vec<WriteOp> = vec![
        signups::consume_op(challenge.id, current.version),
        orgs::create_op(&org)?,
    ];
    if account_is_new {
        ops.push(WriteOp::Put {
            item: accounts::account_item(&account)?,
            condition: mailward_domain::store::Condition::NotExists,
        });
    }
    ops.push(WriteOp::Put {
        item: accounts::membership_item(&Membership {
            org_id: org.id,
            account_id: account.id,
            roles: vec![Role::Admin],
            created_at: now,
        })?,
        condition: mailward_domain::store::Condition::NotExists,
    });
    ops.extend(api_keys::create_ops(&key.meta)?);
    match state.store.transact(ops).await {
        Ok(()) => {}
        // Consumed by a concurrent verify, or the account appeared meanwhile: either way this
        // challenge is spent or must be retried from the start.
        Err(StoreError::TransactionCanceled { .. }) => return Err(challenge_invalid()),
        Err(e) => return Err(e.into()),
    }
    tracing::info!(org.id = %org.id, signup.id = %challenge.id, "signup verified; organization created");
    Ok((
        StatusCode::CREATED,
        axum::Json(OrganizationWithKey {
            organization: views::Organization::from(&org),
            api_key: views::ApiKeyWithSecret {
                api_key: views::ApiKey::from(&key.meta),
                key: key.secret,
            },
        }),
    ))
}

/// Routes of this module.
pub fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(start_signup))
        .routes(utoipa_axum::routes!(verify_signup))
}
