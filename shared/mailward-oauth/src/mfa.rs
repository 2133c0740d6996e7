//! The TOTP second factor (RFC 6238: HMAC-SHA-1, six digits, 30-second steps, one step of
//! drift either way) and its recovery codes: enrolment, confirmation, use at sign-in or to
//! step up a session, and removal. A code is accepted once: the factor remembers the last
//! step used and takes no code of that step or an earlier one again. Wrong codes count
//! against the address's daily failure budget per client, shared with the emailed codes.

use mailward_api_types::identity::{MfaStatus, RecoveryCodes, TotpEnrollment};
use mailward_app::error::{ErrorKind, ServiceError};
use mailward_app::secret_box;
use mailward_app::state::AppState;
use mailward_domain::identity::TotpFactor;
use mailward_domain::model::Account;
use mailward_domain::secrets;
use mailward_store::{accounts, identity, oauth};
use serde_json::json;
use totp_rs::{Algorithm, Builder, Secret, Totp};
use uuid::Uuid;

/// Seconds per step.
pub const STEP_SECS: u64 = 30;
/// Digits per code.
pub const DIGITS: u8 = 6;
/// Recovery codes issued at confirmation.
pub const RECOVERY_CODES: usize = 10;
/// Wrong codes (emailed or second-factor) an address takes from one client in a UTC day: see
/// [`crate::signin::SIGNIN_FAILURE_BUDGET`], which is this budget.
pub const FAILURE_BUDGET: i64 = 20;
/// The issuer shown in authenticator apps.
pub const ISSUER: &str = "Mailward";

/// Why a code was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeRefusal {
    /// Wrong, or a recovery code already used.
    Incorrect,
    /// Right, but its step was already used (RFC 6238 §5.2).
    Reused,
    /// The address's daily budget of wrong codes from this client is spent.
    Locked(u32),
}

fn totp(secret: Vec<u8>) -> Result<Totp, ServiceError> {
    Builder::new()
        .with_algorithm(Algorithm::SHA1)
        .with_digits(DIGITS)
        .with_skew(1)
        .with_step_duration(STEP_SECS)
        .with_secret(secret)
        .build()
        .map_err(|e| ServiceError::unavailable(format!("TOTP: {e:?}")))
}

fn open_secret(app: &AppState, factor: &TotpFactor) -> Result<Vec<u8>, ServiceError> {
    let base32 = secret_box::open(&app.config.secret_key, &factor.sealed_secret)
        .map_err(ServiceError::unavailable)?;
    Secret::try_from_base32(base32)
        .map(|s| s.as_ref().to_vec())
        .map_err(|e| ServiceError::unavailable(format!("TOTP secret: {e:?}")))
}

/// The step a six-digit `code` belongs to at `now` (±1 step), if it is right.
pub fn matching_step(secret: &[u8], code: &str, now: i64) -> Option<u64> {
    let totp = totp(secret.to_vec()).ok()?;
    totp.check(code, u64::try_from(now).ok()?)
}

/// The code of a base32 secret at `now` (what an authenticator app shows): for tests and
/// scripts; the service itself only checks codes.
pub fn code_at(base32: &str, now: i64) -> Option<String> {
    let secret = Secret::try_from_base32(base32).ok()?;
    let totp = totp(secret.as_ref().to_vec()).ok()?;
    Some(totp.generate(u64::try_from(now).ok()?).to_string())
}

fn recovery_hash(app: &AppState, account: Uuid, code: &str) -> String {
    let normal: String = code
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    secrets::hmac_sha256_hex(
        &app.config.secret_key,
        format!("recovery:{account}:{normal}").as_bytes(),
    )
}

/// A new recovery code: ten characters of an alphabet without look-alikes, `xxxxx-xxxxx`
/// (about 50 bits).
pub fn new_recovery_code() -> String {
    const ALPHABET: &[u8] = b"abcdefghjkmnpqrstuvwxyz23456789";
    let bytes = secrets::random_bytes(10);
    let chars: String = bytes
        .iter()
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect();
    format!("{}-{}", &chars[..5], &chars[5..])
}

fn refusal(r: CodeRefusal, param: &'static str) -> ServiceError {
    match r {
        CodeRefusal::Incorrect => ServiceError::new(
            ErrorKind::Invalid,
            "mfa_code_incorrect",
            "the code is incorrect",
        )
        .param(param),
        CodeRefusal::Reused => ServiceError::new(
            ErrorKind::Invalid,
            "mfa_code_reused",
            "this code was already used; wait for the app's next code",
        )
        .param(param),
        CodeRefusal::Locked(retry) => ServiceError::new(
            ErrorKind::TooManyRequests,
            "rate_limit_exceeded",
            "too many wrong codes were tried for this account from this network today",
        )
        .details(json!({ "scope": "signin" }))
        .retry_after(u64::from(retry)),
    }
}

