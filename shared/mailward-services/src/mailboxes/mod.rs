//! Report mailbox connections (an extension beyond SPEC §5): an organization connects its own
//! report mailbox (Microsoft 365, Google Workspace, any IMAP server) and Mailward reads it on
//! a schedule, importing its reports for that organization alone (`mailward_workers::mailboxes`).
//! The password, client secret and refresh token are sealed with the service key and never
//! answered back. Administrators without a group limit connect, change and remove (the
//! reports of every domain of the organization pass through); every member reads; editors
//! and administrators not limited to groups ask for a poll now.

pub mod access;
mod input;

use crate::activity::{self, Change};
use crate::caller::Caller;
use crate::error::{ErrorKind, ServiceError};
use crate::secret_box;
use crate::state::AppState;
use mailward_api_types::mailboxes as wire;
use mailward_app::jobs::PollMailbox;
use mailward_domain::mailboxes::{
    DEFAULT_POLL_INTERVAL_MINUTES, MailboxConnection, MailboxCursor, MailboxProvider,
    MailboxSecrets, MailboxStatus, PollCounts,
};
use mailward_store::mailboxes as stored;
use time::OffsetDateTime;
use uuid::Uuid;

/// Connections one organization may have.
pub const MAX_CONNECTIONS: usize = 10;

fn at(t: OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

fn counts(c: &PollCounts) -> wire::PollCountsView {
    wire::PollCountsView {
        messages: c.messages,
        imported: c.imported,
        duplicate: c.duplicate,
        unattributed: c.unattributed,
        refused: c.refused,
    }
}

fn status_word(s: MailboxStatus) -> &'static str {
    match s {
        MailboxStatus::Pending => "pending",
        MailboxStatus::Active => "active",
        MailboxStatus::CredentialsRefused => "credentials_refused",
        MailboxStatus::Error => "error",
        MailboxStatus::Paused => "paused",
    }
}

fn view(c: &MailboxConnection) -> wire::MailboxConnection {
    let polled = !matches!(
        c.status,
        MailboxStatus::Paused | MailboxStatus::CredentialsRefused
    );
    wire::MailboxConnection {
        id: c.id,
        object: "mailbox_connection".to_owned(),
        name: c.name.clone(),
        provider: c.provider.as_str().to_owned(),
        host: c.host.clone(),
        port: c.port,
        user: c.user.clone(),
        mailbox: c.mailbox.clone(),
        move_to: c.move_to.clone(),
        auth: wire::MailboxAuthView {
            kind: match c.auth.kind {
                mailward_domain::mailboxes::MailboxAuthKind::Password => "password",
                mailward_domain::mailboxes::MailboxAuthKind::Oauth2 => "oauth2",
            }
            .to_owned(),
            mechanism: c.auth.mechanism.map(|m| {
                match m {
                    mailward_domain::mailboxes::SaslMechanism::Xoauth2 => "xoauth2",
                    mailward_domain::mailboxes::SaslMechanism::Oauthbearer => "oauthbearer",
                }
                .to_owned()
            }),
            token_url: c.auth.token_url.clone(),
            client_id: c.auth.client_id.clone(),
            scope: c.auth.scope.clone(),
            has_client_secret: c.auth.has_client_secret,
        },
        poll_interval_minutes: c.poll_interval_minutes,
        status: status_word(c.status).to_owned(),
        error: c.error.clone(),
        last_polled_at: c.last_polled_at.map(at),
        next_poll_at: polled.then(|| at(c.next_poll_at)),
        last_result: c.last_result.as_ref().map(counts),
        totals: counts(&c.totals),
        created_at: at(c.created_at),
        updated_at: at(c.updated_at),
    }
}

/// Seals a connection's secrets with the service key.
pub fn seal(app: &AppState, secrets: &MailboxSecrets) -> Result<String, ServiceError> {
    secret_box::seal(&app.config.secret_key, &serde_json::to_string(secrets)?)
        .map_err(ServiceError::internal)
}

/// Opens a connection's sealed secrets.
pub fn unseal(app: &AppState, sealed: &str) -> Result<MailboxSecrets, ServiceError> {
    Ok(serde_json::from_str(
        &secret_box::open(&app.config.secret_key, sealed).map_err(ServiceError::internal)?,
    )?)
}

async fn queue_poll(app: &AppState, c: &MailboxConnection) -> Result<(), ServiceError> {
    crate::job::enqueue(
        app,
        &PollMailbox {
            org_id: c.org_id,
            connection_id: c.id,
        },
        0,
    )
    .await
    .map_err(ServiceError::unavailable)
}

