//! Test support shared by the adapter crates and the black-box tests.
//!
//! - [`store_conformance`]: the contract of `mailward_domain::store::ItemStore`, run against the
//!   SQLite adapter always and against DynamoDB (moto) by the test script.
//! - [`queue_conformance`]: the contract of `mailward_domain::queue::Queue`, likewise for the
//!   embedded queue and SQS.
//! - [`TestCa`]: a throwaway CA for tests that run TLS servers.
//! - [`Dovecot`]: a real IMAP server on loopback, with a password or OAuth 2.0 sign-in.

mod dovecot;
mod objects_suite;
mod queue_suite;
mod store_suite;
mod test_ca;

pub use dovecot::{Dovecot, DovecotAuth};
pub use objects_suite::object_listing_conformance;
pub use queue_suite::{TimeTravel, queue_conformance};
pub use store_suite::store_conformance;
pub use test_ca::{Leaf, TestCa};