async fn account(app: &AppState, id: Uuid) -> Result<Account, ServiceError> {
    accounts::get_by_id(app.store.as_ref(), id)
        .await?
        .ok_or_else(|| ServiceError::not_found("account"))
}

/// Ten new recovery codes replace the factor's (only their HMACs are kept) once an app code
/// (never a recovery code) was right.
async fn renew_codes(
    app: &AppState,
    account: &Account,
    (factor, version): (&mut TotpFactor, u64),
    code: &str,
    client: &str,
) -> Result<RecoveryCodes, ServiceError> {
    let codes: Vec<String> = (0..RECOVERY_CODES).map(|_| new_recovery_code()).collect();
    factor.recovery_hashes = codes
        .iter()
        .map(|c| recovery_hash(app, factor.account_id, c))
        .collect();
    spend(app, account, (factor, version), code, client, false).await?;
    Ok(RecoveryCodes {
        recovery_codes: codes,
    })
}

fn not_enrolled() -> ServiceError {
    ServiceError::new(
        ErrorKind::Conflict,
        "mfa_not_enrolled",
        "no authenticator app is enrolled; start with POST /account/mfa/totp",
    )
}

/// `POST /account/mfa/totp`: a new pending authenticator (replacing a pending one). An
/// account with a confirmed one gets 409 `mfa_already_enrolled`.
pub async fn start(app: &AppState, account_id: Uuid) -> Result<TotpEnrollment, ServiceError> {
    let store = app.store.as_ref();
    let person = account(app, account_id).await?;
    let current = identity::totp(store, account_id).await?;
    if current
        .as_ref()
        .is_some_and(|f| f.value.confirmed_at.is_some())
    {
        return Err(ServiceError::new(
            ErrorKind::Conflict,
            "mfa_already_enrolled",
            "an authenticator app is already enrolled; disable it first (POST /account/mfa/totp/disable)",
        ));
    }
    let raw = secrets::random_bytes(20);
    let base32 = Secret::from(raw).to_base32();
    let factor = TotpFactor {
        account_id,
        sealed_secret: secret_box::seal(&app.config.secret_key, &base32)
            .map_err(ServiceError::unavailable)?,
        confirmed_at: None,
        last_used_step: 0,
        recovery_hashes: Vec::new(),
        created_at: app.clock.now(),
    };
    match identity::save_totp(store, &factor, current.map(|c| c.version)).await {
        Ok(()) => {}
        Err(e) if e.is_conflict() => {
            return Err(ServiceError::conflict(
                "the authenticator changed meanwhile; retry",
            ));
        }
        Err(e) => return Err(e.into()),
    }
    let uri = otpauth_uri(&base32, &person.email);
    Ok(TotpEnrollment {
        secret: base32,
        qr_svg: qr_svg(&uri)?,
        otpauth_uri: uri,
        algorithm: "SHA1".into(),
        digits: u32::from(DIGITS),
        period: STEP_SECS as u32,
    })
}

/// The `otpauth://` URI of Google Authenticator's key-URI format, which every app reads.
pub fn otpauth_uri(base32: &str, email: &str) -> String {
    let label = url::form_urlencoded::byte_serialize(format!("{ISSUER}:{email}").as_bytes())
        .collect::<String>()
        .replace('+', "%20");
    format!(
        "otpauth://totp/{label}?secret={base32}&issuer={ISSUER}&algorithm=SHA1&digits={DIGITS}&period={STEP_SECS}"
    )
}

/// The URI as an SVG QR code (error correction M).
pub fn qr_svg(uri: &str) -> Result<String, ServiceError> {
    let code = qrcode::QrCode::with_error_correction_level(uri.as_bytes(), qrcode::EcLevel::M)
        .map_err(|e| ServiceError::unavailable(format!("QR code: {e}")))?;
    Ok(code
        .render::<qrcode::render::svg::Color<'_>>()
        .min_dimensions(200, 200)
        .quiet_zone(true)
        .build())
}

