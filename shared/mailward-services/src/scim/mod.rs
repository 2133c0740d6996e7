//! SCIM 2.0 provisioning (RFC 7643/7644), an extension of SPEC §5: the organization's identity
//! provider creates, updates and deprovisions members (`Users`) and their group limits
//! (`Groups`, Mailward's groups) with a bearer token of its own kind, created by an
//! administrator and shown once. Every change goes through the member and group operations, so
//! it reaches the activity log (actor `API_KEY`, the SCIM token's id) and the webhook events.

pub mod groups;
pub mod users;

use crate::caller::{Caller, Credential};
use crate::error::{ErrorKind, ServiceError};
use crate::state::AppState;
use mailward_api_types::ApiVersion;
use mailward_domain::model::ApiKeyAccess;
use mailward_domain::scim::ScimToken;
use mailward_domain::secrets;
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

/// The core User schema.
pub const USER_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:User";
/// The core Group schema.
pub const GROUP_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";
/// The list response message.
pub const LIST_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
/// The error message.
pub const ERROR_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:Error";
/// The PATCH message.
pub const PATCH_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
/// Most resources in one page.
pub const MAX_COUNT: usize = 200;

/// A SCIM error (RFC 7644 §3.12): HTTP status, `scimType` and detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimError {
    pub status: u16,
    pub scim_type: Option<&'static str>,
    pub detail: String,
}

impl ScimError {
    /// A 400 with `scimType`.
    pub fn bad(scim_type: &'static str, detail: impl Into<String>) -> Self {
        Self {
            status: 400,
            scim_type: Some(scim_type),
            detail: detail.into(),
        }
    }

    /// A 404.
    pub fn not_found(what: &str) -> Self {
        Self {
            status: 404,
            scim_type: None,
            detail: format!("{what} not found"),
        }
    }

    /// The error body.
    pub fn body(&self) -> Value {
        let mut body = json!({
            "schemas": [ERROR_SCHEMA],
            "status": self.status.to_string(),
            "detail": self.detail,
        });
        if let Some(t) = self.scim_type {
            body["scimType"] = json!(t);
        }
        body
    }
}

impl From<ServiceError> for ScimError {
    fn from(e: ServiceError) -> Self {
        let detail = match e.param_name() {
            Some(param) => format!("{}: {}", param, e.message()),
            None => e.message().to_owned(),
        };
        let (status, scim_type) = match e.kind() {
            ErrorKind::Invalid => (400, Some("invalidValue")),
            ErrorKind::NotFound => (404, None),
            ErrorKind::Conflict if e.code() == "last_admin" => (400, Some("mutability")),
            ErrorKind::Conflict => (409, Some("uniqueness")),
            ErrorKind::Forbidden => (403, None),
            ErrorKind::TooManyRequests => (429, None),
            _ => (503, None),
        };
        Self {
            status,
            scim_type,
            detail,
        }
    }
}

impl From<mailward_domain::store::StoreError> for ScimError {
    fn from(e: mailward_domain::store::StoreError) -> Self {
        ServiceError::from(e).into()
    }
}

/// The caller a SCIM token acts as: its organization, as an API key with read-write access (the
/// activity log's `API_KEY` actor is the token's id), limited to no group.
pub fn caller_for(org: Uuid, token: Uuid) -> Caller {
    Caller {
        org_id: org,
        credential: Credential::ApiKey {
            key_id: token,
            access: ApiKeyAccess::ReadWrite,
        },
        version: ApiVersion::LATEST,
        groups: None,
    }
}

/// Resolves a presented SCIM bearer token to its caller; `None` when unknown or revoked.
pub async fn authenticate(app: &AppState, token: &str) -> Result<Option<Caller>, ServiceError> {
    if !token.starts_with("mwscim_") {
        return Ok(None);
    }
    let Some(lookup) = mailward_store::scim::find_token(app.store.as_ref(), token).await? else {
        return Ok(None);
    };
    let active = mailward_store::orgs::get(app.store.as_ref(), lookup.org_id)
        .await?
        .is_some_and(|o| o.value.state == mailward_domain::model::OrgState::Active);
    Ok(active.then(|| caller_for(lookup.org_id, lookup.token_id)))
}