/// The IMAP server and port of a new connection; none for Graph.
fn place(
    app: &AppState,
    provider: MailboxProvider,
    host: Option<&str>,
    port: Option<u16>,
) -> Result<(Option<String>, Option<u16>), ServiceError> {
    match provider {
        MailboxProvider::Imap => {
            let host =
                host.ok_or_else(|| ServiceError::invalid("host", "host is required for imap"))?;
            if port == Some(0) {
                return Err(ServiceError::invalid("port", "port must be 1 to 65535"));
            }
            Ok((
                Some(input::host(&app.config, host)?),
                Some(port.unwrap_or(993)),
            ))
        }
        MailboxProvider::MicrosoftGraph if host.is_some() || port.is_some() => {
            Err(ServiceError::invalid(
                "host",
                "host and port are for imap; Graph is reached at its own address",
            ))
        }
        MailboxProvider::MicrosoftGraph => Ok((None, None)),
    }
}

/// `POST /mailbox-connections`: stores the connection and queues its first read at once (its
/// status says, seconds later, whether the server let Mailward in).
pub async fn create(
    app: &AppState,
    caller: &Caller,
    body: wire::CreateMailboxConnection,
) -> Result<wire::MailboxConnection, ServiceError> {
    caller.require_org_admin()?;
    let name = input::label("name", &body.name, 100)?;
    let provider = input::provider(&body.provider)?;
    let (host, port) = place(app, provider, body.host.as_deref(), body.port)?;
    let user = input::label("user", &body.user, 320)?;
    let default_folder = match provider {
        MailboxProvider::Imap => "INBOX",
        MailboxProvider::MicrosoftGraph => "inbox",
    };
    let mailbox = input::folder("mailbox", body.mailbox.as_deref().unwrap_or(default_folder))?;
    let move_to = body
        .move_to
        .as_deref()
        .map(|f| input::folder("move_to", f))
        .transpose()?;
    let poll_interval_minutes = input::interval(
        body.poll_interval_minutes
            .unwrap_or(DEFAULT_POLL_INTERVAL_MINUTES),
    )?;
    let (auth, secrets) = input::auth(&app.config, provider, body.auth)?;
    if stored::list(app.store.as_ref(), caller.org_id).await?.len() >= MAX_CONNECTIONS {
        return Err(ServiceError::new(
            ErrorKind::Unprocessable,
            "mailbox_connection_limit",
            format!("an organization has at most {MAX_CONNECTIONS} mailbox connections"),
        ));
    }
    let now = app.clock.now();
    let connection = MailboxConnection {
        id: Uuid::new_v4(),
        org_id: caller.org_id,
        name,
        provider,
        host,
        port,
        user,
        mailbox,
        move_to,
        auth,
        sealed_secrets: seal(app, &secrets)?,
        poll_interval_minutes,
        status: MailboxStatus::Pending,
        error: None,
        cursor: MailboxCursor::default(),
        last_result: None,
        totals: PollCounts::default(),
        last_polled_at: None,
        next_poll_at: now,
        created_by: caller.actor().1,
        created_at: now,
        updated_at: now,
    };
    let mut ops = vec![stored::put_op(&connection, None)?];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "mailbox_connection.created",
            "mailbox_connection",
            Some(connection.id),
            format!("connected the report mailbox {}", connection.name),
        ),
    )?);
    app.store.transact(ops).await?;
    queue_poll(app, &connection).await?;
    Ok(view(&connection))
}

/// `GET /mailbox-connections`.
pub async fn list(
    app: &AppState,
    caller: &Caller,
) -> Result<wire::MailboxConnectionList, ServiceError> {
    Ok(wire::MailboxConnectionList {
        data: stored::list(app.store.as_ref(), caller.org_id)
            .await?
            .iter()
            .map(view)
            .collect(),
    })
}

