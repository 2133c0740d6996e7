//! Who is calling, and what they may do (SPEC §5). Every operation takes a [`Caller`]: the
//! organization comes from the credential (never from input), and the permission checks live
//! here, once, for the REST routes, the MCP tools and the CLI alike.

use crate::error::{ErrorKind, ServiceError};
use mailward_api_types::ApiVersion;
use mailward_domain::admin::ActorType;
use mailward_domain::model::{ApiKeyAccess, Role};
use uuid::Uuid;

/// What the caller proved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// An organization API key.
    ApiKey {
        /// Key id.
        key_id: Uuid,
        /// Access level.
        access: ApiKeyAccess,
    },
    /// A signed-in person (dashboard session or an agent acting for one).
    Session {
        /// The person's account.
        account_id: Uuid,
        /// Role in the organization (from the stored membership).
        role: Role,
        /// Whether the sign-in completed multi-factor authentication.
        mfa: bool,
        /// The stored dashboard session the token names (`sid`); `None` for an MCP access
        /// token and for the local CLI's operator tokens.
        session_id: Option<Uuid>,
    },
}

/// A named permission (SPEC §5 rule 13 names the OAuth scopes; the permission behind each comes
/// from the caller's role or key access, never from input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// `domains:read`.
    DomainsRead,
    /// `groups:read`.
    GroupsRead,
    /// `tasks:read`.
    TasksRead,
    /// `dmarc_reports:read`.
    DmarcReportsRead,
    /// `sources:update`: curating the sending-source catalogue's instructions (SPEC §2.8).
    SourcesUpdate,
}

impl Permission {
    /// The scope name.
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::DomainsRead => "domains:read",
            Permission::GroupsRead => "groups:read",
            Permission::TasksRead => "tasks:read",
            Permission::DmarcReportsRead => "dmarc_reports:read",
            Permission::SourcesUpdate => "sources:update",
        }
    }
}

/// An authenticated caller acting on one organization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The organization, from the credential.
    pub org_id: Uuid,
    /// How the caller authenticated.
    pub credential: Credential,
    /// The API version in force (payload shapes, pinned webhook versions).
    pub version: ApiVersion,
    /// The groups a member is limited to (from the membership); `None` for every domain (API
    /// keys, and members without a limit).
    pub groups: Option<Vec<Uuid>>,
}

impl Caller {
    /// Who the activity log names for this caller.
    pub fn actor(&self) -> (ActorType, Option<Uuid>) {
        match &self.credential {
            Credential::ApiKey { key_id, .. } => (ActorType::ApiKey, Some(*key_id)),
            Credential::Session { account_id, .. } => (ActorType::User, Some(*account_id)),
        }
    }

    /// Whether the caller may see a domain of `group` (`None`: an ungrouped domain). A member
    /// limited to groups sees only their domains; everything they cannot see is "not found".
    pub fn sees_group(&self, group: Option<Uuid>) -> bool {
        match &self.groups {
            None => true,
            Some(allowed) => group.is_some_and(|g| allowed.contains(&g)),
        }
    }

    /// Whether the caller is limited to some groups.
    pub fn is_group_limited(&self) -> bool {
        self.groups.is_some()
    }

    /// Refuses a caller limited to groups (organization-wide actions: members, invitations,
    /// groups themselves).
    pub fn require_unlimited(&self) -> Result<(), ServiceError> {
        if self.is_group_limited() {
            return Err(ServiceError::new(
                ErrorKind::Forbidden,
                "forbidden",
                "a member limited to groups cannot make organization-wide changes",
            ));
        }
        Ok(())
    }

    /// The rate-limit subject (SPEC §5.12): per key, or per session subject.
    pub fn subject(&self) -> String {
        match &self.credential {
            Credential::ApiKey { key_id, .. } => format!("key:{key_id}"),
            Credential::Session { account_id, .. } => format!("sub:{account_id}"),
        }
    }

    /// The signed-in account, when the caller is a person.
    pub fn account_id(&self) -> Option<Uuid> {
        match &self.credential {
            Credential::Session { account_id, .. } => Some(*account_id),
            Credential::ApiKey { .. } => None,
        }
    }

    /// Whether the caller holds `permission`: every member and key reads; only administrators
    /// and read-write keys curate sources.
    pub fn has(&self, permission: Permission) -> bool {
        match permission {
            Permission::DomainsRead
            | Permission::GroupsRead
            | Permission::TasksRead
            | Permission::DmarcReportsRead => true,
            // Curating the shared catalogue is Mailward staff's (a staff credential, never a
            // `Caller` of an organization): no customer credential holds it.
            Permission::SourcesUpdate => false,
        }
    }

    /// Refuses a caller without `permission` (403 naming it).
    pub fn require(&self, permission: Permission) -> Result<(), ServiceError> {
        if self.has(permission) {
            Ok(())
        } else {
            Err(ServiceError::forbidden(format!(
                "this action needs the {} permission",
                permission.as_str()
            )))
        }
    }

    /// Refuses read-only keys and viewers.
    pub fn require_write(&self) -> Result<(), ServiceError> {
        match &self.credential {
            Credential::ApiKey {
                access: ApiKeyAccess::ReadWrite,
                ..
            } => Ok(()),
            Credential::Session { role, .. } if role.can_write() => Ok(()),
            _ => Err(ServiceError::forbidden("this credential may only read")),
        }
    }