fn token_view(token: &ScimToken) -> mailward_api_types::identity::ScimTokenView {
    mailward_api_types::identity::ScimTokenView {
        id: token.id,
        name: token.name.clone(),
        last_four: token.last_four.clone(),
        created_at: token.created_at,
        token: None,
    }
}

/// `POST /scim-tokens`: a new token, shown once.
pub async fn create_token(
    app: &AppState,
    caller: &Caller,
    input: mailward_api_types::identity::ScimTokenRequest,
) -> Result<mailward_api_types::identity::ScimTokenView, ServiceError> {
    caller.require_org_admin()?;
    let name = input.name.trim();
    if name.is_empty() || input.name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(ServiceError::invalid(
            "name",
            "1 to 100 characters without control characters",
        ));
    }
    if mailward_store::scim::tokens(app.store.as_ref(), caller.org_id)
        .await?
        .len()
        >= 10
    {
        return Err(ServiceError::new(
            ErrorKind::Conflict,
            "limit_reached",
            "an organization has at most 10 SCIM tokens; delete one first",
        ));
    }
    let value = secrets::new_opaque_token("mwscim_");
    let token = ScimToken {
        id: Uuid::new_v4(),
        org_id: caller.org_id,
        name: name.to_owned(),
        token_hash: secrets::sha256_hex(value.as_bytes()),
        last_four: secrets::last_four(&value),
        created_by: caller.account_id(),
        created_at: app.clock.now(),
    };
    mailward_store::scim::create_token(app.store.as_ref(), &token).await?;
    let change = crate::activity::Change::new(
        "organization.updated",
        "organization",
        Some(caller.org_id),
        format!("SCIM token {:?} ({}) created", token.name, token.id),
    );
    app.store
        .transact(crate::activity::ops(app, caller, change)?)
        .await?;
    Ok(mailward_api_types::identity::ScimTokenView {
        token: Some(value),
        ..token_view(&token)
    })
}

/// `GET /scim-tokens`.
pub async fn list_tokens(
    app: &AppState,
    caller: &Caller,
) -> Result<mailward_api_types::identity::ScimTokenList, ServiceError> {
    caller.require_org_admin()?;
    let mut data: Vec<_> = mailward_store::scim::tokens(app.store.as_ref(), caller.org_id)
        .await?
        .iter()
        .map(token_view)
        .collect();
    data.sort_by_key(|t| std::cmp::Reverse(t.created_at));
    Ok(mailward_api_types::identity::ScimTokenList { data })
}

/// `DELETE /scim-tokens/{id}`: the token stops working at once.
pub async fn delete_token(app: &AppState, caller: &Caller, id: Uuid) -> Result<(), ServiceError> {
    caller.require_org_admin()?;
    if !mailward_store::scim::delete_token(app.store.as_ref(), caller.org_id, id).await? {
        return Err(ServiceError::not_found("SCIM token"));
    }
    let change = crate::activity::Change::new(
        "organization.updated",
        "organization",
        Some(caller.org_id),
        format!("SCIM token {id} deleted"),
    );
    app.store
        .transact(crate::activity::ops(app, caller, change)?)
        .await?;
    Ok(())
}

/// `meta` of a resource.
pub fn meta(
    kind: &str,
    location: String,
    created: OffsetDateTime,
    modified: OffsetDateTime,
    version: u64,
) -> Value {
    let format = &time::format_description::well_known::Rfc3339;
    json!({
        "resourceType": kind,
        "created": created.format(format).unwrap_or_default(),
        "lastModified": modified.format(format).unwrap_or_default(),
        "location": location,
        "version": format!("W/\"{version}\""),
    })
}

