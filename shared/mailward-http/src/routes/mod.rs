//! Route handlers, one module per endpoint group.

pub mod api_keys;
pub mod audit;
pub mod dns_quota;
pub mod domains;
pub mod domains_bulk;
pub mod health;
pub mod openapi;
pub mod organizations;
pub mod records;
pub mod signup;
pub mod snapshots;
pub mod sources;
pub mod tools;
pub mod webhooks;
