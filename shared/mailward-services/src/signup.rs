//! Headless signup (SPEC §4.7, §5.5): a six-digit code emailed to the address, traded for an
//! organization, its first administrator account and an API key.

use crate::error::{ErrorKind, ServiceError};
use crate::state::AppState;
use mailward_api_types::api_keys::{ApiKey, ApiKeyWithSecret};
use mailward_api_types::organizations::{Organization as OrganizationView, OrganizationWithKey};
use mailward_api_types::signup::{SignupRequest, SignupStarted, VerifyRequest};
use mailward_domain::email::{EmailError, parse_signup_email};
use mailward_domain::mailer::OutboundEmail;
use mailward_domain::model::{
    Account, ApiKeyAccess, EmailNotifications, Membership, OrgState, Organization, PricingType,
    Role, SIGNUP_CODE_TTL_SECS, SIGNUP_MAX_FAILED_ATTEMPTS, SignupChallenge, validate_org_name,
};
use mailward_domain::secrets;
use mailward_domain::store::{Condition, WriteOp};
use mailward_store::{Versioned, accounts, api_keys, orgs, signups};
use serde_json::json;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

fn code_hash(app: &AppState, signup_id: Uuid, code: &str) -> String {
    secrets::hmac_sha256_hex(
        &app.config.secret_key,
        format!("signup:{signup_id}:{code}").as_bytes(),
    )
}

/// Starts a signup: validates the address and name, throttles codes per address, stores a
/// challenge and emails the code. No account exists until the code is verified. (The per-IP
/// `signup` bucket is the HTTP layer's.)
pub async fn start(app: &AppState, input: SignupRequest) -> Result<SignupStarted, ServiceError> {
    let email = parse_signup_email(&input.email).map_err(|e| match e {
        EmailError::Invalid => ServiceError::invalid("email", "not a valid email address"),
        EmailError::Disposable => ServiceError::new(
            ErrorKind::Unprocessable,
            "disposable_email_domain",
            "disposable email domains are not accepted; use a work or personal address",
        )
        .param("email"),
    })?;
    let organization_name = validate_org_name(&input.organization_name).map_err(|m| {
        ServiceError::invalid("organization_name", format!("organization_name {m}"))
    })?;

    let now = app.clock.now();
    let (sent, hour_end) =
        signups::count_code_sent(app.store.as_ref(), email.as_str(), now.unix_timestamp()).await?;
    if sent > i64::from(app.config.signup_codes_per_address_per_hour) {
        let retry = (hour_end - now.unix_timestamp()).max(1);
        return Err(ServiceError::new(
            ErrorKind::TooManyRequests,
            "signup_email_throttled",
            format!("too many codes were sent to this address; retry in {retry} seconds"),
        )
        .param("email")
        .retry_after(u64::try_from(retry).unwrap_or(1)));
    }

    let id = Uuid::new_v4();
    let code = secrets::new_signup_code();
    let challenge = SignupChallenge {
        id,
        email: email.as_str().to_owned(),
        organization_name,
        pricing_type: input.pricing_type.map_or(PricingType::Free, Into::into),
        attribution_id: input.attribution_id,
        code_hash: code_hash(app, id, &code),
        failed_attempts: 0,
        expires_at: now + Duration::seconds(SIGNUP_CODE_TTL_SECS),
    };
    signups::create(app.store.as_ref(), &challenge).await?;
    let message = OutboundEmail {
        attachments: Vec::new(),
        to: challenge.email.clone(),
        subject: "Your Mailward signup code".into(),
        text: format!(
            "Your Mailward signup code is {code}.\n\nIt expires in 15 minutes. If you did not ask for it, ignore this email.\n"
        ),
        ..OutboundEmail::default()
    };
    if let Err(e) = app.mailer.send(message).await {
        let _ = signups::delete(app.store.as_ref(), id).await;
        return Err(ServiceError::unavailable(e));
    }
    tracing::info!(signup.id = %id, "signup code sent");
    Ok(SignupStarted {
        signup_id: id,
        expires_in_seconds: SIGNUP_CODE_TTL_SECS as u32,
    })
}

fn challenge_invalid() -> ServiceError {
    ServiceError::new(
        ErrorKind::Invalid,
        "signup_challenge_invalid",
        "this signup is unknown, expired (15 minutes) or used up (5 incorrect codes); start again with POST /signup",
    )
    .param("signup_id")
}

/// Verifies the code and creates the organization, its administrator (a new account, or the
/// existing one of that address) and a read-write API key, shown once. Succeeds once per
/// signup, within 15 minutes and before the fifth incorrect code.
pub async fn verify(
    app: &AppState,
    input: VerifyRequest,
) -> Result<OrganizationWithKey, ServiceError> {
    Ok(verify_account(app, input).await?.0)
}

