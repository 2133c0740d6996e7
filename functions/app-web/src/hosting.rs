//! A domain's hosted records on its page: DMARC (the CNAME to Mailward's record and the policy
//! it carries), SPF (the flattened chain), DKIM keys, MTA-STS and BIMI (the mark certificate
//! uploaded as a file or fetched from a URL). The same operations as `POST
//! /domains/{id}/hosted-dmarc`, `POST /domains/{id}` (`dmarc_options`, `spf_options`), the
//! `dkim-keys`, `mta-sts` and `bimi/assets` routes. Editors and administrators write; the
//! records to publish then show in the records guidance above.

use crate::layout::word;
use crate::layout::{self, csrf};
use crate::posted::Posted;
use crate::session::{Fields, Person, redirect_with};
use axum::extract::{Path, State};
use axum::response::Response;
use mailward_api_types::dkim_keys::{DkimKey, DkimKeyRequest, ListDkimKeysParams};
use mailward_api_types::domains::{Domain, UpdateDomainRequest};
use mailward_api_types::mta_sts::{MtaStsRequest, MtaStsState};
use mailward_domain::dkim_keys::DkimRecordType;
use mailward_domain::domain::{Policy, SubdomainPolicy};
use mailward_domain::mta_sts::StsMode;
use mailward_http::AppState;
use mailward_services::domains::{self, hosting};
use mailward_services::{Caller, ServiceError};
use maud::{Markup, html};
use uuid::Uuid;

/// What the hosted-records section shows beyond the domain itself.
pub struct Hosted {
    /// The domain's live DKIM keys.
    pub keys: Vec<DkimKey>,
    /// Its MTA-STS state.
    pub mta_sts: Option<MtaStsState>,
}

/// Reads the DKIM keys and the MTA-STS state of a domain.
pub async fn read(app: &AppState, caller: &Caller, id: Uuid) -> Hosted {
    let keys = hosting::dkim_keys::list(app, caller, id, &ListDkimKeysParams::default())
        .await
        .unwrap_or_default();
    let mta_sts = hosting::mta_sts::get(app, caller, id).await.ok();
    Hosted { keys, mta_sts }
}

fn state_class(status: &str) -> &'static str {
    match status {
        "ready" | "active" => "ok",
        "error" | "failed" => "bad",
        "syncing" | "pending_validation" | "deploying" => "warn",
        _ => "neutral",
    }
}

fn state(status: &str, error: Option<&str>) -> Markup {
    html! {
        span class={ "badge " (state_class(status)) } { (status) }
        @if let Some(e) = error { " " span.muted { "(" (e) ")" } }
    }
}

fn choice<T: serde::Serialize + PartialEq>(value: T, current: T, label: &str) -> Markup {
    let w = word(&value);
    html! { option value=(w) selected[value == current] { (label) } }
}