    /// Refuses everything but read-write keys and administrators.
    pub fn require_admin(&self) -> Result<(), ServiceError> {
        match &self.credential {
            Credential::ApiKey {
                access: ApiKeyAccess::ReadWrite,
                ..
            } => Ok(()),
            Credential::Session {
                role: Role::Admin, ..
            } => Ok(()),
            _ => Err(ServiceError::forbidden(
                "this action needs an administrator or a read-write API key",
            )),
        }
    }

    /// Organization-wide administration (the organization itself and its child organizations,
    /// API keys, webhook endpoints, DNS connections, members, invitations, groups): an
    /// administrator or a read-write key, never a member limited to groups, whose role is
    /// bounded by those groups. Every organization-wide write calls this (or
    /// [`Caller::require_session_org_admin`]); domain-scoped writes check the domain's group.
    pub fn require_org_admin(&self) -> Result<(), ServiceError> {
        self.require_admin()?;
        self.require_unlimited()
    }

    /// [`Caller::require_org_admin`] for what only a signed-in person may do; returns the
    /// account.
    pub fn require_session_org_admin(&self) -> Result<Uuid, ServiceError> {
        let account = self.require_session_admin()?;
        self.require_unlimited()?;
        Ok(account)
    }

    /// Requires a signed-in administrator (not an API key); returns the account.
    pub fn require_session_admin(&self) -> Result<Uuid, ServiceError> {
        match &self.credential {
            Credential::Session {
                account_id,
                role: Role::Admin,
                ..
            } => Ok(*account_id),
            Credential::Session { .. } => Err(ServiceError::forbidden(
                "this action needs an administrator",
            )),
            Credential::ApiKey { .. } => Err(ServiceError::forbidden(
                "this action needs a signed-in person; API keys cannot perform it",
            )),
        }
    }

    /// Requires an administrator who signed in with MFA (not an API key); `param` names the
    /// field whose change needs it.
    pub fn require_mfa_admin(&self, param: &'static str) -> Result<(), ServiceError> {
        match &self.credential {
            Credential::Session {
                role: Role::Admin,
                mfa: true,
                ..
            } => Ok(()),
            _ => Err(ServiceError::new(
                ErrorKind::Forbidden,
                "mfa_confirmation_required",
                format!(
                    "{param} can be changed only by an administrator signed in with MFA, not with an API key"
                ),
            )
            .param(param)),
        }
    }

    /// The signed-in person, for what belongs to a person rather than to the organization
    /// (their second factor, sessions, connections): API keys get 403 `session_required`.
    pub fn require_person(&self, what: &'static str) -> Result<Uuid, ServiceError> {
        match &self.credential {
            Credential::Session { account_id, .. } => Ok(*account_id),
            Credential::ApiKey { .. } => Err(ServiceError::new(
                ErrorKind::Forbidden,
                "session_required",
                format!(
                    "{what} belong to a person: call this with a dashboard session (Bearer), not an API key"
                ),
            )),
        }
    }

    /// The stored dashboard session the caller's token names, if any.
    pub fn session_id(&self) -> Option<Uuid> {
        match &self.credential {
            Credential::Session { session_id, .. } => *session_id,
            Credential::ApiKey { .. } => None,
        }
    }

    /// Ids naming an organization must be the credential's own; any other id is 404 (the
    /// caller cannot learn whether it exists).
    pub fn require_own_org(&self, org: Uuid) -> Result<(), ServiceError> {
        if org == self.org_id {
            Ok(())
        } else {
            Err(ServiceError::not_found("organization"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(credential: Credential) -> Caller {
        Caller {
            org_id: Uuid::new_v4(),
            credential,
            version: ApiVersion::LATEST,
            groups: None,
        }
    }

    #[test]
    fn read_only_keys_and_viewers_never_write() {
        let read_only = caller(Credential::ApiKey {
            key_id: Uuid::new_v4(),
            access: ApiKeyAccess::ReadOnly,
        });
        let viewer = caller(Credential::Session {
            account_id: Uuid::new_v4(),
            role: Role::Viewer,
            mfa: true,
            session_id: None,
        });
        for c in [&read_only, &viewer] {
            assert_eq!(c.require_write().unwrap_err().kind(), ErrorKind::Forbidden);
            assert_eq!(c.require_admin().unwrap_err().kind(), ErrorKind::Forbidden);
        }
        let editor = caller(Credential::Session {
            account_id: Uuid::new_v4(),
            role: Role::Editor,
            mfa: false,
            session_id: None,
        });
        assert!(editor.require_write().is_ok());
        assert!(editor.require_admin().is_err());
        assert!(editor.has(Permission::DomainsRead) && !editor.has(Permission::SourcesUpdate));
        assert!(viewer.has(Permission::TasksRead) && !viewer.has(Permission::SourcesUpdate));
        // Curating the shared catalogue is staff's: not even an administrator holds it.
        let admin = caller(Credential::Session {
            account_id: Uuid::new_v4(),
            role: Role::Admin,
            mfa: true,
            session_id: None,
        });
        assert!(admin.require_admin().is_ok() && !admin.has(Permission::SourcesUpdate));
        assert_eq!(
            read_only
                .require(Permission::SourcesUpdate)
                .unwrap_err()
                .code(),
            "forbidden"
        );
        assert_eq!(
            editor.require_mfa_admin("require_mfa").unwrap_err().code(),
            "mfa_confirmation_required"
        );
    }
}

/// A member of Mailward staff, from a staff session (`/staff/...`): never a member of any
/// organization by that credential, and never a `Caller`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaffMember {
    /// The staff person's account.
    pub account_id: Uuid,
    /// Their address (what the activity log shows for staff actions).
    pub email: String,
}
