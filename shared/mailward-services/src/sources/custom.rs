//! An organization's own sending sources (`is_custom`, origin `CUSTOM`; an extension beyond
//! SPEC §4.8): senders the catalogue lacks, named by the organization so its reports say who
//! they are. They identify the senders of that organization's domains only (before the
//! catalogue's), and only its callers see them. Administrators and editors of the whole
//! organization define them (they apply to every domain, so a member limited to groups may
//! not); a change re-identifies the senders of the domains that have reports.

use crate::activity::{self, Change};
use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::sources::{CustomSourceRequest, SourceView};
use mailward_domain::candidates::{CUSTOM_ORIGIN, DatedSource, plain_source};
use mailward_domain::sources::{Category, Source};
use mailward_store::sources as stored;
use uuid::Uuid;

/// Sources one organization may define.
pub const MAX_CUSTOM_SOURCES: usize = 100;

const MAX_NAMES: usize = 20;

/// A source's `category` word (param `category`).
pub fn category(raw: &str) -> Result<Category, ServiceError> {
    serde_json::from_value(serde_json::Value::String(raw.trim().to_ascii_uppercase())).map_err(
        |_| {
            ServiceError::invalid(
                "category",
                "category is SENDING_TOOL, MAILBOX_PROVIDER, VPS_PROVIDER, SECURITY_PROVIDER or EMAIL_RELAY",
            )
        },
    )
}

