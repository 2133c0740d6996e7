//! The sender-requirement checks one message's headers allow (RFC 8058 one-click unsubscribe,
//! TLS at the receiver), and keeping their verdicts for the organization's domain.

use crate::caller::Caller;
use crate::state::AppState;
use mailward_api_types::tools::{DnsValidation, HeaderCheckView, HeaderSenderChecks};
use mailward_domain::sender_requirements::{HeaderCheck, RequirementInputs, Status};
use mailward_headers::{Hop, Parsed};
use uuid::Uuid;

fn view(status: Status, detail: impl Into<String>) -> HeaderCheckView {
    HeaderCheckView {
        status: status.as_str().to_owned(),
        detail: detail.into(),
    }
}

/// The URIs of a List-Unsubscribe value (RFC 2369: angle-bracketed, comma-separated).
fn uris(value: &str) -> impl Iterator<Item = &str> {
    value
        .split(',')
        .filter_map(|part| part.trim().strip_prefix('<')?.split('>').next())
}

/// RFC 8058 §3-4: an HTTPS URI in List-Unsubscribe, `List-Unsubscribe=One-Click` as the only
/// content of List-Unsubscribe-Post, and both fields covered by a DKIM signature that verifies
/// (`validation` is the live re-verification; without it the signature is not known to verify).
pub fn one_click(parsed: &Parsed, validation: Option<&DnsValidation>) -> HeaderCheckView {
    let Some(list) = parsed.list_unsubscribe.as_deref() else {
        return view(Status::Fail, "no List-Unsubscribe header");
    };
    if !uris(list).any(|u| {
        u.get(..8)
            .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
    }) {
        return view(
            Status::Fail,
            "List-Unsubscribe has no https URI (a mailto: alone is not one-click)",
        );
    }
    match parsed.list_unsubscribe_post.as_deref().map(str::trim) {
        Some("List-Unsubscribe=One-Click") => {}
        Some(other) => {
            return view(
                Status::Fail,
                format!("List-Unsubscribe-Post is \"{other}\", not \"List-Unsubscribe=One-Click\""),
            );
        }
        None => return view(Status::Fail, "no List-Unsubscribe-Post header"),
    }
    let covers = |h: &[String]| {
        ["list-unsubscribe", "list-unsubscribe-post"]
            .iter()
            .all(|f| h.iter().any(|x| x.trim().eq_ignore_ascii_case(f)))
    };
    let covering: Vec<_> = parsed
        .dkim_signatures
        .iter()
        .filter(|s| covers(&s.signed_headers))
        .collect();
    if covering.is_empty() {
        return view(
            Status::Fail,
            "no DKIM signature covers both List-Unsubscribe and List-Unsubscribe-Post (h=)",
        );
    }
    let Some(validation) = validation else {
        return view(
            Status::Unknown,
            "both headers are signed, but the signature was not re-verified (include_dns_validation was false)",
        );
    };
    let verified = covering.iter().find_map(|s| {
        let (d, sel) = (s.domain.as_deref()?, s.selector.as_deref()?);
        validation
            .dkim
            .iter()
            .find(|c| c.domain.eq_ignore_ascii_case(d) && c.selector.eq_ignore_ascii_case(sel))
            .filter(|c| c.result == "pass")
            .map(|_| d)
    });
    match verified {
        Some(d) => view(
            Status::Pass,
            format!(
                "https List-Unsubscribe with One-Click POST, both signed by d={d}'s verified signature"
            ),
        ),
        None => view(
            Status::Fail,
            "the DKIM signature covering the unsubscribe headers did not verify",
        ),
    }
}

/// Whether the receiver's hop (where the trusted receiver accepted the message) was over TLS:
/// a TLS version in its Received field, or an RFC 3848 protocol ending in `S`/`SA`.
pub fn tls(hop: Option<&Hop>) -> HeaderCheckView {
    let Some(hop) = hop else {
        return view(
            Status::Unknown,
            "no Received field shows where the receiver accepted the message",
        );
    };
    let by = hop.by.as_deref().unwrap_or("the receiver");
    if let Some(version) = &hop.tls {
        return view(Status::Pass, format!("received by {by} over {version}"));
    }
    match hop.with.as_deref().map(str::to_ascii_uppercase) {
        Some(w) if w.ends_with('S') || w.ends_with("SA") => {
            view(Status::Pass, format!("received by {by} with {w} (TLS)"))
        }
        Some(w) if w.contains("SMTP") => view(
            Status::Fail,
            format!("received by {by} with {w}, without TLS"),
        ),
        _ => view(
            Status::Unknown,
            format!("the Received field of {by} does not say whether TLS was used"),
        ),
    }
}

fn status_of(view: &HeaderCheckView) -> Status {
    match view.status.as_str() {
        "pass" => Status::Pass,
        "fail" => Status::Fail,
        _ => Status::Unknown,
    }
}

/// Keeps the checks (never the headers) for the caller's domain `name`, when the organization
/// watches it and the caller can see it. Answers that domain's id. Best effort: a failed write
/// is logged, the analysis still answers.
pub async fn keep(
    app: &AppState,
    caller: &Caller,
    name: &str,
    checks: &HeaderSenderChecks,
    receiver: Option<String>,
) -> Option<Uuid> {
    let store = app.store.as_ref();
    let id = mailward_store::domains::id_by_name(store, caller.org_id, name)
        .await
        .ok()??;
    let domain = crate::access::load(app, caller, id).await.ok()?.value;
    let check = HeaderCheck {
        analyzed_at: app.clock.now(),
        receiver,
        one_click_unsubscribe: status_of(&checks.one_click_unsubscribe),
        one_click_detail: checks.one_click_unsubscribe.detail.clone(),
        tls: status_of(&checks.tls),
        tls_detail: checks.tls.detail.clone(),
    };
    let saved = super::change_inputs(app, &domain, |inputs: &mut RequirementInputs| {
        inputs.header_check = Some(check.clone());
    })
    .await;
    match saved {
        Ok(()) => {
            if let Err(e) = super::reconcile_tasks(app, &domain).await {
                tracing::warn!(domain.id = %domain.id, error = %e, "could not reconcile the sender-requirement tasks");
            }
            Some(domain.id)
        }
        Err(e) => {
            tracing::warn!(domain.id = %domain.id, error = %e, "could not keep a header analysis's verdicts");
            None
        }
    }
}
