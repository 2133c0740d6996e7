//! Dashboard sessions: what a sign-in opens in one organization (the HTTP layer signs a token
//! naming it), listed and revoked by their person, stepped up to MFA with an app code. Every
//! request checks the stored session, so a revoked one stops at once.

use mailward_api_types::identity::{MfaStatus, SessionList, SessionView};
use mailward_app::caller::Caller;
use mailward_app::error::ServiceError;
use mailward_app::state::AppState;
use mailward_domain::identity::{AMR_MFA, DashboardSession};
use mailward_store::identity;
use time::Duration;
use uuid::Uuid;

/// Dashboard sessions last eight hours.
pub const SESSION_TTL_SECS: i64 = 8 * 3600;

/// Opens a session of `account` in `org` after a sign-in that used `amr`.
pub async fn open(
    app: &AppState,
    account: Uuid,
    org: Uuid,
    amr: Vec<String>,
    provider: &str,
    user_agent: Option<&str>,
) -> Result<DashboardSession, ServiceError> {
    let now = app.clock.now();
    let session = DashboardSession {
        id: Uuid::new_v4(),
        account_id: account,
        org_id: org,
        amr,
        provider: provider.to_owned(),
        user_agent: user_agent.map(|ua| ua.chars().take(200).collect()),
        created_at: now,
        expires_at: now + Duration::seconds(SESSION_TTL_SECS),
    };
    identity::create_session(app.store.as_ref(), &session).await?;
    Ok(session)
}

/// A stored session of `account` (the web application carries its sign-in methods to the
/// session it opens when the person switches organization).
pub async fn current(
    app: &AppState,
    account: Uuid,
    id: Uuid,
) -> Result<Option<DashboardSession>, ServiceError> {
    Ok(identity::session(app.store.as_ref(), account, id)
        .await?
        .map(|v| v.value))
}

/// `GET /oauth/sessions`: the caller's live sessions in every organization, newest first.
pub async fn list(app: &AppState, caller: &Caller) -> Result<SessionList, ServiceError> {
    let account = caller.require_person("sessions")?;
    let current = caller.session_id();
    let mut data: Vec<SessionView> = identity::sessions(app.store.as_ref(), account)
        .await?
        .into_iter()
        .map(|s| SessionView {
            current: Some(s.id) == current,
            id: s.id,
            organization_id: s.org_id,
            amr: s.amr,
            provider: s.provider,
            user_agent: s.user_agent,
            created_at: s.created_at,
            expires_at: s.expires_at,
        })
        .collect();
    data.sort_by_key(|s| std::cmp::Reverse(s.created_at));
    Ok(SessionList { data })
}

/// `DELETE /oauth/sessions/{id}`: ends one of the caller's sessions.
pub async fn revoke(app: &AppState, caller: &Caller, id: Uuid) -> Result<(), ServiceError> {
    let account = caller.require_person("sessions")?;
    if !identity::delete_session(app.store.as_ref(), account, id).await? {
        return Err(ServiceError::not_found("session"));
    }
    tracing::info!(session.id = %id, "dashboard session revoked by its person");
    Ok(())
}

/// `DELETE /oauth/session`: signs out, ending the session the request's token names. A token
/// that names none (the local CLI's) only expires.
pub async fn sign_out(app: &AppState, caller: &Caller) -> Result<(), ServiceError> {
    let account = caller.require_person("sessions")?;
    if let Some(id) = caller.session_id() {
        identity::delete_session(app.store.as_ref(), account, id).await?;
    }
    Ok(())
}

/// `POST /account/mfa/verify`: an app or recovery code marks the current session as having
/// completed MFA (what an organization requiring MFA asks of an enrolled person whose sign-in
/// did not use it).
pub async fn step_up(
    app: &AppState,
    caller: &Caller,
    code: &str,
    client: &str,
) -> Result<MfaStatus, ServiceError> {
    let account = caller.require_person("second factors")?;
    let Some(id) = caller.session_id() else {
        return Err(ServiceError::new(
            mailward_app::error::ErrorKind::Conflict,
            "session_not_stored",
            "this token names no stored session (a local operator token); sign in with POST /oauth/session instead",
        ));
    };
    crate::mfa::require(app, account, code, client, "code").await?;
    let store = app.store.as_ref();
    for _ in 0..3 {
        let Some(current) = identity::session(store, account, id).await? else {
            return Err(ServiceError::not_found("session"));
        };
        let mut session = current.value;
        if session.mfa() {
            break;
        }
        session.amr.push(AMR_MFA.to_owned());
        match identity::save_session(store, &session, current.version).await {
            Ok(()) => break,
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    crate::mfa::status(app, account, true).await
}

/// After a confirmed enrolment, the session that confirmed it counts as MFA (the first code
/// proved the app), so a member blocked by the organization's requirement goes on at once.
pub async fn mark_mfa(app: &AppState, caller: &Caller) -> Result<(), ServiceError> {
    let (Some(account), Some(id)) = (caller.account_id(), caller.session_id()) else {
        return Ok(());
    };
    let store = app.store.as_ref();
    if let Some(current) = identity::session(store, account, id).await?
        && !current.value.mfa()
    {
        let mut session = current.value;
        session.amr.push(AMR_MFA.to_owned());
        if let Err(e) = identity::save_session(store, &session, current.version).await
            && !e.is_conflict()
        {
            return Err(e.into());
        }
    }
    Ok(())
}
