//! The fixture's error type.

/// Why the fixture could not start or apply an edit: tests want a message, not a panic inside
/// the support crate.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    /// Reading a zone file or binding a socket failed.
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    /// Zone-file text did not parse.
    #[error("zone file: {0}")]
    Parse(String),
    /// A name or record given to the builder or an edit is not valid.
    #[error("invalid: {0}")]
    Invalid(String),
    /// An edit names a domain outside every zone the server holds.
    #[error("no zone holds {0}")]
    NoZone(String),
    /// The resolver helper could not be built.
    #[error("resolver: {0}")]
    Resolver(#[from] mailward_dns::SetupError),
}
