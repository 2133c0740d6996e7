//! The plain data [`detect`](crate::detect) returns lives in the pure core
//! ([`mailward_domain::conflicts`]), because a domain stores its conflicts; re-exported here.

pub use mailward_domain::conflicts::{
    Conflict, ConflictKind, NameserverAnswer, Protocol, ResolverAnswer,
};
