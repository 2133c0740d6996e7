//! Signing a person in with an emailed one-time code: the authorization page's first step, and
//! the way a person gets a dashboard session. There are no passwords.

use super::OAuthError;
use mailward_app::state::AppState;
use mailward_domain::email::EmailAddress;
use mailward_domain::identity::SsoResult;
use mailward_domain::mailer::OutboundEmail;
use mailward_domain::model::Account;
use mailward_domain::oauth::SignInChallenge;
use mailward_domain::secrets;
use mailward_store::{accounts, identity, oauth, signups};
use time::Duration;
use uuid::Uuid;

/// How long a sign-in code is valid.
pub const SIGNIN_CODE_TTL_SECS: i64 = 900;
/// Sign-in codes one address may receive per hour (counted apart from signup codes).
pub const SIGNIN_CODES_PER_HOUR: i64 = 10;
/// Wrong codes that end a challenge.
pub const SIGNIN_MAX_FAILED_ATTEMPTS: u32 = 5;
/// Wrong codes an address takes from one client (an IPv6 /64, or an IPv4 address) in a UTC day,
/// across challenges, emailed codes and authenticator codes alike: past it that client cannot
/// sign in to the address until the day ends (the owner is mailed once). Kept per client, so a
/// stranger cannot lock the owner out.
pub const SIGNIN_FAILURE_BUDGET: i64 = crate::mfa::FAILURE_BUDGET;

fn code_hash(app: &AppState, id: Uuid, code: &str) -> String {
    secrets::hmac_sha256_hex(
        &app.config.secret_key,
        format!("signin:{id}:{code}").as_bytes(),
    )
}

/// Why a sign-in step was refused, for the page to say.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignInError {
    /// The address is not an address.
    #[error("that is not a valid email address")]
    InvalidEmail,
    /// Too many codes for this address this hour.
    #[error("too many codes were sent to this address; try again in an hour")]
    Throttled,
    /// The code is wrong; some attempts remain.
    #[error("the code is incorrect ({0} attempts left)")]
    Incorrect(u32),
    /// Unknown, expired or used up: start again.
    #[error("this sign-in expired or was used up; start again")]
    Expired,
    /// Too many wrong codes for this address from this client today: retry in this many seconds.
    #[error("too many wrong codes were tried for this address; try again in {} hours", .0.div_ceil(3600))]
    Locked(u32),
    /// The emailed code was right; the account's second factor is needed (same challenge).
    #[error("enter the code from your authenticator app")]
    MfaRequired,
    /// The second factor is wrong; some attempts remain.
    #[error("the authenticator code is incorrect ({0} attempts left)")]
    MfaIncorrect(u32),
    /// The authenticator code of this step was used already.
    #[error("that authenticator code was already used; wait for the next one")]
    MfaReused,
    /// No emailed code was sent where one is needed.
    #[error("enter the six-digit code from the email")]
    CodeMissing,
    /// The address's organization signs it in through its identity provider only.
    #[error("your organization signs you in through its identity provider: use single sign-on")]
    SsoRequired,
    /// The service failed.
    #[error("{0}")]
    Failed(String),
}

/// A sign-in past its emailed code.
#[derive(Debug, Clone, PartialEq)]
pub enum Verified {
    /// Signed in.
    Done(Account),
    /// The account has an authenticator: [`second_factor`] with the same challenge.
    NeedsMfa(Account),
    /// Signed in by the organization's identity provider, with what it proved.
    Sso(Account, SsoResult),
}

impl From<mailward_domain::store::StoreError> for SignInError {
    fn from(e: mailward_domain::store::StoreError) -> Self {
        Self::Failed(OAuthError::from(e).description)
    }
}

/// A started sign-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    /// The challenge id.
    pub id: Uuid,
    /// `Some(enforced)` when the address's domain signs in through its organization's
    /// identity provider (enforced: no code was mailed).
    pub sso: Option<bool>,
}