/// Checks a code against the budget, then the factor: a TOTP code (its step must be newer
/// than the last used) or, when `recovery` allows, an unused recovery code (spent). The
/// factor read at `version` is saved with what was used; `Ok(false)` when a concurrent request
/// used it first (the caller treats that as reuse).
async fn use_code(
    app: &AppState,
    account: &Account,
    factor: &mut TotpFactor,
    version: u64,
    code: &str,
    client: &str,
    recovery: bool,
) -> Result<Result<(), CodeRefusal>, ServiceError> {
    let store = app.store.as_ref();
    let now = app.clock.unix();
    let (failures, day_end) = oauth::signin_failures(store, &account.email, client, now, 0).await?;
    if failures >= FAILURE_BUDGET {
        return Ok(Err(locked(now, day_end)));
    }
    let code = code.trim();
    let secret = open_secret(app, factor)?;
    let outcome = if code.len() == usize::from(DIGITS) && code.bytes().all(|b| b.is_ascii_digit()) {
        match matching_step(&secret, code, now) {
            Some(step) if step <= factor.last_used_step => Err(CodeRefusal::Reused),
            Some(step) => {
                factor.last_used_step = step;
                Ok(())
            }
            None => Err(CodeRefusal::Incorrect),
        }
    } else if recovery {
        let hash = recovery_hash(app, account.id, code);
        match factor
            .recovery_hashes
            .iter()
            .position(|h| secrets::constant_time_eq(h.as_bytes(), hash.as_bytes()))
        {
            Some(at) => {
                factor.recovery_hashes.remove(at);
                Ok(())
            }
            None => Err(CodeRefusal::Incorrect),
        }
    } else {
        Err(CodeRefusal::Incorrect)
    };
    match outcome {
        Ok(()) => match identity::save_totp(store, factor, Some(version)).await {
            Ok(()) => Ok(Ok(())),
            Err(e) if e.is_conflict() => Ok(Err(CodeRefusal::Reused)),
            Err(e) => Err(e.into()),
        },
        Err(CodeRefusal::Incorrect) => {
            let (failures, _) =
                oauth::signin_failures(store, &account.email, client, now, 1).await?;
            if failures >= FAILURE_BUDGET {
                return Ok(Err(locked(now, day_end)));
            }
            Ok(Err(CodeRefusal::Incorrect))
        }
        Err(other) => Ok(Err(other)),
    }
}

/// [`use_code`] for the routes of the signed-in person (`param` code).
async fn spend(
    app: &AppState,
    account: &Account,
    (factor, version): (&mut TotpFactor, u64),
    code: &str,
    client: &str,
    recovery: bool,
) -> Result<(), ServiceError> {
    use_code(app, account, factor, version, code, client, recovery)
        .await?
        .map_err(|r| refusal(r, "code"))
}

fn locked(now: i64, day_end: i64) -> CodeRefusal {
    CodeRefusal::Locked(u32::try_from((day_end - now).max(1)).unwrap_or(u32::MAX))
}

/// The second factor of a sign-in or a step-up: a TOTP code or a recovery code of the
/// account's confirmed authenticator.
pub async fn verify(
    app: &AppState,
    account: &Account,
    code: &str,
    client: &str,
) -> Result<Result<(), CodeRefusal>, ServiceError> {
    let Some(current) = identity::totp(app.store.as_ref(), account.id).await? else {
        return Err(not_enrolled());
    };
    let mut factor = current.value;
    if factor.confirmed_at.is_none() {
        return Err(not_enrolled());
    }
    use_code(
        app,
        account,
        &mut factor,
        current.version,
        code,
        client,
        true,
    )
    .await
}

/// [`verify`] as a service answer (`param` names the field).
pub async fn require(
    app: &AppState,
    account_id: Uuid,
    code: &str,
    client: &str,
    param: &'static str,
) -> Result<(), ServiceError> {
    let person = account(app, account_id).await?;
    verify(app, &person, code, client)
        .await?
        .map_err(|r| refusal(r, param))
}

/// `POST /account/mfa/totp/confirm`: the first app code confirms the pending authenticator;
/// the answer carries the ten recovery codes, shown once.
pub async fn confirm(
    app: &AppState,
    account_id: Uuid,
    code: &str,
    client: &str,
) -> Result<RecoveryCodes, ServiceError> {
    let store = app.store.as_ref();
    let person = account(app, account_id).await?;
    let Some(current) = identity::totp(store, account_id).await? else {
        return Err(ServiceError::new(
            ErrorKind::Conflict,
            "mfa_enrollment_not_started",
            "start the enrolment first with POST /account/mfa/totp",
        ));
    };
    let mut factor = current.value;
    if factor.confirmed_at.is_some() {
        return Err(ServiceError::new(
            ErrorKind::Conflict,
            "mfa_already_enrolled",
            "the authenticator app is already confirmed",
        ));
    }
    factor.confirmed_at = Some(app.clock.now());
    let codes = renew_codes(app, &person, (&mut factor, current.version), code, client).await?;
    tracing::info!(account.id = %account_id, "TOTP authenticator enrolled");
    Ok(codes)
}