/// The hosted-records section.
pub fn card(person: &Person, domain: &Domain, hosted: &Hosted) -> Markup {
    let action = format!("/app/domains/{}/hosting", domain.id);
    let status = &domain.managed_dns_status;
    let write = person.can_write();
    html! {
        section.card #hosting aria-labelledby="hosting-h" {
            h2 #hosting-h { "Hosted records" }
            p.muted { "Mailward can serve these records for you: you publish a CNAME once, and later changes need no DNS edit. The records to publish appear under Records." }

            h3 { "DMARC" }
            p {
                @if domain.is_dmarc_managed { "Hosted: " (state(&status.dmarc, domain.dmarc_error_reason.as_deref())) }
                @else { "Not hosted: you publish the DMARC TXT record yourself." }
            }
            @if write {
                form method="post" action={ (action) "/dmarc-policy" } {
                    (csrf(&person.csrf))
                    div.row {
                        div {
                            label for="dmarc-policy" { "Policy (p)" }
                            select #dmarc-policy name="policy" {
                                (choice(Policy::None, domain.dmarc_options.policy, "none (monitor)"))
                                (choice(Policy::Quarantine, domain.dmarc_options.policy, "quarantine"))
                                (choice(Policy::Reject, domain.dmarc_options.policy, "reject"))
                            }
                        }
                        div {
                            label for="dmarc-sp" { "Subdomains (sp)" }
                            select #dmarc-sp name="sp" {
                                (choice(SubdomainPolicy::Same, domain.dmarc_options.sp, "same as p"))
                                (choice(SubdomainPolicy::None, domain.dmarc_options.sp, "none"))
                                (choice(SubdomainPolicy::Quarantine, domain.dmarc_options.sp, "quarantine"))
                                (choice(SubdomainPolicy::Reject, domain.dmarc_options.sp, "reject"))
                            }
                        }
                        div {
                            label for="dmarc-pct" { "Applied to (%)" }
                            input #dmarc-pct name="pct" type="number" min="0" max="100" value=(domain.dmarc_options.pct);
                        }
                        div { button type="submit" { "Save policy" } }
                    }
                }
                @if !domain.is_dmarc_managed {
                    form method="post" action={ (action) "/dmarc" } {
                        (csrf(&person.csrf))
                        button type="submit" { "Host the DMARC record" }
                    }
                }
            } @else {
                p { "Policy: p=" (word(&domain.dmarc_options.policy)) ", sp=" (word(&domain.dmarc_options.sp)) ", " (domain.dmarc_options.pct) "%." }
            }

            h3 { "SPF" }
            p {
                @if domain.is_spf_managed { "Hosted and flattened: " (state(&status.spf, domain.spf_error_reason.as_deref())) }
                @else { "Not hosted." }
            }
            @if write {
                form method="post" action={ (action) "/spf" } {
                    (csrf(&person.csrf))
                    div.row {
                        div.check {
                            input #spf-enabled type="checkbox" name="enabled" value="true" checked[domain.spf_options.enabled];
                            label for="spf-enabled" { "Host the SPF record (Mailward serves the flattened chain under 10 lookups)" }
                        }
                        div.check {
                            input #spf-flatten type="checkbox" name="force_flattening" value="true" checked[domain.spf_options.force_flattening];
                            label for="spf-flatten" { "Flatten even when under 10 lookups" }
                        }
                        div { button type="submit" { "Save SPF" } }
                    }
                }
            }

            h3 { "DKIM keys" }
            @if hosted.keys.is_empty() { p { "No hosted keys." } }
            @else {
                table.responsive {
                    thead { tr { th scope="col" { "Selector" } th scope="col" { "Type" } th scope="col" { "Served" } th scope="col" { "State" } @if write { th scope="col" { "Actions" } } } }
                    tbody { @for k in &hosted.keys { tr {
                        td data-label="Selector" { code { (k.selector) } }
                        td data-label="Type" { (word(&k.record_type)) }
                        td data-label="Served" { code { (ellipsis(&k.value, 60)) } }
                        td data-label="State" { (state(&word(&k.dns_status), k.publish_error.as_deref())) }
                        @if write { td data-label="Actions" {
                            form method="post" action={ (action) "/dkim/" (k.id) "/delete" } data-confirm={ "Delete the key at " (k.selector) "?" } {
                                (csrf(&person.csrf))
                                button.danger.small type="submit" aria-label={ "Delete key " (k.selector) } { "Delete" }
                            }
                        } }
                    } } }
                }
            }
            @if write {
                form method="post" action={ (action) "/dkim" } {
                    (csrf(&person.csrf))
                    div.row {
                        div { label for="dkim-selector" { "Selector" } input #dkim-selector type="text" name="selector" required maxlength="200" placeholder="s1"; }
                        div {
                            label for="dkim-type" { "Type" }
                            select #dkim-type name="record_type" {
                                option value="TXT" { "TXT (the key)" }
                                option value="CNAME" { "CNAME (the sender's key host)" }
                            }
                        }
                    }
                    label for="dkim-value" { "Value" }
                    textarea #dkim-value name="value" rows="3" required maxlength="4096" placeholder="v=DKIM1; k=rsa; p=…" {}
                    p { button type="submit" { "Add key" } }
                }
            }

            h3 { "MTA-STS" }
            (mta_sts(person, &action, hosted.mta_sts.as_ref()))

            h3 { "BIMI" }
            p {
                @if domain.is_bimi_managed { "Hosted: " (state(&status.bimi, domain.bimi_error_reason.as_deref())) }
                @else { "Not hosted." }
                @if let Some(logo) = &domain.bimi_options.logo { " Logo: " code { (logo) } }
            }
            @if write {
                form method="post" action={ (action) "/bimi" } enctype="multipart/form-data" {
                    (csrf(&person.csrf))
                    div.row {
                        div { label for="bimi-file" { "Mark certificate (VMC or CMC, PEM)" } input #bimi-file type="file" name="certificate" accept=".pem,.crt,application/x-pem-file"; }
                        div { label for="bimi-url" { "or its https URL" } input #bimi-url type="url" name="certificate_url" placeholder="https://…/vmc.pem"; }
                        div { button type="submit" { "Upload and host" } }
                    }
                }
            }
        }
    }
}

