//! The SASL mechanisms that log in to IMAP with an OAuth 2.0 access token:
//! - `XOAUTH2` (Google's and Microsoft's): `user=<user>^Aauth=Bearer <token>^A^A`;
//! - `OAUTHBEARER` (RFC 7628 §3.1): a GS2 header naming the user, then `host`, `port` and
//!   `auth` key-value pairs, each ended by `^A`, and a final `^A`.
//!
//! When the server refuses the token it sends a challenge holding a JSON error (RFC 7628
//! §3.2.2); the client then answers with the dummy response (`^A` for OAUTHBEARER, empty for
//! XOAUTH2) and the server ends the exchange with `NO`. [`TokenLogin`] does both.

/// Which mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    /// Google's and Microsoft's `XOAUTH2`.
    XOAuth2,
    /// RFC 7628's `OAUTHBEARER`.
    OAuthBearer,
}

impl Mechanism {
    /// The name sent in `AUTHENTICATE`.
    pub fn name(self) -> &'static str {
        match self {
            Self::XOAuth2 => "XOAUTH2",
            Self::OAuthBearer => "OAUTHBEARER",
        }
    }
}

/// The initial client response of `mechanism` (before base64).
pub fn initial_response(
    mechanism: Mechanism,
    user: &str,
    token: &str,
    host: &str,
    port: u16,
) -> String {
    match mechanism {
        Mechanism::XOAuth2 => format!("user={user}\x01auth=Bearer {token}\x01\x01"),
        Mechanism::OAuthBearer => {
            // RFC 5801 §4: `,` and `=` in the authzid are escaped as =2C and =3D.
            let authzid = user.replace('=', "=3D").replace(',', "=2C");
            format!("n,a={authzid},\x01host={host}\x01port={port}\x01auth=Bearer {token}\x01\x01")
        }
    }
}

/// The authenticator handed to the IMAP client: the initial response first, the dummy
/// response to an error challenge after. The error the server sent is kept for the message.
#[derive(Debug)]
pub struct TokenLogin {
    mechanism: Mechanism,
    initial: Option<String>,
    /// The server's error challenge (JSON), if it sent one.
    pub error: Option<String>,
}

impl TokenLogin {
    /// A login of `user` with `token` at `host:port`.
    pub fn new(mechanism: Mechanism, user: &str, token: &str, host: &str, port: u16) -> Self {
        Self {
            mechanism,
            initial: Some(initial_response(mechanism, user, token, host, port)),
            error: None,
        }
    }
}

impl async_imap::Authenticator for &mut TokenLogin {
    type Response = Vec<u8>;

    fn process(&mut self, challenge: &[u8]) -> Vec<u8> {
        if let Some(first) = self.initial.take() {
            return first.into_bytes();
        }
        self.error = Some(String::from_utf8_lossy(challenge).into_owned());
        match self.mechanism {
            Mechanism::XOAuth2 => Vec::new(),
            Mechanism::OAuthBearer => vec![0x01],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_imap::Authenticator as _;

    #[test]
    fn responses_follow_each_mechanism() {
        assert_eq!(
            initial_response(
                Mechanism::XOAuth2,
                "a@b.example",
                "tok",
                "imap.b.example",
                993
            ),
            "user=a@b.example\x01auth=Bearer tok\x01\x01"
        );
        // RFC 7628 §4.1's example, with the authzid escaped as RFC 5801 asks.
        assert_eq!(
            initial_response(
                Mechanism::OAuthBearer,
                "u,=x@example.com",
                "vF9dft4qmT",
                "server.example.com",
                143
            ),
            "n,a=u=2C=3Dx@example.com,\x01host=server.example.com\x01port=143\x01auth=Bearer vF9dft4qmT\x01\x01"
        );
    }

    #[test]
    fn an_error_challenge_gets_the_dummy_response() {
        let mut login = TokenLogin::new(Mechanism::OAuthBearer, "u", "t", "h", 993);
        let mut auth = &mut login;
        assert!(auth.process(b"").starts_with(b"n,a=u,"));
        assert_eq!(auth.process(br#"{"status":"invalid_token"}"#), vec![1]);
        assert_eq!(
            login.error.as_deref(),
            Some(r#"{"status":"invalid_token"}"#)
        );
        let mut login = TokenLogin::new(Mechanism::XOAuth2, "u", "t", "h", 993);
        let mut auth = &mut login;
        auth.process(b"");
        assert!(auth.process(b"{}").is_empty());
    }
}
