//! What a domain's aggregate reports add up to (pure): a window's figures and totals
//! ([`figures`]), sums per sender ([`by_sender`]), the policy recommendation and next action
//! ([`recommend`]), and the enforcement impact of a stricter policy ([`impact`]). The services
//! read the rows and the senders; everything computed from them is here, tested without storage.

pub mod by_sender;
pub mod figures;
pub mod impact;
pub mod recommend;
pub mod requirements;