fn mta_sts(person: &Person, action: &str, state_now: Option<&MtaStsState>) -> Markup {
    let enabled = state_now.is_some_and(|s| s.enabled);
    html! {
        @if let Some(s) = state_now.filter(|s| s.enabled) {
            p { "Hosted, mode " strong { (s.mode) } ": " (state(&s.status, s.error_reason.as_deref())) }
            @if let Some(c) = &s.certificate { p { "Certificate for " code { (c.host) } ": " (state(&c.status, c.error.as_deref())) } }
            @if !s.records.is_empty() {
                table.responsive {
                    thead { tr { th scope="col" { "Host" } th scope="col" { "Type" } th scope="col" { "Value" } } }
                    tbody { @for r in &s.records { tr { td data-label="Host" { code { (r.host) } } td data-label="Type" { (r.record_type) } td data-label="Value" { code { (r.value) } } } } }
                }
            }
        } @else {
            p { "Not hosted." }
        }
        @if person.can_write() {
            form method="post" action={ (action) "/mta-sts" } {
                (csrf(&person.csrf))
                div.row {
                    div {
                        label for="sts-mode" { "Mode" }
                        select #sts-mode name="mode" {
                            @let mode = state_now.map_or("testing", |s| s.mode.as_str());
                            option value="testing" selected[mode == "testing"] { "testing (report only)" }
                            option value="enforce" selected[mode == "enforce"] { "enforce" }
                        }
                    }
                    div { button type="submit" name="do" value=(if enabled { "update" } else { "enable" }) { @if enabled { "Save mode" } @else { "Host MTA-STS" } } }
                    @if enabled {
                        @if state_now.and_then(|s| s.certificate.as_ref()).is_some_and(|c| c.status == "failed") {
                            div { button type="submit" name="do" value="retry" { "Retry the certificate" } }
                        }
                        div { button.danger type="submit" name="do" value="disable" { "Stop hosting" } }
                    }
                }
            }
        }
    }
}

fn ellipsis(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        text.chars().take(max).collect::<String>() + "…"
    }
}

/// `POST /app/domains/{id}/hosting/{record}`.
pub async fn save(
    State(app): State<AppState>,
    Path((id, record)): Path<(String, String)>,
    Posted { person, fields }: Posted,
) -> Response {
    let id = match layout::path_id(&person, &id, "domain") {
        Ok(id) => id,
        Err(page) => return *page,
    };
    let back = format!("/app/domains/{id}#hosting");
    let done = match apply(&app, &person.caller, id, &record, &fields).await {
        Ok(Ok(text)) => return redirect_with(&app, &back, "ok", &text),
        Ok(Err(text)) => text,
        Err(e) => layout::refusal_text(&e),
    };
    redirect_with(&app, &back, "bad", &done)
}

