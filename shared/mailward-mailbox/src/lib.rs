//! Reading a report mailbox, for `mailward import --imap` and for the mailbox connections an
//! organization sets up (`mailward_services::mailboxes`, polled by `mailward_workers`).
//!
//! Protocol clients only, with no knowledge of organizations or storage:
//! - [`imap`]: an IMAP session over TLS, read-only unless asked to move messages, logged in
//!   with a password or an OAuth access token ([`sasl`]: XOAUTH2, OAUTHBEARER of RFC 7628);
//! - [`oauth`]: the refresh-token grant (RFC 6749 §6) that turns the refresh token a person
//!   obtained once into access tokens;
//! - [`graph`]: the Microsoft Graph mail API (message list, MIME content, move).
//!
//! The caller vets where to connect: it resolves the server's name through its own resolver,
//! keeps only addresses outbound connections may reach, and hands them here; the HTTP client
//! given to [`oauth`] and [`graph`] is the caller's guarded one.

pub mod graph;
pub mod imap;
pub mod oauth;
pub mod sasl;