/// Starts a sign-in: mails a six-digit code when an account uses the address (unless its
/// domain's organization enforces single sign-on). The answer is the same either way (the
/// challenge id), so the page does not tell who has an account.
pub async fn start(app: &AppState, raw_email: &str) -> Result<Started, SignInError> {
    let email = EmailAddress::parse(raw_email.trim()).map_err(|_| SignInError::InvalidEmail)?;
    let now = app.clock.now();
    let (sent, _) = signups::count_code_sent(
        app.store.as_ref(),
        &format!("signin:{}", email.as_str()),
        now.unix_timestamp(),
    )
    .await?;
    if sent > SIGNIN_CODES_PER_HOUR {
        return Err(SignInError::Throttled);
    }
    let id = Uuid::new_v4();
    let code = secrets::new_signup_code();
    let challenge = SignInChallenge {
        id,
        email: email.as_str().to_owned(),
        code_hash: code_hash(app, id, &code),
        failed_attempts: 0,
        verified: false,
        sso: None,
        expires_at: now + Duration::seconds(SIGNIN_CODE_TTL_SECS),
    };
    oauth::create_challenge(app.store.as_ref(), &challenge).await?;
    let sso = crate::sso::route(app, email.as_str())
        .await
        .map_err(|e| SignInError::Failed(e.message().to_owned()))?
        .map(|c| c.enforced);
    if sso != Some(true)
        && accounts::get_by_email(app.store.as_ref(), email.as_str())
            .await?
            .is_some()
    {
        let message = OutboundEmail {
            attachments: Vec::new(),
            to: challenge.email.clone(),
            subject: "Your Mailward sign-in code".into(),
            text: format!(
                "Your Mailward sign-in code is {code}.\n\nIt expires in 15 minutes. Someone (hopefully you) is signing in to connect an assistant or open a session. If it was not you, ignore this email: nothing happens without the code.\n"
            ),
            ..OutboundEmail::default()
        };
        app.mailer
            .send(message)
            .await
            .map_err(|e| SignInError::Failed(format!("the code could not be sent: {e}")))?;
    }
    tracing::info!(signin.id = %id, "sign-in started");
    Ok(Started { id, sso })
}

/// The address a live challenge was started for.
pub async fn challenge_email(app: &AppState, id: Uuid) -> Result<Option<String>, SignInError> {
    Ok(oauth::get_challenge(app.store.as_ref(), id)
        .await?
        .filter(|c| c.value.expires_at > app.clock.now())
        .map(|c| c.value.email))
}

/// A challenge already past its first factor by single sign-on (the consent pages' return
/// from the provider), for the second factor when the account has one.
pub async fn challenge_after_sso(
    app: &AppState,
    email: &str,
    result: SsoResult,
) -> Result<Uuid, SignInError> {
    let id = Uuid::new_v4();
    let challenge = SignInChallenge {
        id,
        email: email.to_owned(),
        code_hash: String::new(),
        failed_attempts: 0,
        verified: true,
        sso: Some(result),
        expires_at: app.clock.now() + Duration::seconds(SIGNIN_CODE_TTL_SECS),
    };
    oauth::create_challenge(app.store.as_ref(), &challenge).await?;
    Ok(id)
}

/// Records a finished single sign-on on the dashboard challenge it started from: the next
/// `POST /oauth/session` with it opens the session.
pub async fn complete_with_sso(
    app: &AppState,
    id: Uuid,
    result: SsoResult,
) -> Result<(), SignInError> {
    let store = app.store.as_ref();
    let Some(current) = oauth::get_challenge(store, id).await? else {
        return Err(SignInError::Expired);
    };
    let mut challenge = current.value;
    challenge.sso = Some(result);
    challenge.verified = true;
    match oauth::save_challenge(store, &challenge, current.version).await {
        Ok(()) => Ok(()),
        Err(e) if e.is_conflict() => Err(SignInError::Expired),
        Err(e) => Err(e.into()),
    }
}

