//! The one HTML escaper of the service's own pages and mails (it lives with the domain model, so
//! pure engines such as the prospecting report use it too).

pub use mailward_domain::html::escape;
