//! Reading the report mailboxes organizations connected (`mailward_services::mailboxes`):
//! [`coordinate`], on the sweep's schedule, queues a poll of every connection that is due (each
//! due connection's next time is moved first, conditionally, so two schedules never queue it
//! twice); [`poll`], the job, reads what is new since the cursor and imports it for the
//! connection's organization alone (`Delivery::import_for`: a report about a domain another
//! organization watches is unattributed here, never imported for them).
//!
//! Nothing is lost to a crash: a rotated refresh token is stored before the mailbox is read,
//! the cursor after each batch, and a report read twice is a duplicate, never counted twice.
//! The mailbox changes only when the connection moves processed reports.

use crate::ingest::{self, Delivery, Outcome, Status};
use mailward_app::AppState;
use mailward_app::jobs::PollMailbox;
use mailward_domain::mailboxes::{
    MailboxConnection, MailboxCursor, MailboxProvider, MailboxStatus, PollCounts,
    advance_graph_cursor, graph_seen,
};
use mailward_mailbox::imap::{Fetched, Mailbox, OpenError};
use mailward_services::mailboxes::access::{self, ReadError};
use mailward_store::mailboxes as stored;
use uuid::Uuid;

/// Messages read in one poll; more are read by the poll it queues next.
pub const MAX_PER_POLL: usize = 500;

/// Messages fetched at a time (the cursor is saved after each batch).
const BATCH: usize = 25;

