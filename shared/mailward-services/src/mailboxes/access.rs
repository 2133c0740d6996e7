//! Signing in to a connected mailbox, for the poll (`mailward_workers::mailboxes`): the
//! password, or an access token from the refresh-token grant (keeping a rotated refresh
//! token), and the IMAP server's addresses, resolved through the service's own resolver and
//! kept only where outbound connections may go (the organization next door could name an
//! internal address).

use super::unseal;
use crate::state::AppState;
use mailward_domain::dns::{RecordData, RecordType};
use mailward_domain::mailboxes::{
    MailboxAuthKind, MailboxConnection, MailboxSecrets, SaslMechanism,
};
use mailward_mailbox::imap::{Login, Target};
use mailward_mailbox::oauth::{self, Grant, RefreshError};
use std::net::{IpAddr, SocketAddr};

/// Why a mailbox could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The provider refused the credentials: the person must replace them.
    #[error("{0}")]
    Refused(String),
    /// Anything else: the next poll tries again.
    #[error("{0}")]
    Failed(String),
}

/// A sign-in: the password or access token, and the secrets to keep when the provider
/// rotated the refresh token.
pub struct SignedIn {
    /// The password or the access token.
    pub secret: String,
    /// The secrets with the new refresh token, to store before anything else.
    pub rotated: Option<MailboxSecrets>,
}

/// Signs in: the password as kept, or a fresh access token.
pub async fn sign_in(app: &AppState, c: &MailboxConnection) -> Result<SignedIn, ReadError> {
    let secrets = unseal(app, &c.sealed_secrets).map_err(|e| ReadError::Failed(e.to_string()))?;
    match c.auth.kind {
        MailboxAuthKind::Password => Ok(SignedIn {
            secret: secrets.password.clone().unwrap_or_default(),
            rotated: None,
        }),
        MailboxAuthKind::Oauth2 => {
            let http = app.outbound_client().map_err(ReadError::Failed)?;
            let refresh_token = secrets.refresh_token.clone().unwrap_or_default();
            let grant = Grant {
                token_url: c.auth.token_url.as_deref().unwrap_or_default(),
                client_id: c.auth.client_id.as_deref().unwrap_or_default(),
                client_secret: secrets.client_secret.as_deref(),
                refresh_token: &refresh_token,
                scope: c.auth.scope.as_deref(),
            };
            let tokens = oauth::refresh(&http, grant).await.map_err(|e| match e {
                RefreshError::Refused { .. } => ReadError::Refused(e.to_string()),
                RefreshError::Unavailable(_) => ReadError::Failed(e.to_string()),
            })?;
            let rotated = tokens
                .refresh_token
                .filter(|t| *t != refresh_token)
                .map(|t| MailboxSecrets {
                    refresh_token: Some(t),
                    ..secrets
                });
            Ok(SignedIn {
                secret: tokens.access_token,
                rotated,
            })
        }
    }
}

/// The IMAP login with `secret`.
pub fn imap_login(c: &MailboxConnection, secret: String) -> Login {
    match (c.auth.kind, c.auth.mechanism) {
        (MailboxAuthKind::Password, _) => Login::Password {
            user: c.user.clone(),
            password: secret,
        },
        (MailboxAuthKind::Oauth2, mechanism) => Login::Token {
            user: c.user.clone(),
            token: secret,
            mechanism: match mechanism {
                Some(SaslMechanism::Oauthbearer) => mailward_mailbox::sasl::Mechanism::OAuthBearer,
                _ => mailward_mailbox::sasl::Mechanism::XOAuth2,
            },
        },
    }
}

/// Where the IMAP server is: its addresses that outbound connections may reach.
pub async fn imap_target(app: &AppState, c: &MailboxConnection) -> Result<Target, ReadError> {
    let host = c.host.clone().unwrap_or_default();
    let port = c.port.unwrap_or(993);
    let allow_loopback = app.config.outbound.allow_loopback;
    let found: Vec<IpAddr> = if let Ok(ip) = host.parse::<IpAddr>() {
        vec![ip]
    } else if allow_loopback && host == "localhost" {
        vec![IpAddr::from([127, 0, 0, 1])]
    } else {
        let mut ips = Vec::new();
        for record_type in [RecordType::A, RecordType::Aaaa] {
            if let Ok(answer) = app.resolver.lookup(&host, record_type).await {
                ips.extend(answer.records.iter().filter_map(RecordData::ip));
            }
        }
        ips
    };
    if found.is_empty() {
        return Err(ReadError::Failed(format!("{host} has no A or AAAA record")));
    }
    let addrs: Vec<SocketAddr> = found
        .into_iter()
        .filter(|ip| crate::outbound::client::ip_allowed(*ip, allow_loopback))
        .map(|ip| SocketAddr::new(ip, port))
        .collect();
    if addrs.is_empty() {
        return Err(ReadError::Refused(format!(
            "{host} resolves only to addresses Mailward does not connect to"
        )));
    }
    Ok(Target {
        addrs,
        host,
        mailbox: c.mailbox.clone(),
        extra_ca_pem: app.config.outbound.extra_ca_pem.clone(),
    })
}