/// [`verify`], with the administrator's account id (the web application opens its session).
pub async fn verify_account(
    app: &AppState,
    input: VerifyRequest,
) -> Result<(OrganizationWithKey, Uuid), ServiceError> {
    let code = input.code.trim();
    if code.len() != 6 || !code.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ServiceError::invalid("code", "the code is six digits"));
    }
    let Some(current) = signups::get(app.store.as_ref(), input.signup_id).await? else {
        return Err(challenge_invalid());
    };
    let challenge = current.value.clone();
    check_code(app, &current, code).await?;

    let now = app.clock.now();
    let (account, account_is_new) = account_of(app, &challenge.email, now).await?;
    let org = signup_organization(&challenge, account.id, now);
    let key = api_keys::generate(
        org.id,
        "Signup key".into(),
        ApiKeyAccess::ReadWrite,
        None,
        now,
    );
    let mut ops: Vec<WriteOp> = vec![signups::consume_op(challenge.id, current.version)];
    ops.extend(orgs::create_ops(&org)?);
    if account_is_new {
        ops.push(WriteOp::Put {
            item: accounts::account_item(&account)?,
            condition: Condition::NotExists,
        });
    }
    ops.push(WriteOp::Put {
        item: accounts::membership_item(&Membership {
            email: account.email.clone(),
            org_id: org.id,
            account_id: account.id,
            roles: vec![Role::Admin],
            groups: Vec::new(),
            mfa_seen_at: None,
            scim_managed: false,
            created_at: now,
        })?,
        condition: Condition::NotExists,
    });
    ops.extend(api_keys::create_ops(&key.meta)?);
    ops.extend(crate::activity::ops_as(
        app,
        org.id,
        (mailward_domain::admin::ActorType::User, Some(account.id)),
        crate::activity::Change::new(
            "organization.created",
            "organization",
            Some(org.id),
            format!("{} signed up and created {}", account.email, org.name),
        ),
    )?);
    match app.store.transact(ops).await {
        Ok(()) => {}
        // Consumed by a concurrent verify, or the account appeared meanwhile: either way this
        // challenge is spent or must be retried from the start.
        Err(e) if e.is_conflict() => return Err(challenge_invalid()),
        Err(e) => return Err(e.into()),
    }
    tracing::info!(org.id = %org.id, signup.id = %challenge.id, "signup verified; organization created");
    let created = OrganizationWithKey {
        organization: OrganizationView::from(&org),
        api_key: ApiKeyWithSecret {
            api_key: ApiKey::from(&key.meta),
            key: key.secret,
        },
    };
    Ok((created, account.id))
}

/// The account of `email`, and whether it is new (to be created with the organization).
async fn account_of(
    app: &AppState,
    email: &str,
    now: OffsetDateTime,
) -> Result<(Account, bool), ServiceError> {
    Ok(
        match accounts::get_by_email(app.store.as_ref(), email).await? {
            Some(a) => (a.value, false),
            None => (
                Account {
                    id: Uuid::new_v4(),
                    email: email.to_owned(),
                    created_at: now,
                },
                true,
            ),
        },
    )
}

/// Counts an attempt at the code: a wrong one is saved as a failed attempt (the fifth ends the
/// signup), a right one passes.
async fn check_code(
    app: &AppState,
    current: &Versioned<SignupChallenge>,
    code: &str,
) -> Result<(), ServiceError> {
    let mut challenge = current.value.clone();
    if challenge.failed_attempts >= SIGNUP_MAX_FAILED_ATTEMPTS {
        return Err(challenge_invalid());
    }
    let expected = code_hash(app, challenge.id, code);
    if !secrets::constant_time_eq(expected.as_bytes(), challenge.code_hash.as_bytes()) {
        challenge.failed_attempts += 1;
        let remaining = SIGNUP_MAX_FAILED_ATTEMPTS - challenge.failed_attempts;
        match signups::save(app.store.as_ref(), &challenge, current.version).await {
            Ok(()) => {}
            // Another attempt raced this one; it counted, and this one must not pass either.
            Err(e) if e.is_conflict() => return Err(challenge_invalid()),
            Err(e) => return Err(e.into()),
        }
        if remaining == 0 {
            let _ = signups::delete(app.store.as_ref(), challenge.id).await;
            return Err(challenge_invalid());
        }
        return Err(ServiceError::new(
            ErrorKind::Invalid,
            "signup_code_incorrect",
            "the code is incorrect",
        )
        .param("code")
        .details(json!({ "attempts_remaining": remaining })));
    }
    Ok(())
}

/// The organization a signup creates, its administrator `account_id`.
fn signup_organization(
    challenge: &SignupChallenge,
    account_id: Uuid,
    now: OffsetDateTime,
) -> Organization {
    Organization {
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
        agent_proposals_enabled: true,
        redact_failure_reports: true,
        onboarding_dismissed_at: None,
        created_by: Some(account_id),
        parent_org_id: None,
        invitation_failure: None,
        suspension: None,
        created_at: now,
        updated_at: now,
    }
}