async fn load(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<mailward_store::Versioned<MailboxConnection>, ServiceError> {
    stored::get(app.store.as_ref(), caller.org_id, id)
        .await?
        .ok_or_else(|| ServiceError::not_found("mailbox connection"))
}

/// `GET /mailbox-connections/{id}`.
pub async fn get(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<wire::MailboxConnection, ServiceError> {
    Ok(view(&load(app, caller, id).await?.value))
}

/// Applies an update's fields to `next`; says whether the connection must be read anew.
fn apply(
    app: &AppState,
    next: &mut MailboxConnection,
    body: wire::UpdateMailboxConnection,
) -> Result<bool, ServiceError> {
    let mut reread = false;
    if let Some(name) = body.name {
        next.name = input::label("name", &name, 100)?;
    }
    if body.host.is_some() || body.port.is_some() {
        if next.provider != MailboxProvider::Imap {
            return Err(ServiceError::invalid("host", "host and port are for imap"));
        }
        if let Some(host) = body.host {
            next.host = Some(input::host(&app.config, &host)?);
        }
        if let Some(port) = body.port {
            if port == 0 {
                return Err(ServiceError::invalid("port", "port must be 1 to 65535"));
            }
            next.port = Some(port);
        }
        next.cursor = MailboxCursor::default();
        reread = true;
    }
    if let Some(user) = body.user {
        next.user = input::label("user", &user, 320)?;
        next.cursor = MailboxCursor::default();
        reread = true;
    }
    if let Some(mailbox) = body.mailbox {
        next.mailbox = input::folder("mailbox", &mailbox)?;
        next.cursor = MailboxCursor::default();
        reread = true;
    }
    if let Some(move_to) = body.move_to {
        next.move_to = match move_to.trim() {
            "" => None,
            folder => Some(input::folder("move_to", folder)?),
        };
    }
    if let Some(minutes) = body.poll_interval_minutes {
        next.poll_interval_minutes = input::interval(minutes)?;
    }
    if let Some(auth) = body.auth {
        let (auth, secrets) = input::auth(&app.config, next.provider, auth)?;
        next.auth = auth;
        next.sealed_secrets = seal(app, &secrets)?;
        if next.status == MailboxStatus::CredentialsRefused {
            next.status = MailboxStatus::Pending;
            next.error = None;
        }
        reread = true;
    }
    match body.paused {
        Some(true) => next.status = MailboxStatus::Paused,
        Some(false) if next.status == MailboxStatus::Paused => {
            next.status = MailboxStatus::Pending;
            reread = true;
        }
        _ => {}
    }
    Ok(reread && next.status != MailboxStatus::Paused)
}

/// `POST /mailbox-connections/{id}`: changes the fields given. A new server, login, mailbox
/// or sign-in is read at once, from the start (reports already imported come back as
/// duplicates, never twice).
pub async fn update(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    body: wire::UpdateMailboxConnection,
) -> Result<wire::MailboxConnection, ServiceError> {
    caller.require_org_admin()?;
    let current = load(app, caller, id).await?;
    let mut next = current.value.clone();
    let reread = apply(app, &mut next, body)?;
    let now = app.clock.now();
    next.updated_at = now;
    if reread {
        next.next_poll_at = now;
    }
    let mut ops = vec![stored::put_op(&next, Some(current.version))?];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "mailbox_connection.updated",
            "mailbox_connection",
            Some(id),
            format!("changed the report mailbox {}", next.name),
        ),
    )?);
    app.store.transact(ops).await.map_err(|e| {
        if e.is_conflict() {
            ServiceError::conflict("the connection changed meanwhile; read it and try again")
        } else {
            e.into()
        }
    })?;
    if reread {
        queue_poll(app, &next).await?;
    }
    Ok(view(&next))
}

/// `DELETE /mailbox-connections/{id}`: its credentials go with it; reports imported stay.
pub async fn delete(app: &AppState, caller: &Caller, id: Uuid) -> Result<(), ServiceError> {
    caller.require_org_admin()?;
    let current = load(app, caller, id).await?;
    let mut ops = vec![stored::delete_op(caller.org_id, id, current.version)];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "mailbox_connection.deleted",
            "mailbox_connection",
            Some(id),
            format!("removed the report mailbox {}", current.value.name),
        ),
    )?);
    app.store.transact(ops).await?;
    Ok(())
}

/// `POST /mailbox-connections/{id}/poll`: queues a read now (a paused connection, or one whose
/// credentials were refused, is refused: resume it, or replace its `auth`, first).
pub async fn poll_now(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<wire::MailboxConnection, ServiceError> {
    caller.require_write()?;
    caller.require_unlimited()?;
    let current = load(app, caller, id).await?.value;
    if matches!(
        current.status,
        MailboxStatus::Paused | MailboxStatus::CredentialsRefused
    ) {
        return Err(ServiceError::new(
            ErrorKind::Unprocessable,
            "mailbox_not_polled",
            format!(
                "the connection is {}: resume it, or replace its auth, first",
                status_word(current.status)
            ),
        ));
    }
    queue_poll(app, &current).await?;
    Ok(view(&current))
}
