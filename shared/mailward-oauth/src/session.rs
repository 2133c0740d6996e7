//! Dashboard sessions from the same email sign-in as the authorization server: a person trades
//! the emailed code for a session in one of their organizations (the HTTP layer signs it).

use super::signin::{self, SignInError};
use mailward_api_types::oauth::{SessionRequest, SessionStartRequest, SessionStarted};
use mailward_app::error::{ErrorKind, ServiceError};
use mailward_app::state::AppState;
use mailward_domain::identity::{AMR_MFA, AMR_OTP};
use mailward_domain::model::{Account, Membership};
use serde_json::json;

fn refusal(e: SignInError) -> ServiceError {
    match e {
        SignInError::InvalidEmail => ServiceError::invalid("email", "not a valid email address"),
        SignInError::Throttled => ServiceError::new(
            ErrorKind::TooManyRequests,
            "signin_email_throttled",
            "too many codes were sent to this address; retry in an hour",
        )
        .param("email")
        .retry_after(3600),
        SignInError::Incorrect(left) => ServiceError::new(
            ErrorKind::Invalid,
            "signin_code_incorrect",
            "the code is incorrect",
        )
        .param("code")
        .details(json!({ "attempts_remaining": left })),
        SignInError::Expired => ServiceError::new(
            ErrorKind::Invalid,
            "signin_challenge_invalid",
            "this sign-in is unknown, expired (15 minutes) or used up (5 incorrect codes); start again with POST /oauth/session/start",
        )
        .param("signin_id"),
        SignInError::Locked(retry) => ServiceError::new(
            ErrorKind::TooManyRequests,
            "rate_limit_exceeded",
            "too many wrong codes were tried for this address from this network today",
        )
        .details(json!({ "scope": "signin" }))
        .retry_after(u64::from(retry)),
        SignInError::MfaRequired => ServiceError::new(
            ErrorKind::Forbidden,
            "mfa_required",
            "the account has an authenticator app: send its code (or a recovery code) as mfa_code with the same signin_id",
        )
        .param("mfa_code"),
        SignInError::MfaIncorrect(left) => ServiceError::new(
            ErrorKind::Invalid,
            "mfa_code_incorrect",
            "the authenticator code is incorrect",
        )
        .param("mfa_code")
        .details(json!({ "attempts_remaining": left })),
        SignInError::MfaReused => ServiceError::new(
            ErrorKind::Invalid,
            "mfa_code_reused",
            "this authenticator code was already used; wait for the app's next code",
        )
        .param("mfa_code"),
        SignInError::CodeMissing => {
            ServiceError::invalid("code", "the code is six digits").details(json!({}))
        }
        SignInError::SsoRequired => ServiceError::new(
            ErrorKind::Forbidden,
            "sso_required",
            "the address's organization signs it in through its identity provider: open the sso_url of POST /oauth/session/start",
        )
        .param("code"),
        SignInError::Failed(message) => ServiceError::unavailable(message),
    }
}

/// Sends a sign-in code (when an account uses the address; the answer is the same either way).
pub async fn start(
    app: &AppState,
    input: SessionStartRequest,
) -> Result<SessionStarted, ServiceError> {
    let started = signin::start(app, &input.email).await.map_err(refusal)?;
    let base = app.config.base_url.trim_end_matches('/');
    Ok(SessionStarted {
        signin_id: started.id,
        expires_in_seconds: signin::SIGNIN_CODE_TTL_SECS as u32,
        sso_url: started
            .sso
            .map(|_| format!("{base}/oauth/sso/start?signin_id={}", started.id)),
        sso_required: started.sso == Some(true),
    })
}

/// A finished sign-in: the account, its membership in the chosen organization, and the
/// RFC 8176 methods it used.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub account: Account,
    pub membership: Membership,
    pub amr: Vec<String>,
    /// `email_code`, or the identity provider's kind.
    pub provider: String,
}

/// The second factor of a sign-in: the account, its methods, provider and single sign-on
/// organization.
async fn second_factor(
    app: &AppState,
    input: &SessionRequest,
    client: &str,
) -> Result<(Account, Vec<String>, String, Option<uuid::Uuid>), ServiceError> {
    let Some(mfa_code) = input.mfa_code.as_deref() else {
        return Err(refusal(SignInError::MfaRequired).details(json!({
            "signin_id": input.signin_id,
            "methods": ["totp", "recovery_code"],
        })));
    };
    let (account, sso) = signin::second_factor(app, input.signin_id, mfa_code, client)
        .await
        .map_err(refusal)?;
    Ok(match sso {
        Some(result) => {
            let mut amr = result.amr;
            amr.push(AMR_MFA.to_owned());
            (account, amr, result.provider, Some(result.org_id))
        }
        None => (
            account,
            vec![AMR_OTP.to_owned(), AMR_MFA.to_owned()],
            "email_code".to_owned(),
            None,
        ),
    })
}