/// Runs one hosted-record change: `Ok(Ok(notice))`, `Ok(Err(bad field))` or the service's
/// refusal.
async fn apply(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    record: &str,
    fields: &Fields,
) -> Result<Result<String, String>, ServiceError> {
    Ok(Ok(match record {
        "dmarc" => {
            hosting::dmarc::enable(app, caller, id).await?;
            "DMARC is hosted: publish the CNAME shown under Records.".to_owned()
        }
        "dmarc-policy" => {
            let mut options = domains::get(app, caller, id, &[]).await?.dmarc_options;
            match (
                layout::enum_field(fields, "policy"),
                layout::enum_field(fields, "sp"),
            ) {
                (Ok(p), Ok(sp)) => (options.policy, options.sp) = (p, sp),
                (Err(e), _) | (_, Err(e)) => return Ok(Err(e)),
            }
            match fields.get("pct").map(str::parse::<u8>) {
                Some(Ok(pct)) if pct <= 100 => options.pct = pct,
                _ => return Ok(Err("Give a percentage from 0 to 100 (field: pct).".into())),
            }
            let input = UpdateDomainRequest {
                dmarc_options: Some(options),
                ..UpdateDomainRequest::default()
            };
            domains::update(app, caller, id, input).await?;
            "DMARC policy saved.".to_owned()
        }
        "spf" => {
            let mut options = domains::get(app, caller, id, &[]).await?.spf_options;
            options.enabled = fields.get("enabled") == Some("true");
            options.force_flattening = fields.get("force_flattening") == Some("true");
            let input = UpdateDomainRequest {
                spf_options: Some(options),
                ..UpdateDomainRequest::default()
            };
            domains::update(app, caller, id, input).await?;
            "SPF settings saved.".to_owned()
        }
        "dkim" => {
            let record_type: DkimRecordType = match layout::enum_field(fields, "record_type") {
                Ok(t) => t,
                Err(e) => return Ok(Err(e)),
            };
            let input = DkimKeyRequest {
                selector: fields.get("selector").unwrap_or_default().to_owned(),
                record_type,
                value: fields.get("value").unwrap_or_default().to_owned(),
                ttl: None,
            };
            let key = hosting::dkim_keys::create(app, caller, id, input).await?;
            format!("Key {} added.", key.selector)
        }
        "mta-sts" => return mta_sts_change(app, caller, id, fields).await,
        "bimi" => {
            let source = match (fields.file("certificate"), fields.get("certificate_url")) {
                (Some(file), None) => hosting::bimi::CertificateSource::Pem(file.bytes.clone()),
                (None, Some(url)) => hosting::bimi::CertificateSource::Url(url.to_owned()),
                _ => {
                    return Ok(Err(
                        "Choose the certificate file or give its URL, not both (field: certificate)."
                            .into(),
                    ));
                }
            };
            hosting::bimi::upload(app, caller, id, source).await?;
            "The mark certificate is valid: BIMI is hosted. Publish the CNAME shown under Records."
                .to_owned()
        }
        _ => return Err(ServiceError::not_found("page")),
    }))
}

async fn mta_sts_change(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    fields: &Fields,
) -> Result<Result<String, String>, ServiceError> {
    let mode: StsMode = match layout::enum_field(fields, "mode") {
        Ok(m) => m,
        Err(e) => return Ok(Err(e)),
    };
    let input = MtaStsRequest {
        mode: Some(mode),
        max_age: None,
    };
    Ok(Ok(match fields.get("do") {
        Some("enable") => {
            hosting::mta_sts::enable(app, caller, id, input).await?;
            "MTA-STS is hosted: publish the records shown.".to_owned()
        }
        Some("update") => {
            hosting::mta_sts::update(app, caller, id, input).await?;
            "MTA-STS mode saved.".to_owned()
        }
        Some("retry") => {
            hosting::mta_sts::retry(app, caller, id).await?;
            "The certificate is requested again.".to_owned()
        }
        Some("disable") => {
            hosting::mta_sts::disable(app, caller, id).await?;
            "MTA-STS hosting stops: senders are told the policy is withdrawn.".to_owned()
        }
        _ => return Ok(Err("Unknown action (field: do).".into())),
    }))
}

/// `POST /app/domains/{id}/hosting/dkim/{key}/delete`.
pub async fn delete_key(
    State(app): State<AppState>,
    Path((id, key)): Path<(String, String)>,
    Posted { person, .. }: Posted,
) -> Response {
    let (id, key) = match (
        layout::path_id(&person, &id, "domain"),
        layout::path_id(&person, &key, "DKIM key"),
    ) {
        (Ok(id), Ok(key)) => (id, key),
        (Err(page), _) | (_, Err(page)) => return *page,
    };
    let back = format!("/app/domains/{id}#hosting");
    match hosting::dkim_keys::delete(&app, &person.caller, id, key).await {
        Ok(_) => redirect_with(&app, &back, "ok", "Key deleted."),
        Err(e) => redirect_with(&app, &back, "bad", &layout::refusal_text(&e)),
    }
}