fn names(param: &'static str, raw: &[String]) -> Result<Vec<String>, ServiceError> {
    if raw.len() > MAX_NAMES {
        return Err(ServiceError::invalid(
            param,
            format!("{param} holds at most {MAX_NAMES} domain names"),
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(raw.len());
    for name in raw {
        let name = mailward_domain::names::normalize_domain_name(name).ok_or_else(|| {
            ServiceError::invalid(
                param,
                format!("{param} holds domain names such as mail.example.com"),
            )
        })?;
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

fn selectors(raw: &[String]) -> Result<Vec<String>, ServiceError> {
    if raw.len() > MAX_NAMES {
        return Err(ServiceError::invalid(
            "dkim_selectors",
            format!("dkim_selectors holds at most {MAX_NAMES} selectors"),
        ));
    }
    let mut out: Vec<String> = Vec::new();
    for s in raw {
        let s = s.trim().to_ascii_lowercase();
        // A selector is one or more labels (RFC 6376 §3.1).
        let ok = !s.is_empty()
            && s.len() <= 253
            && s.split('.')
                .all(|l| mailward_domain::names::is_label(l, true));
        if !ok {
            return Err(ServiceError::invalid(
                "dkim_selectors",
                "dkim_selectors holds DKIM selectors: labels of letters, digits, hyphens and underscores",
            ));
        }
        if !out.contains(&s) {
            out.push(s);
        }
    }
    Ok(out)
}

/// Applies the fields sent to `source`.
fn apply(source: &mut Source, input: &CustomSourceRequest) -> Result<(), ServiceError> {
    if let Some(name) = &input.name {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > 100 {
            return Err(ServiceError::invalid(
                "name",
                "name must be 1 to 100 characters",
            ));
        }
        source.name = name.to_owned();
    }
    if let Some(raw) = &input.category {
        source.category = category(raw)?;
    }
    if let Some(home) = &input.homepage {
        let home = home.trim();
        let ok = home.is_empty()
            || url::Url::parse(home).is_ok_and(|u| u.scheme() == "https" && u.host_str().is_some());
        if !ok || home.len() > 2000 {
            return Err(ServiceError::invalid(
                "homepage",
                "homepage must be an https:// address",
            ));
        }
        source.homepage = (!home.is_empty()).then(|| home.to_owned());
    }
    if let Some(list) = &input.sending_domains {
        source.base_domains = names("sending_domains", list)?;
    }
    if let Some(list) = &input.envelope_froms {
        source.envelope_froms = names("envelope_froms", list)?;
    }
    if let Some(list) = &input.dkim_selectors {
        source.dkim_discovery_selectors = selectors(list)?;
    }
    if let Some(list) = &input.spf_includes {
        source.spf_discovery_values = names("spf_includes", list)?
            .into_iter()
            .map(|d| format!("include:{d}"))
            .collect();
    }
    if source.base_domains.is_empty() && source.envelope_froms.is_empty() {
        return Err(ServiceError::invalid(
            "sending_domains",
            "a source needs sending_domains or envelope_froms to be recognised by",
        ));
    }
    Ok(())
}

/// Queues the re-identification of the senders of the organization's domains with reports.
async fn reidentify(app: &AppState, org: Uuid) {
    let Ok(list) = mailward_store::domains::list(app.store.as_ref(), org).await else {
        return;
    };
    for domain in list.iter().filter(|d| d.report_figures.is_some()) {
        let job = mailward_app::jobs::IdentifySenders {
            org_id: org,
            domain_id: domain.id,
        };
        if let Err(e) = mailward_app::job::enqueue(app, &job, 0).await {
            tracing::warn!(domain.id = %domain.id, error = %e, "could not queue sender identification");
        }
    }
}

fn check_caller(caller: &Caller) -> Result<(), ServiceError> {
    caller.require_write()?;
    caller.require_unlimited()
}

/// Defines a source of the caller's organization.
pub async fn create(
    app: &AppState,
    caller: &Caller,
    input: CustomSourceRequest,
) -> Result<SourceView, ServiceError> {
    check_caller(caller)?;
    if input.name.is_none() {
        return Err(ServiceError::invalid("name", "name is required"));
    }
    let id = Uuid::new_v4();
    let mut source = plain_source(
        id,
        format!("custom-{id}"),
        String::new(),
        Category::SendingTool,
        CUSTOM_ORIGIN,
    );
    apply(&mut source, &input)?;
    let store = app.store.as_ref();
    if stored::custom(store, caller.org_id).await?.len() >= MAX_CUSTOM_SOURCES {
        return Err(ServiceError::conflict(format!(
            "an organization defines at most {MAX_CUSTOM_SOURCES} sources of its own"
        )));
    }
    let now = app.clock.now();
    let dated = DatedSource {
        source,
        created_at: now,
        updated_at: now,
    };
    let mut ops = vec![stored::save_custom_op(caller.org_id, &dated, None)?];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "source.created",
            "source",
            Some(id),
            format!("defined the sending source \"{}\"", dated.source.name),
        ),
    )?);
    app.store.transact(ops).await?;
    reidentify(app, caller.org_id).await;
    Ok(super::own_view(&dated))
}

/// Updates one of the organization's sources with the fields sent.
pub async fn update(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    input: CustomSourceRequest,
) -> Result<SourceView, ServiceError> {
    check_caller(caller)?;
    let current = own(app, caller, id).await?;
    let mut next = current.value.clone();
    apply(&mut next.source, &input)?;
    next.updated_at = app.clock.now();
    let mut ops = vec![stored::save_custom_op(
        caller.org_id,
        &next,
        Some(current.version),
    )?];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "source.updated",
            "source",
            Some(id),
            format!("changed the sending source \"{}\"", next.source.name),
        ),
    )?);
    commit(app, ops).await?;
    reidentify(app, caller.org_id).await;
    Ok(super::own_view(&next))
}

/// Deletes one of the organization's sources; its senders become unknown again.
pub async fn delete(app: &AppState, caller: &Caller, id: Uuid) -> Result<(), ServiceError> {
    check_caller(caller)?;
    let current = own(app, caller, id).await?;
    let mut ops = vec![stored::delete_custom_op(caller.org_id, id, current.version)];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "source.deleted",
            "source",
            Some(id),
            format!(
                "removed the sending source \"{}\"",
                current.value.source.name
            ),
        ),
    )?);
    commit(app, ops).await?;
    reidentify(app, caller.org_id).await;
    Ok(())
}

async fn own(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<mailward_store::Versioned<DatedSource>, ServiceError> {
    stored::get_custom(app.store.as_ref(), caller.org_id, id)
        .await?
        .ok_or_else(|| ServiceError::not_found("source"))
}

async fn commit(
    app: &AppState,
    ops: Vec<mailward_domain::store::WriteOp>,
) -> Result<(), ServiceError> {
    match app.store.transact(ops).await {
        Ok(()) => Ok(()),
        Err(e) if e.is_conflict() => Err(ServiceError::conflict(
            "the source changed meanwhile; read it and retry",
        )),
        Err(e) => Err(e.into()),
    }
}
