//! A mailbox connection's input, checked field by field: every refusal names its field.

use crate::config::Config;
use crate::error::ServiceError;
use mailward_api_types::mailboxes as wire;
use mailward_domain::mailboxes::{
    MailboxAuth, MailboxAuthKind, MailboxProvider, MailboxSecrets, POLL_INTERVAL_MINUTES,
    SaslMechanism,
};
use std::net::IpAddr;

fn invalid(param: &'static str, message: impl Into<String>) -> ServiceError {
    ServiceError::invalid(param, message.into())
}

/// Trimmed text of `min..=max` characters without control characters.
pub(super) fn label(param: &'static str, value: &str, max: usize) -> Result<String, ServiceError> {
    let value = value.trim();
    if value.is_empty() || value.chars().count() > max || value.chars().any(char::is_control) {
        return Err(invalid(
            param,
            format!("{param} must be 1 to {max} characters without control characters"),
        ));
    }
    Ok(value.to_owned())
}

/// The provider named.
pub(super) fn provider(value: &str) -> Result<MailboxProvider, ServiceError> {
    match value {
        "imap" => Ok(MailboxProvider::Imap),
        "microsoft_graph" => Ok(MailboxProvider::MicrosoftGraph),
        _ => Err(invalid(
            "provider",
            "provider must be imap or microsoft_graph",
        )),
    }
}