/// Queues a poll of every due connection. Returns how many were queued.
pub async fn coordinate(state: &AppState) -> anyhow::Result<usize> {
    let now = state.clock.now();
    let mut queued = 0;
    for current in stored::all(state.store.as_ref()).await? {
        if !current.value.is_due(now) {
            continue;
        }
        let mut next = current.value.clone();
        next.next_poll_at = now + interval(&next);
        match stored::save(state.store.as_ref(), &next, Some(current.version)).await {
            Ok(()) => {}
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
        mailward_services::job::enqueue(
            state,
            &PollMailbox {
                org_id: next.org_id,
                connection_id: next.id,
            },
            0,
        )
        .await?;
        queued += 1;
    }
    Ok(queued)
}

fn interval(c: &MailboxConnection) -> time::Duration {
    time::Duration::minutes(i64::from(c.poll_interval_minutes))
}

/// Applies `change` to the stored connection, reading again on a concurrent write. `false`
/// when the connection is gone.
async fn update(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    change: impl Fn(&mut MailboxConnection),
) -> anyhow::Result<bool> {
    for _ in 0..8 {
        let Some(current) = stored::get(state.store.as_ref(), org, id).await? else {
            return Ok(false);
        };
        let mut next = current.value;
        change(&mut next);
        match stored::save(state.store.as_ref(), &next, Some(current.version)).await {
            Ok(()) => return Ok(true),
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    anyhow::bail!("the mailbox connection {id} kept changing")
}

/// What one read did.
struct Read {
    cursor: MailboxCursor,
    counts: PollCounts,
    more: bool,
}

/// The job: reads the connection's new messages and records how it went.
pub async fn poll(state: &AppState, job: PollMailbox) -> anyhow::Result<()> {
    let PollMailbox {
        org_id: org,
        connection_id: id,
    } = job;
    let Some(current) = stored::get(state.store.as_ref(), org, id).await? else {
        return Ok(());
    };
    let c = current.value;
    if matches!(
        c.status,
        MailboxStatus::Paused | MailboxStatus::CredentialsRefused
    ) {
        return Ok(());
    }
    let outcome = read(state, &c).await;
    let now = state.clock.now();
    let sealed = c.sealed_secrets.clone();
    let more = matches!(&outcome, Ok(r) if r.more);
    let recorded = update(state, org, id, |next| {
        if next.sealed_secrets != sealed && outcome.is_err() {
            // A person replaced the sign-in meanwhile: this failure says nothing of it.
            return;
        }
        next.last_polled_at = Some(now);
        match &outcome {
            Ok(read) => {
                next.cursor = read.cursor.clone();
                next.last_result = Some(read.counts);
                next.totals.add(&read.counts);
                next.error = None;
                if next.status != MailboxStatus::Paused {
                    next.status = MailboxStatus::Active;
                }
                next.next_poll_at = if read.more { now } else { now + interval(next) };
            }
            Err(ReadError::Refused(why)) => {
                next.error = Some(why.clone());
                next.status = MailboxStatus::CredentialsRefused;
            }
            Err(ReadError::Failed(why)) => {
                next.error = Some(why.clone());
                if next.status != MailboxStatus::Paused {
                    next.status = MailboxStatus::Error;
                }
                next.next_poll_at = now + interval(next);
            }
        }
    })
    .await?;
    if let Err(e) = &outcome {
        tracing::info!(org.id = %org, mailbox.id = %id, error = %e, "mailbox poll failed");
    }
    if recorded && more {
        mailward_services::job::enqueue(
            state,
            &PollMailbox {
                org_id: org,
                connection_id: id,
            },
            0,
        )
        .await?;
    }
    Ok(())
}

/// Signs in (keeping a rotated refresh token first) and reads.
async fn read(state: &AppState, c: &MailboxConnection) -> Result<Read, ReadError> {
    let signed = access::sign_in(state, c).await?;
    if let Some(rotated) = signed.rotated {
        let sealed = mailward_services::mailboxes::seal(state, &rotated)
            .map_err(|e| ReadError::Failed(e.to_string()))?;
        let before = c.sealed_secrets.clone();
        let mut kept = false;
        update(state, c.org_id, c.id, |next| {
            if next.sealed_secrets == before {
                next.sealed_secrets = sealed.clone();
            }
        })
        .await
        .map_err(|e| ReadError::Failed(e.to_string()))?;
        if let Some(now) = stored::get(state.store.as_ref(), c.org_id, c.id)
            .await
            .map_err(|e| ReadError::Failed(e.to_string()))?
        {
            kept = now.value.sealed_secrets == sealed;
        }
        if !kept {
            return Err(ReadError::Failed(
                "the connection's sign-in changed during the poll; the next poll uses the new one"
                    .into(),
            ));
        }
    }
    match c.provider {
        MailboxProvider::Imap => read_imap(state, c, signed.secret).await,
        MailboxProvider::MicrosoftGraph => read_graph(state, c, &signed.secret).await,
    }
}

/// Imports one message; says whether it held a report.
async fn import(
    state: &AppState,
    org: Uuid,
    bytes: Vec<u8>,
    counts: &mut PollCounts,
) -> Result<bool, ReadError> {
    let outcomes = ingest::ingest(
        state,
        bytes,
        &Delivery::import_for(org),
        &mailward_reports::Limits::default(),
    )
    .await
    .map_err(|e| ReadError::Failed(format!("importing a report: {e}")))?;
    tally(counts, &outcomes);
    Ok(!outcomes.is_empty() && outcomes.iter().all(|o| o.status != Status::Refused))
}

fn tally(counts: &mut PollCounts, outcomes: &[Outcome]) {
    counts.messages += 1;
    for o in outcomes {
        match o.status {
            Status::Imported => counts.imported += 1,
            Status::Duplicate => counts.duplicate += 1,
            Status::Unattributed => counts.unattributed += 1,
            Status::Refused => counts.refused += 1,
        }
    }
}

/// Saves the cursor reached (and the counts so far are recorded at the end).
async fn save_cursor(
    state: &AppState,
    c: &MailboxConnection,
    cursor: &MailboxCursor,
) -> Result<(), ReadError> {
    update(state, c.org_id, c.id, |next| next.cursor = cursor.clone())
        .await
        .map(|_| ())
        .map_err(|e| ReadError::Failed(e.to_string()))
}

async fn read_imap(
    state: &AppState,
    c: &MailboxConnection,
    secret: String,
) -> Result<Read, ReadError> {
    let target = access::imap_target(state, c).await?;
    let login = access::imap_login(c, secret);
    let failed = |e: anyhow::Error| ReadError::Failed(format!("{e:#}"));
    let mut mailbox = Mailbox::open(&target, &login, c.move_to.is_some())
        .await
        .map_err(|e| match e {
            OpenError::Refused(why) => ReadError::Refused(why),
            OpenError::Failed(e) => failed(e),
        })?;
    if let Some(folder) = &c.move_to {
        mailbox.ensure_folder(folder).await.map_err(failed)?;
    }
    let mut cursor = c.cursor.clone();
    if cursor.uid_validity != mailbox.uid_validity() {
        // A new mailbox, or the server renumbered it: read it all again (duplicates are known).
        cursor.uid_validity = mailbox.uid_validity();
        cursor.last_uid = 0;
    }
    let uids = mailbox.uids_after(cursor.last_uid).await.map_err(failed)?;
    let more = uids.len() > MAX_PER_POLL;
    let mut counts = PollCounts::default();
    for batch in uids[..uids.len().min(MAX_PER_POLL)].chunks(BATCH) {
        let mut processed = Vec::new();
        for (uid, fetched) in mailbox.fetch(batch).await.map_err(failed)? {
            match fetched {
                Fetched::TooLarge(_) => {
                    counts.messages += 1;
                    counts.refused += 1;
                }
                Fetched::Message(bytes) => {
                    if import(state, c.org_id, bytes, &mut counts).await? {
                        processed.push(uid);
                    }
                }
            }
        }
        if let Some(folder) = &c.move_to {
            mailbox.move_to(&processed, folder).await.map_err(failed)?;
        }
        cursor.last_uid = batch.iter().copied().max().unwrap_or(cursor.last_uid);
        save_cursor(state, c, &cursor).await?;
    }
    mailbox.logout().await;
    Ok(Read {
        cursor,
        counts,
        more,
    })
}

async fn read_graph(
    state: &AppState,
    c: &MailboxConnection,
    token: &str,
) -> Result<Read, ReadError> {
    use mailward_mailbox::graph::{Graph, GraphError};
    let graph_error = |e: GraphError| match e {
        GraphError::Refused(why) => ReadError::Refused(why),
        GraphError::Failed(e) => ReadError::Failed(format!("{e:#}")),
    };
    let http = state.outbound_client().map_err(ReadError::Failed)?;
    let graph = Graph::new(&http, &state.config.graph_url, token, &c.user)
        .map_err(|e| ReadError::Failed(format!("{e:#}")))?;
    let mut cursor = c.cursor.clone();
    let boundary = cursor.seen_at_boundary.len();
    let listed = graph
        .messages(
            &c.mailbox,
            cursor.received_after.as_deref(),
            MAX_PER_POLL + boundary,
        )
        .await
        .map_err(graph_error)?;
    let more = listed.len() >= MAX_PER_POLL + boundary;
    let mut counts = PollCounts::default();
    let fresh: Vec<_> = listed
        .iter()
        .filter(|m| !graph_seen(&cursor, &m.received_date_time, &m.id))
        .collect();
    for (n, message) in fresh.iter().enumerate() {
        let bytes = graph.mime(&message.id).await.map_err(graph_error)?;
        let is_report = import(state, c.org_id, bytes, &mut counts).await?;
        if let Some(folder) = c.move_to.as_ref().filter(|_| is_report) {
            graph
                .move_to(&message.id, folder)
                .await
                .map_err(graph_error)?;
        }
        advance_graph_cursor(&mut cursor, &message.received_date_time, &message.id);
        if (n + 1) % BATCH == 0 {
            save_cursor(state, c, &cursor).await?;
        }
    }
    Ok(Read {
        cursor,
        counts,
        more,
    })
}
