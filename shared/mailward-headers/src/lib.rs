//! Reads an email's header block for `POST /tools/header-analyze` (SPEC §4.8): the Received hops
//! in travel order with the delay per hop, every Authentication-Results header with whether it
//! can be trusted (and why), the verdicts of the trusted ones, the DKIM signatures' tags and the
//! ARC sets. Pure: the live re-verification (DNS keys, SPF, DMARC) is the service's.

pub mod auth_results;
pub mod message;
pub mod received;
pub mod signature;
pub mod verdict;

pub use auth_results::{AuthResults, MethodResult, service_domain, trust};
pub use message::{HeaderError, Parsed, parse};
pub use received::{Hop, hops};
pub use signature::{SignatureTags, signature_tags};
pub use verdict::Verdict;