/// `POST /account/mfa/totp/disable`: a current app code (or a recovery code) removes the
/// authenticator and its recovery codes.
pub async fn disable(
    app: &AppState,
    account_id: Uuid,
    code: &str,
    client: &str,
) -> Result<(), ServiceError> {
    let store = app.store.as_ref();
    let person = account(app, account_id).await?;
    let Some(current) = identity::totp(store, account_id).await? else {
        return Err(not_enrolled());
    };
    let mut factor = current.value;
    if factor.confirmed_at.is_none() {
        // A pending enrolment is dropped without a code: it never protected anything.
        identity::delete_totp(store, account_id, current.version).await?;
        return Ok(());
    }
    spend(
        app,
        &person,
        (&mut factor, current.version),
        code,
        client,
        true,
    )
    .await?;
    identity::delete_totp(store, account_id, current.version + 1).await?;
    tracing::info!(account.id = %account_id, "TOTP authenticator disabled");
    Ok(())
}

/// `POST /account/mfa/recovery-codes`: a current app code replaces every recovery code.
pub async fn regenerate(
    app: &AppState,
    account_id: Uuid,
    code: &str,
    client: &str,
) -> Result<RecoveryCodes, ServiceError> {
    let store = app.store.as_ref();
    let person = account(app, account_id).await?;
    let Some(current) = identity::totp(store, account_id).await? else {
        return Err(not_enrolled());
    };
    let mut factor = current.value;
    if factor.confirmed_at.is_none() {
        return Err(not_enrolled());
    }
    renew_codes(app, &person, (&mut factor, current.version), code, client).await
}

/// Whether the account has a confirmed authenticator app.
pub async fn enrolled(app: &AppState, account: Uuid) -> Result<bool, ServiceError> {
    Ok(identity::has_totp(app.store.as_ref(), account).await?)
}

/// `GET /account/mfa`.
pub async fn status(
    app: &AppState,
    account_id: Uuid,
    session_mfa: bool,
) -> Result<MfaStatus, ServiceError> {
    let factor = identity::totp(app.store.as_ref(), account_id)
        .await?
        .map(|f| f.value);
    Ok(MfaStatus {
        totp_enabled: factor.as_ref().is_some_and(|f| f.confirmed_at.is_some()),
        totp_pending: factor.as_ref().is_some_and(|f| f.confirmed_at.is_none()),
        confirmed_at: factor.as_ref().and_then(|f| f.confirmed_at),
        recovery_codes_remaining: factor
            .as_ref()
            .filter(|f| f.confirmed_at.is_some())
            .map_or(0, |f| f.recovery_hashes.len() as u32),
        session_mfa,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_6238_sha1_vectors_and_one_step_of_drift() {
        // RFC 6238 Appendix B, SHA-1 seed, cut to six digits.
        let seed = b"12345678901234567890".to_vec();
        let totp = totp(seed.clone()).unwrap();
        for (time, code) in [
            (59u64, "287082"),
            (1_111_111_109, "081804"),
            (1_111_111_111, "050471"),
            (1_234_567_890, "005924"),
            (2_000_000_000, "279037"),
        ] {
            assert_eq!(totp.generate(time).to_string(), code, "at {time}");
        }
        assert_eq!(matching_step(&seed, "287082", 59), Some(1));
        assert_eq!(matching_step(&seed, "287082", 59 + 30), Some(1));
        assert_eq!(matching_step(&seed, "287082", 59 + 60), None);
        assert_eq!(matching_step(&seed, "287083", 59), None);
    }

    #[test]
    fn recovery_codes_are_distinct_and_readable() {
        let codes: std::collections::HashSet<String> =
            (0..100).map(|_| new_recovery_code()).collect();
        assert_eq!(codes.len(), 100);
        assert!(
            codes
                .iter()
                .all(|c| c.len() == 11 && c.as_bytes()[5] == b'-')
        );
    }

    #[test]
    fn the_uri_names_issuer_account_and_parameters() {
        let uri = otpauth_uri("JBSWY3DPEHPK3PXP", "ann@example.com");
        assert_eq!(
            uri,
            "otpauth://totp/Mailward%3Aann%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Mailward&algorithm=SHA1&digits=6&period=30"
        );
        assert!(qr_svg(&uri).unwrap().starts_with("<?xml"));
    }
}