/// The emailed code of a sign-in step: six digits, or absent once the code step is done.
fn emailed_code(input: &SessionRequest) -> Result<&str, ServiceError> {
    let code = input.code.as_deref().unwrap_or_default().trim();
    if !code.is_empty() && (code.len() != 6 || !code.bytes().all(|b| b.is_ascii_digit())) {
        return Err(ServiceError::invalid("code", "the code is six digits"));
    }
    Ok(code)
}

/// Checks the code (and the second factor when the account has one) and picks the
/// organization.
pub async fn finish(
    app: &AppState,
    input: SessionRequest,
    client: &str,
) -> Result<SignedIn, ServiceError> {
    finish_choosing(app, input, client, false).await
}

/// [`finish`] for the web application: an account in several organizations opens the first
/// (by the order memberships are stored) when none is named, and the person switches after.
pub async fn finish_any(
    app: &AppState,
    input: SessionRequest,
    client: &str,
) -> Result<SignedIn, ServiceError> {
    finish_choosing(app, input, client, true).await
}

async fn finish_choosing(
    app: &AppState,
    input: SessionRequest,
    client: &str,
    first_when_several: bool,
) -> Result<SignedIn, ServiceError> {
    let code = emailed_code(&input)?;
    let verified = signin::verify(app, input.signin_id, code, client)
        .await
        .map_err(refusal)?;
    let (account, amr, provider, sso_org) = match verified {
        signin::Verified::Done(account) => (
            account,
            vec![AMR_OTP.to_owned()],
            "email_code".to_owned(),
            None,
        ),
        signin::Verified::Sso(account, result) => {
            (account, result.amr, result.provider, Some(result.org_id))
        }
        signin::Verified::NeedsMfa(_) => second_factor(app, &input, client).await?,
    };
    // A single sign-on opens its own organization's session unless another was named.
    let input = SessionRequest {
        organization_id: input.organization_id.or(sso_org),
        ..input
    };
    let choices = super::flow::choices(app, account.id)
        .await
        .map_err(|e| ServiceError::unavailable(e.description))?;
    let chosen = match input.organization_id {
        Some(org) => choices.into_iter().find(|(m, _)| m.org_id == org),
        None if choices.len() == 1 => choices.into_iter().next(),
        None if choices.is_empty() => None,
        None if first_when_several => choices.into_iter().next(),
        None => {
            let ids: Vec<String> = choices.iter().map(|(m, _)| m.org_id.to_string()).collect();
            return Err(ServiceError::invalid(
                "organization_id",
                "the account belongs to several organizations: name one (the code is used; start again)",
            )
            .details(json!({ "organization_ids": ids })));
        }
    };
    let Some((membership, _)) = chosen else {
        return Err(ServiceError::new(
            ErrorKind::Forbidden,
            "organization_required",
            "the account is not a member of that (or any) active organization",
        )
        .param("organization_id"));
    };
    Ok(SignedIn {
        account,
        membership,
        amr,
        provider,
    })
}

/// A staff sign-in (`POST /staff/session`): the emailed code, then the authenticator app,
/// always. The account must be on the staff list and have an authenticator: staff never get
/// a session on the code alone, nor through an organization's single sign-on.
pub async fn finish_staff(
    app: &AppState,
    input: SessionRequest,
    client: &str,
) -> Result<Account, ServiceError> {
    let not_staff = || {
        ServiceError::new(
            ErrorKind::Forbidden,
            "staff_only",
            "this sign-in is for Mailward staff with an authenticator app",
        )
    };
    let code = emailed_code(&input)?;
    let verified = signin::verify(app, input.signin_id, code, client)
        .await
        .map_err(refusal)?;
    let account = match verified {
        signin::Verified::NeedsMfa(_) => {
            let (account, amr, provider, _) = second_factor(app, &input, client).await?;
            if provider != "email_code" || !amr.iter().any(|m| m == AMR_MFA) {
                return Err(not_staff());
            }
            account
        }
        signin::Verified::Done(_) | signin::Verified::Sso(..) => return Err(not_staff()),
    };
    if !app.config.is_staff(&account.email) {
        return Err(not_staff());
    }
    Ok(account)
}
