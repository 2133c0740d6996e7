//! The local stack's report mailbox: a small SMTP listener (mailin's state machine over a tokio
//! loop) that accepts mail only for report addresses (`rua+<domain id>@<report domain>`), caps
//! message size and line length, and hands each message with its envelope recipients (which
//! attribute its reports) to report ingestion before answering, so a `250` means the
//! message is stored (its raw copy kept, its reports imported) and a store failure answers
//! `451` for the sender to retry. On AWS, SES receives instead (see the reports issue).

use mailin::{Action, Handler, Response, SessionBuilder};
use mailward_services::AppState;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Longest command or data line accepted (RFC 5321 allows 1000 octets; some senders exceed it).
const MAX_LINE: usize = 8 * 1024;
/// Longest a client may stay idle between lines.
const IDLE: std::time::Duration = std::time::Duration::from_secs(60);

/// Sessions served at once; more are answered `421` and closed (anyone may connect).
pub const DEFAULT_MAX_SESSIONS: usize = 64;
/// Messages one session may send; the next `MAIL` is answered `421` and the session closed.
pub const DEFAULT_MAX_MESSAGES: usize = 50;
/// Longest a session may last, however busy (a slow sender cannot hold a slot for ever).
pub const DEFAULT_MAX_SESSION: std::time::Duration = std::time::Duration::from_secs(600);

/// What the listener needs to know.
#[derive(Clone)]
pub struct MailboxSettings {
    /// Recipients must be `rua+<domain id>@<report_domain>`, its failure-report twin
    /// `ruf+<domain id>@…` (or `postmaster`).
    pub report_domain: String,
    /// Largest message accepted, in bytes.
    pub max_message_bytes: usize,
    /// Sessions served at once.
    pub max_sessions: usize,
    /// Messages per session.
    pub max_messages: usize,
    /// Longest session.
    pub max_session: std::time::Duration,
}

#[derive(Default)]
struct Inbox {
    current: Vec<u8>,
    /// The transaction's accepted recipients.
    recipients: Vec<String>,
    too_large: bool,
    /// The message just ended over the cap (answered 552 by the connection loop).
    refused: bool,
    finished: Option<(Vec<u8>, Vec<String>)>,
}

struct ReportHandler {
    settings: MailboxSettings,
    inbox: Arc<Mutex<Inbox>>,
}

impl Handler for ReportHandler {
    fn rcpt(&mut self, to: &str) -> Response {
        // `postmaster` is accepted as RFC 5321 §4.5.1 requires; it names no domain, so what
        // it receives is attributed to no one (and kept by no one).
        let address = to.trim().trim_start_matches('<').trim_end_matches('>');
        let postmaster = address.rsplit_once('@').is_some_and(|(local, host)| {
            local.eq_ignore_ascii_case("postmaster")
                && host
                    .trim_end_matches('.')
                    .eq_ignore_ascii_case(&self.settings.report_domain)
        }) || address.eq_ignore_ascii_case("postmaster");
        if postmaster
            || mailward_domain::domain::report_address_domain(to, &self.settings.report_domain)
                .is_some()
        {
            mailin::response::OK
        } else {
            mailin::response::NO_MAILBOX
        }
    }

    fn data_start(&mut self, _domain: &str, _from: &str, _is8bit: bool, to: &[String]) -> Response {
        if let Ok(mut inbox) = self.inbox.lock() {
            *inbox = Inbox {
                recipients: to.to_vec(),
                ..Inbox::default()
            };
        }
        mailin::response::OK
    }

    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if let Ok(mut inbox) = self.inbox.lock()
            && !inbox.too_large
        {
            if inbox.current.len() + buf.len() > self.settings.max_message_bytes {
                inbox.too_large = true;
                inbox.current = Vec::new();
            } else {
                inbox.current.extend_from_slice(buf);
            }
        }
        Ok(())
    }

    fn data_end(&mut self) -> Response {
        let Ok(mut inbox) = self.inbox.lock() else {
            return mailin::response::INTERNAL_ERROR;
        };
        if inbox.too_large {
            // mailin keeps its data state after an error reply, so the transaction ends
            // normally here and the connection loop answers 552 in its place.
            inbox.too_large = false;
            inbox.refused = true;
            return mailin::response::OK;
        }
        let message = std::mem::take(&mut inbox.current);
        inbox.finished = Some((message, std::mem::take(&mut inbox.recipients)));
        mailin::response::OK
    }
}