/// A list response page (`startIndex` 1-based).
pub fn list_response(all: Vec<Value>, start_index: usize, count: usize) -> Value {
    let start = start_index.max(1);
    let page: Vec<Value> = all
        .iter()
        .skip(start - 1)
        .take(count.min(MAX_COUNT))
        .cloned()
        .collect();
    json!({
        "schemas": [LIST_SCHEMA],
        "totalResults": all.len(),
        "startIndex": start,
        "itemsPerPage": page.len(),
        "Resources": page,
    })
}

/// A filter Mailward answers: `<attribute> eq "<value>"` (RFC 7644 §3.4.2.2), the attribute
/// one of `allowed`. Anything else is `invalidFilter`.
pub fn parse_filter(raw: &str, allowed: &[&str]) -> Result<(String, String), ScimError> {
    let raw = raw.trim();
    let mut parts = raw.splitn(3, char::is_whitespace);
    let (Some(attr), Some(op), Some(value)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(ScimError::bad(
            "invalidFilter",
            "filter must be: attribute eq \"value\"",
        ));
    };
    let Some(attr) = allowed.iter().find(|a| a.eq_ignore_ascii_case(attr)) else {
        return Err(ScimError::bad(
            "invalidFilter",
            format!(
                "filter on {attr} is not supported; use {}",
                allowed.join(" or ")
            ),
        ));
    };
    if !op.eq_ignore_ascii_case("eq") {
        return Err(ScimError::bad(
            "invalidFilter",
            "only the eq operator is supported",
        ));
    }
    let value: String = serde_json::from_str(value.trim())
        .map_err(|_| ScimError::bad("invalidFilter", "the value is a JSON string"))?;
    Ok(((*attr).to_owned(), value))
}

/// `GET /scim/v2/ServiceProviderConfig` (RFC 7643 §5).
pub fn service_provider_config(base: &str) -> Value {
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
        "documentationUri": format!("{base}/docs"),
        "patch": {"supported": true},
        "bulk": {"supported": false, "maxOperations": 0, "maxPayloadSize": 0},
        "filter": {"supported": true, "maxResults": MAX_COUNT},
        "changePassword": {"supported": false},
        "sort": {"supported": false},
        "etag": {"supported": false},
        "authenticationSchemes": [{
            "type": "oauthbearertoken",
            "name": "SCIM token",
            "description": "A bearer token (mwscim_…) an administrator creates with POST /scim-tokens",
            "primary": true,
        }],
        "meta": {
            "resourceType": "ServiceProviderConfig",
            "location": format!("{base}/scim/v2/ServiceProviderConfig"),
        },
    })
}

/// The resource types (RFC 7643 §6).
pub fn resource_types(base: &str) -> Vec<Value> {
    [
        ("User", "/Users", USER_SCHEMA),
        ("Group", "/Groups", GROUP_SCHEMA),
    ]
    .into_iter()
    .map(|(name, endpoint, schema)| {
        json!({
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
            "id": name,
            "name": name,
            "description": name,
            "endpoint": endpoint,
            "schema": schema,
            "meta": {
                "resourceType": "ResourceType",
                "location": format!("{base}/scim/v2/ResourceTypes/{name}"),
            },
        })
    })
    .collect()
}

/// The schemas Mailward serves (RFC 7643 §7), reduced to the attributes it keeps: the User and
/// Group definitions of RFC 7643 §8.7.1 (`schemas.json`, generated from scim2-models' copy).
pub fn schemas(base: &str) -> Vec<Value> {
    let mut all: Vec<Value> =
        serde_json::from_str(include_str!("schemas.json")).unwrap_or_default();
    for schema in &mut all {
        let id = schema["id"].as_str().unwrap_or_default().to_owned();
        schema["meta"] = json!({
            "resourceType": "Schema",
            "location": format!("{base}/scim/v2/Schemas/{id}"),
        });
    }
    all
}

