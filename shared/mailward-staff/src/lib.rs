//! What Mailward staff do, beyond SPEC §5: work the support queue across organizations,
//! find organizations, suspend them and lift the suspension. The caller is a
//! [`StaffMember`](mailward_app::caller::StaffMember) from a staff session (the HTTP layer's
//! `StaffPrincipal`), never an organization's credential. Every change is written with its
//! entry in the organization's activity log as `SERVICE_STAFF`, in one transaction.

pub mod candidates;
pub mod organizations;
pub mod sources;
pub mod tickets;