/// An IMAP server's name: a host name, or an address outbound connections may reach.
/// `localhost` only where loopback is allowed (local tests).
pub(super) fn host(config: &Config, value: &str) -> Result<String, ServiceError> {
    let host = value.trim().trim_end_matches('.').to_ascii_lowercase();
    let allow_loopback = config.outbound.allow_loopback;
    if let Ok(ip) = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
    {
        if !crate::outbound::client::ip_allowed(ip, allow_loopback) {
            return Err(invalid("host", "host must be a public server"));
        }
        return Ok(ip.to_string());
    }
    if host == "localhost" {
        return if allow_loopback {
            Ok(host)
        } else {
            Err(invalid("host", "host must be a public server"))
        };
    }
    let labels_ok = host.len() <= 253
        && host.split('.').count() >= 2
        && host.split('.').all(|l| {
            (1..=63).contains(&l.len())
                && l.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
        && host
            .rsplit('.')
            .next()
            .is_some_and(|tld| tld.starts_with(|c: char| c.is_ascii_alphabetic()));
    if !labels_ok {
        return Err(invalid(
            "host",
            "host must be the IMAP server's host name, e.g. outlook.office365.com",
        ));
    }
    Ok(host)
}

/// A mailbox or folder name.
pub(super) fn folder(param: &'static str, value: &str) -> Result<String, ServiceError> {
    let value = value.trim();
    if !mailward_mailbox::imap::is_mailbox_name(value) {
        return Err(invalid(
            param,
            format!("{param} must be 1 to 200 characters without control characters, \" or \\"),
        ));
    }
    Ok(value.to_owned())
}

/// Minutes between polls.
pub(super) fn interval(value: u32) -> Result<u32, ServiceError> {
    if !POLL_INTERVAL_MINUTES.contains(&value) {
        return Err(invalid(
            "poll_interval_minutes",
            format!(
                "poll_interval_minutes must be {} to {}",
                POLL_INTERVAL_MINUTES.start(),
                POLL_INTERVAL_MINUTES.end()
            ),
        ));
    }
    Ok(value)
}

fn secret(param: &'static str, value: Option<String>) -> Result<Option<String>, ServiceError> {
    match value {
        None => Ok(None),
        Some(v) if v.is_empty() || v.chars().count() > 8192 || v.chars().any(char::is_control) => {
            Err(invalid(
                param,
                format!("{param} must be 1 to 8192 characters without control characters"),
            ))
        }
        Some(v) => Ok(Some(v)),
    }
}

fn required(param: &'static str, value: Option<String>) -> Result<String, ServiceError> {
    value.ok_or_else(|| invalid(param, format!("{param} is required with this auth type")))
}

/// The sign-in settings and secrets of `input` for `provider`.
pub(super) fn auth(
    config: &Config,
    provider: MailboxProvider,
    input: wire::MailboxAuthInput,
) -> Result<(MailboxAuth, MailboxSecrets), ServiceError> {
    match input.kind.as_str() {
        "password" => password(provider, input),
        "oauth2" => oauth(config, provider, input),
        _ => Err(invalid("auth.type", "auth.type must be password or oauth2")),
    }
}

fn password(
    provider: MailboxProvider,
    input: wire::MailboxAuthInput,
) -> Result<(MailboxAuth, MailboxSecrets), ServiceError> {
    if provider != MailboxProvider::Imap {
        return Err(invalid(
            "auth.type",
            "Microsoft Graph signs in with oauth2 only",
        ));
    }
    let oauth_fields = [
        &input.mechanism,
        &input.token_url,
        &input.client_id,
        &input.scope,
        &input.client_secret,
        &input.refresh_token,
    ];
    if oauth_fields.iter().any(|f| f.is_some()) {
        return Err(invalid(
            "auth.type",
            "a password sign-in takes only password; use type oauth2 for tokens",
        ));
    }
    let auth = MailboxAuth {
        kind: MailboxAuthKind::Password,
        mechanism: None,
        token_url: None,
        client_id: None,
        scope: None,
        has_client_secret: false,
    };
    let secrets = MailboxSecrets {
        password: Some(required(
            "auth.password",
            secret("auth.password", input.password)?,
        )?),
        ..Default::default()
    };
    Ok((auth, secrets))
}

fn oauth(
    config: &Config,
    provider: MailboxProvider,
    input: wire::MailboxAuthInput,
) -> Result<(MailboxAuth, MailboxSecrets), ServiceError> {
    if input.password.is_some() {
        return Err(invalid(
            "auth.password",
            "an oauth2 sign-in takes no password",
        ));
    }
    let mechanism = match (provider, input.mechanism.as_deref()) {
        (MailboxProvider::Imap, None | Some("xoauth2")) => Some(SaslMechanism::Xoauth2),
        (MailboxProvider::Imap, Some("oauthbearer")) => Some(SaslMechanism::Oauthbearer),
        (MailboxProvider::Imap, Some(_)) => {
            return Err(invalid(
                "auth.mechanism",
                "auth.mechanism must be xoauth2 or oauthbearer",
            ));
        }
        (MailboxProvider::MicrosoftGraph, None) => None,
        (MailboxProvider::MicrosoftGraph, Some(_)) => {
            return Err(invalid("auth.mechanism", "auth.mechanism is for IMAP only"));
        }
    };
    let token_url = required("auth.token_url", input.token_url)?;
    let token_url =
        crate::outbound::client::check_url(token_url.trim(), config.outbound.allow_loopback)
            .map_err(|why| invalid("auth.token_url", format!("auth.token_url: {why}")))?
            .to_string();
    let client_id = label(
        "auth.client_id",
        &required("auth.client_id", input.client_id)?,
        256,
    )?;
    let scope = input
        .scope
        .map(|s| label("auth.scope", &s, 1024))
        .transpose()?;
    let client_secret = secret("auth.client_secret", input.client_secret)?;
    let auth = MailboxAuth {
        kind: MailboxAuthKind::Oauth2,
        mechanism,
        token_url: Some(token_url),
        client_id: Some(client_id),
        scope,
        has_client_secret: client_secret.is_some(),
    };
    let secrets = MailboxSecrets {
        password: None,
        client_secret,
        refresh_token: Some(required(
            "auth.refresh_token",
            secret("auth.refresh_token", input.refresh_token)?,
        )?),
    };
    Ok((auth, secrets))
}