/// Checks the code tried by `client` (its rate-limit subject): the signed-in account, once per
/// challenge. A client past the address's failure budget is refused, right code or not.
pub async fn verify(
    app: &AppState,
    id: Uuid,
    code: &str,
    client: &str,
) -> Result<Verified, SignInError> {
    let code = code.trim();
    let store = app.store.as_ref();
    let Some(current) = oauth::get_challenge(store, id).await? else {
        return Err(SignInError::Expired);
    };
    let mut challenge = current.value.clone();
    if challenge.failed_attempts >= SIGNIN_MAX_FAILED_ATTEMPTS
        || challenge.expires_at <= app.clock.now()
    {
        return Err(SignInError::Expired);
    }
    if let Some(result) = &challenge.sso {
        return after_sso(app, id, current.version, result).await;
    }
    if challenge.verified {
        // The emailed step is done; only the second factor remains.
        return match accounts::get_by_email(store, &challenge.email).await? {
            Some(account) => Ok(Verified::NeedsMfa(account.value)),
            None => Err(SignInError::Expired),
        };
    }
    if code.is_empty() {
        return Err(SignInError::CodeMissing);
    }
    if crate::sso::route(app, &challenge.email)
        .await
        .map_err(|e| SignInError::Failed(e.message().to_owned()))?
        .is_some_and(|c| c.enforced)
    {
        return Err(SignInError::SsoRequired);
    }
    let now = app.clock.unix();
    let (failures, day_end) =
        oauth::signin_failures(store, &challenge.email, client, now, 0).await?;
    if failures >= SIGNIN_FAILURE_BUDGET {
        return Err(locked(now, day_end));
    }
    let account = accounts::get_by_email(store, &challenge.email).await?;
    let owner = account.as_ref().map(|a| a.value.email.clone());
    let expected = code_hash(app, id, code);
    let right = code.len() == 6
        && secrets::constant_time_eq(expected.as_bytes(), challenge.code_hash.as_bytes());
    let Some(account) = account.filter(|_| right) else {
        let (failures, _) = oauth::signin_failures(store, &challenge.email, client, now, 1).await?;
        if failures >= SIGNIN_FAILURE_BUDGET {
            if failures == SIGNIN_FAILURE_BUDGET
                && let Some(owner) = &owner
            {
                warn_owner(app, owner).await;
            }
            let _ = oauth::consume_challenge(store, id, current.version).await;
            return Err(locked(now, day_end));
        }
        challenge.failed_attempts += 1;
        let left = SIGNIN_MAX_FAILED_ATTEMPTS - challenge.failed_attempts;
        match oauth::save_challenge(store, &challenge, current.version).await {
            Ok(()) if left > 0 => return Err(SignInError::Incorrect(left)),
            Ok(()) => return Err(SignInError::Expired),
            Err(e) if e.is_conflict() => return Err(SignInError::Expired),
            Err(e) => return Err(e.into()),
        }
    };
    code_was_right(app, challenge, current.version, account.value).await
}

/// After a right emailed code: the second factor awaited when the account has one (the
/// challenge kept as verified), else the challenge ends.
async fn code_was_right(
    app: &AppState,
    mut challenge: SignInChallenge,
    version: u64,
    account: Account,
) -> Result<Verified, SignInError> {
    let store = app.store.as_ref();
    if identity::has_totp(store, account.id).await? {
        challenge.verified = true;
        return match oauth::save_challenge(store, &challenge, version).await {
            Ok(()) => Ok(Verified::NeedsMfa(account)),
            Err(e) if e.is_conflict() => Err(SignInError::Expired),
            Err(e) => Err(e.into()),
        };
    }
    if !oauth::consume_challenge(store, challenge.id, version).await? {
        return Err(SignInError::Expired);
    }
    Ok(Verified::Done(account))
}

