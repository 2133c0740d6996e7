//! What Mailward reads from RDAP, the registration data protocol, without any I/O: a domain's
//! registrar, shown on the Domain (`registrar`).
//!
//! - [`bootstrap`]: the IANA bootstrap registry for DNS (RFC 9224, `dns.json`): which RDAP
//!   service answers for a name (the longest matching label suffix) and the query URL;
//! - [`registrar`]: the registrar in a domain answer (RFC 9083): the top-level entity with the
//!   `registrar` role, named by its jCard `fn` (RFC 7095), else its public id or handle;
//! - [`schedule`]: which names to ask (the registrable name, not the watched subdomain) and
//!   when a domain's registrar is due a lookup again (a week after an answer, a day after a
//!   failure).
//!
//! The caller (`mailward_app::outbound::rdap`) fetches the files and hands the bytes in. Every
//! input is treated as hostile: nothing here panics, whatever the bytes, and names read from an
//! answer are cleaned and bounded before they are stored.
//!
//! Depends on the model alone (`mailward-domain`); no async runtime, no HTTP.

pub mod bootstrap;
pub mod registrar;
pub mod schedule;

pub use bootstrap::Bootstrap;
pub use registrar::registrar_of;
pub use schedule::{Lookup, RegistrarState, lookup_names};
