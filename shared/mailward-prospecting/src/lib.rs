//! The prospecting report as content (pure): what an audit of up to ten domains says to a
//! prospect (findings, risk, sending services with their DKIM state, potential loss, plan), its
//! English and French words ([`texts`]), and its self-contained HTML rendering ([`html`]). The
//! service stores and serves reports (`mailward_services::prospecting`); `mailward-pdf` typesets
//! the same content with the same words and colours.

pub mod content;
pub mod html;
pub mod texts;
