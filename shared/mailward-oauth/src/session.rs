//! Dashboard sessions from the same email sign-in as the authorization server: a person trades
//! the emailed code for a session in one of their organizations (the HTTP layer signs it).

use super::signin::{self, SignInError};
use mailward_api_types::oauth::{SessionRequest, SessionStartRequest, SessionStarted};
use mailward_app::error::{ErrorKind, ServiceError};
use mailward_app::state::AppState;
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
        SignInError::Failed(message) => ServiceError::unavailable(message),
    }
}

/// Sends a sign-in code (when an account uses the address; the answer is the same either way).
pub async fn start(
    app: &AppState,
    input: SessionStartRequest,
) -> Result<SessionStarted, ServiceError> {
    let id = signin::start(app, &input.email).await.map_err(refusal)?;
    Ok(SessionStarted {
        signin_id: id,
        expires_in_seconds: signin::SIGNIN_CODE_TTL_SECS as u32,
    })
}

/// Checks the code and picks the organization: the account and its membership there.
pub async fn finish(
    app: &AppState,
    input: SessionRequest,
    client: &str,
) -> Result<(Account, Membership), ServiceError> {
    let code = input.code.trim();
    if code.len() != 6 || !code.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ServiceError::invalid("code", "the code is six digits"));
    }
    let account = signin::verify(app, input.signin_id, code, client)
        .await
        .map_err(refusal)?;
    let choices = super::flow::choices(app, account.id)
        .await
        .map_err(|e| ServiceError::unavailable(e.description))?;
    let chosen = match input.organization_id {
        Some(org) => choices.into_iter().find(|(m, _)| m.org_id == org),
        None if choices.len() == 1 => choices.into_iter().next(),
        None if choices.is_empty() => None,
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
    Ok((account, membership))
}