async fn write(
    stream: &mut (impl tokio::io::AsyncWrite + Unpin),
    response: &Response,
) -> std::io::Result<()> {
    stream.write_all(&response.buffer()?).await
}

/// Serves one connection to its end.
async fn session(
    stream: TcpStream,
    peer: IpAddr,
    state: AppState,
    settings: MailboxSettings,
) -> std::io::Result<()> {
    let inbox = Arc::new(Mutex::new(Inbox::default()));
    let handler = ReportHandler {
        settings: settings.clone(),
        inbox: inbox.clone(),
    };
    let mut session = SessionBuilder::new(settings.report_domain.clone()).build(peer, handler);
    let (read, mut write_half) = stream.into_split();
    let mut reader = BufReader::new(read);
    write(&mut write_half, &session.greeting()).await?;
    let mut line = Vec::with_capacity(1024);
    let started = std::time::Instant::now();
    let mut messages = 0usize;
    loop {
        line.clear();
        if started.elapsed() > settings.max_session {
            let bye = Response::custom(421, "Session too long, closing".into());
            write(&mut write_half, &bye).await?;
            return Ok(());
        }
        let n = match tokio::time::timeout(
            IDLE,
            (&mut reader)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut line),
        )
        .await
        {
            Ok(result) => result?,
            Err(_) => {
                write(
                    &mut write_half,
                    &Response::custom(421, "Idle too long, closing".into()),
                )
                .await?;
                return Ok(());
            }
        };
        if n == 0 {
            return Ok(());
        }
        if line.len() > MAX_LINE {
            write(
                &mut write_half,
                &Response::custom(500, "Line too long".into()),
            )
            .await?;
            return Ok(());
        }
        let command = line.get(..4).map(|c| c.to_ascii_uppercase());
        if messages >= settings.max_messages && command.as_deref() == Some(b"MAIL".as_slice()) {
            let bye = Response::custom(421, "Too many messages in one session, closing".into());
            write(&mut write_half, &bye).await?;
            return Ok(());
        }
        let mut response = session.process(&line);
        let (finished, refused) = inbox
            .lock()
            .map(|mut i| (i.finished.take(), std::mem::take(&mut i.refused)))
            .unwrap_or_default();
        if refused {
            response = mailin::response::NO_STORAGE;
        }
        if let Some((message, recipients)) = finished {
            messages += 1;
            let limits = mailward_reports::Limits::default();
            let delivery = mailward_workers::ingest::Delivery::mail_to(recipients);
            match mailward_workers::ingest::ingest(&state, message, &delivery, &limits).await {
                Ok(outcomes) => {
                    for o in &outcomes {
                        tracing::info!(status = ?o.status, report.id = ?o.report_id, domain = ?o.policy_domain, reason = ?o.reason, "report received by SMTP");
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "a received report could not be stored; asking the sender to retry");
                    response = mailin::response::INTERNAL_ERROR;
                }
            }
        }
        match response.action {
            Action::NoReply => {}
            Action::Close => {
                write(&mut write_half, &response).await?;
                return Ok(());
            }
            _ => write(&mut write_half, &response).await?,
        }
    }
}

/// Accepts connections until `stop` turns true.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    settings: MailboxSettings,
    mut stop: watch::Receiver<bool>,
) {
    let slots = Arc::new(tokio::sync::Semaphore::new(settings.max_sessions));
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((mut stream, peer)) => {
                    let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                        tokio::spawn(async move {
                            let busy = Response::custom(421, "Too many connections, try again later".into());
                            let _ = write(&mut stream, &busy).await;
                        });
                        continue;
                    };
                    let (state, settings) = (state.clone(), settings.clone());
                    tokio::spawn(async move {
                        let _slot = slot;
                        if let Err(e) = session(stream, peer.ip(), state, settings).await {
                            tracing::debug!(error = %e, "SMTP session ended with an error");
                        }
                    });
                }
                Err(e) => tracing::warn!(error = %e, "SMTP accept failed"),
            },
            _ = stop.wait_for(|s| *s) => return,
        }
    }
}