/// One PATCH operation (RFC 7644 §3.5.2), `op` lower-cased.
#[derive(Debug, Clone, PartialEq)]
pub struct PatchOperation {
    pub op: String,
    pub path: Option<String>,
    pub value: Value,
}

/// The operations of a PATCH body.
pub fn patch_operations(body: &Value) -> Result<Vec<PatchOperation>, ScimError> {
    let schemas_ok = body["schemas"]
        .as_array()
        .is_some_and(|s| s.iter().any(|v| v == PATCH_SCHEMA));
    if !schemas_ok {
        return Err(ScimError::bad(
            "invalidSyntax",
            format!("schemas must contain {PATCH_SCHEMA}"),
        ));
    }
    let ops = body["Operations"]
        .as_array()
        .ok_or_else(|| ScimError::bad("invalidSyntax", "Operations is a list"))?;
    ops.iter()
        .map(|op| {
            let kind = op["op"].as_str().unwrap_or_default().to_ascii_lowercase();
            if !matches!(kind.as_str(), "add" | "replace" | "remove") {
                return Err(ScimError::bad(
                    "invalidSyntax",
                    "op is add, replace or remove",
                ));
            }
            Ok(PatchOperation {
                op: kind,
                path: op["path"].as_str().map(str::to_owned),
                value: op.get("value").cloned().unwrap_or(Value::Null),
            })
        })
        .collect()
}

/// The two resource kinds, for the routes that treat them alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Users,
    Groups,
}

/// A page of a resource list: the filter and the 1-based window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Page {
    pub filter: Option<String>,
    pub start_index: Option<usize>,
    pub count: Option<usize>,
}

impl Kind {
    /// Lists the resources.
    pub async fn list(
        self,
        app: &AppState,
        caller: &Caller,
        base: &str,
        page: &Page,
    ) -> Result<Value, ScimError> {
        let (filter, start, count) = (
            page.filter.as_deref(),
            page.start_index.unwrap_or(1),
            page.count.unwrap_or(MAX_COUNT),
        );
        match self {
            Kind::Users => users::list(app, caller, base, filter, start, count).await,
            Kind::Groups => groups::list(app, caller, base, filter, start, count).await,
        }
    }

    /// Creates one: the status and the resource.
    pub async fn create(
        self,
        app: &AppState,
        caller: &Caller,
        base: &str,
        body: &Value,
    ) -> Result<(u16, Value), ScimError> {
        match self {
            Kind::Users => users::create(app, caller, base, body).await,
            Kind::Groups => groups::create(app, caller, base, body).await,
        }
    }

    /// Reads one.
    pub async fn get(
        self,
        app: &AppState,
        caller: &Caller,
        base: &str,
        id: &str,
    ) -> Result<Value, ScimError> {
        match self {
            Kind::Users => users::get(app, caller, base, id).await,
            Kind::Groups => groups::get(app, caller, base, id).await,
        }
    }

    /// Replaces (`patch` false) or modifies one.
    pub async fn change(
        self,
        app: &AppState,
        caller: &Caller,
        base: &str,
        (id, patch): (&str, bool),
        body: &Value,
    ) -> Result<Value, ScimError> {
        match (self, patch) {
            (Kind::Users, false) => users::replace(app, caller, base, id, body).await,
            (Kind::Users, true) => users::patch(app, caller, base, id, body).await,
            (Kind::Groups, false) => groups::replace(app, caller, base, id, body).await,
            (Kind::Groups, true) => groups::patch(app, caller, base, id, body).await,
        }
    }

    /// Deletes one.
    pub async fn delete(self, app: &AppState, caller: &Caller, id: &str) -> Result<(), ScimError> {
        match self {
            Kind::Users => users::delete(app, caller, id).await,
            Kind::Groups => groups::delete(app, caller, id).await,
        }
    }
}
