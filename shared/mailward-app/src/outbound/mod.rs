//! Requests to customer-supplied URLs (DESIGN.md §7): the one outbound client (HTTPS only, no
//! redirects, time and size limits, private addresses refused at connect time) and what goes
//! through it besides webhooks (the MTA-STS policy fetch, BIMI mark certificates), the MX
//! certificate probe (STARTTLS on the SMTP port), and the registrar lookups over RDAP (public
//! registries, through the same guarded resolver).

pub mod client;
pub mod mta_sts;
pub mod mx_tls;
pub mod post;
pub mod rdap;
pub mod vmc;