/// A challenge the organization's provider completed: its methods, and the app's code on top
/// when the person has one and the provider's MFA was not taken.
async fn after_sso(
    app: &AppState,
    id: Uuid,
    version: u64,
    result: &SsoResult,
) -> Result<Verified, SignInError> {
    let store = app.store.as_ref();
    let Some(account) = accounts::get_by_id(store, result.account_id).await? else {
        return Err(SignInError::Expired);
    };
    if !mailward_domain::identity::amr_has_mfa(&result.amr)
        && identity::has_totp(store, account.id).await?
    {
        return Ok(Verified::NeedsMfa(account));
    }
    if !oauth::consume_challenge(store, id, version).await? {
        return Err(SignInError::Expired);
    }
    Ok(Verified::Sso(account, result.clone()))
}

/// The second factor of a challenge whose emailed code was right: an authenticator code or a
/// recovery code. Wrong ones count toward the challenge's five and the address's daily budget
/// per client; the right one ends the challenge.
pub async fn second_factor(
    app: &AppState,
    id: Uuid,
    code: &str,
    client: &str,
) -> Result<(Account, Option<SsoResult>), SignInError> {
    let store = app.store.as_ref();
    let Some(current) = oauth::get_challenge(store, id).await? else {
        return Err(SignInError::Expired);
    };
    let mut challenge = current.value.clone();
    if !challenge.verified
        || challenge.failed_attempts >= SIGNIN_MAX_FAILED_ATTEMPTS
        || challenge.expires_at <= app.clock.now()
    {
        return Err(SignInError::Expired);
    }
    let account = match &challenge.sso {
        Some(result) => accounts::get_by_id(store, result.account_id).await?,
        None => accounts::get_by_email(store, &challenge.email)
            .await?
            .map(|a| a.value),
    };
    let Some(account) = account else {
        return Err(SignInError::Expired);
    };
    let outcome = crate::mfa::verify(app, &account, code, client)
        .await
        .map_err(|e| SignInError::Failed(e.message().to_owned()))?;
    match outcome {
        Ok(()) => {
            if !oauth::consume_challenge(store, id, current.version).await? {
                return Err(SignInError::Expired);
            }
            Ok((account, challenge.sso))
        }
        Err(crate::mfa::CodeRefusal::Locked(retry)) => {
            let _ = oauth::consume_challenge(store, id, current.version).await;
            Err(SignInError::Locked(retry))
        }
        Err(crate::mfa::CodeRefusal::Reused) => Err(SignInError::MfaReused),
        Err(crate::mfa::CodeRefusal::Incorrect) => {
            challenge.failed_attempts += 1;
            let left = SIGNIN_MAX_FAILED_ATTEMPTS - challenge.failed_attempts;
            match oauth::save_challenge(store, &challenge, current.version).await {
                Ok(()) if left > 0 => Err(SignInError::MfaIncorrect(left)),
                Ok(()) => Err(SignInError::Expired),
                Err(e) if e.is_conflict() => Err(SignInError::Expired),
                Err(e) => Err(e.into()),
            }
        }
    }
}

fn locked(now: i64, day_end: i64) -> SignInError {
    SignInError::Locked(u32::try_from((day_end - now).max(1)).unwrap_or(u32::MAX))
}

/// Tells the owner of an address that sign-ins to it were blocked for a client (once, when
/// the budget runs out). A mail failure is logged: the block holds regardless.
async fn warn_owner(app: &AppState, email: &str) {
    let message = OutboundEmail {
        attachments: Vec::new(),
        to: email.to_owned(),
        subject: "Sign-in attempts to your Mailward account were blocked".into(),
        text: format!(
            "Someone entered {SIGNIN_FAILURE_BUDGET} wrong sign-in codes for {email} today from one network, so Mailward stopped accepting codes for it from there until the end of the day (UTC). Your own sign-ins from elsewhere still work.\n\nIf this was you, wait until tomorrow. If it was not, nothing was accessed: a sign-in needs the code mailed to you. You need not do anything.\n"
        ),
        ..OutboundEmail::default()
    };
    if let Err(e) = app.mailer.send(message).await {
        tracing::warn!(error = %e, "the sign-in block notice could not be sent");
    }
}
