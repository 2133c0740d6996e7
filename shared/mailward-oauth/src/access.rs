//! Turning an MCP request's access token into a [`Caller`]: signature, issuer, expiry and
//! audience (see [`super::signing::verify`]), then the connection (revoked → refused at once),
//! the membership (removed → refused; demoted → the lower role) and the organization's state.

use super::signing::{self, AccessClaims, TokenRejection};
use super::{OAuthError, flow::weaker};
use mailward_api_types::common::ApiVersion;
use mailward_app::caller::{Caller, Credential};
use mailward_app::state::AppState;
use mailward_domain::identity::amr_has_mfa;
use mailward_domain::model::OrgState;
use mailward_store::{accounts, oauth, orgs};

/// Why a token does not open the MCP endpoint (each answers 401).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AccessRejection {
    /// The token itself is refused.
    #[error("{0}")]
    Token(TokenRejection),
    /// Its connection was revoked.
    #[error("this connection was revoked; sign in again")]
    Revoked,
    /// The person is no longer a member of the token's organization.
    #[error("you are no longer a member of this organization; sign in again")]
    NotMember,
    /// The organization is suspended or being deleted.
    #[error("the organization is not active")]
    Inactive,
    /// A token without an organization where one is needed (`/mcp`; 403).
    #[error(
        "this connection chose no organization, so it serves only the directory endpoint ({{mcp_url}}/directory); connect again and pick an organization for this endpoint"
    )]
    NoOrganization,
    /// A token without an organization, for a person with no or several active organizations
    /// (the directory resolves only one; 403).
    #[error(
        "this connection chose no organization and your account has {0} active organizations; connect again and pick one"
    )]
    OrganizationUnclear(usize),
    /// The organization requires MFA and the sign-in behind the connection did not use it (403).
    #[error(
        "this organization requires multi-factor authentication and this connection's sign-in did not use it: enrol an authenticator app in the application (POST /account/mfa/totp), then connect again"
    )]
    MfaRequired,
}

impl AccessRejection {
    /// Whether the token is valid but cannot be used here (403), rather than refused (401).
    pub fn is_forbidden(&self) -> bool {
        matches!(
            self,
            Self::NoOrganization | Self::OrganizationUnclear(_) | Self::MfaRequired
        )
    }
}

/// What a token without an organization gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WithoutOrganization {
    /// Refused (the main endpoint: SPEC §5 rule 8).
    Refuse,
    /// The person's single active organization (the directory endpoint, SPEC §4.10).
    SingleOrganization,
}

/// A verified MCP caller.
#[derive(Debug, Clone)]
pub struct McpCaller {
    /// The caller, as every service takes it.
    pub caller: Caller,
    /// The token's claims (scopes, subject).
    pub claims: AccessClaims,
}

impl McpCaller {
    /// Whether the token carries `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.claims.scope.split(' ').any(|s| s == scope)
    }
}

/// Verifies `token` for one of `audiences`.
pub async fn authenticate(
    app: &AppState,
    issuer: &str,
    audiences: &[String],
    token: &str,
    without: WithoutOrganization,
) -> Result<Result<McpCaller, AccessRejection>, OAuthError> {
    let claims = match signing::verify(app, token, issuer, audiences).await? {
        Ok(claims) => claims,
        Err(rejection) => return Ok(Err(AccessRejection::Token(rejection))),
    };
    let store = app.store.as_ref();
    let Some(connection) = oauth::get_connection(store, claims.sub, claims.cid).await? else {
        return Ok(Err(AccessRejection::Revoked));
    };
    let mfa = amr_has_mfa(&connection.value.amr);
    let org = match (claims.org, without) {
        (Some(org), _) => org,
        (None, WithoutOrganization::Refuse) => return Ok(Err(AccessRejection::NoOrganization)),
        (None, WithoutOrganization::SingleOrganization) => {
            let choices = super::flow::choices(app, claims.sub).await?;
            match choices.as_slice() {
                [(membership, _)] => membership.org_id,
                other => return Ok(Err(AccessRejection::OrganizationUnclear(other.len()))),
            }
        }
    };
    let Some(membership) = accounts::membership(store, org, claims.sub).await? else {
        return Ok(Err(AccessRejection::NotMember));
    };
    let suspended = match orgs::get(store, org).await? {
        Some(org) if org.value.state == OrgState::Active => {
            if org.value.require_mfa && !mfa {
                return Ok(Err(AccessRejection::MfaRequired));
            }
            org.value.suspension.is_some()
        }
        _ => return Ok(Err(AccessRejection::Inactive)),
    };
    // While staff hold the organization suspended, an assistant reads as a viewer does.
    let role = if suspended {
        mailward_domain::model::Role::Viewer
    } else {
        weaker(claims.role, membership.role())
    };
    let caller = Caller {
        org_id: org,
        credential: Credential::Session {
            account_id: claims.sub,
            role,
            mfa,
            session_id: None,
        },
        version: ApiVersion::LATEST,
        groups: membership.group_limit(),
    };
    Ok(Ok(McpCaller { caller, claims }))
}
