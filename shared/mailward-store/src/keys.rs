//! The single-table key layout (DESIGN.md §3). Every key string is built here.
//!
//! | item | pk | sk | gsi1 (pk / sk) |
//! |---|---|---|---|
//! | organization | `ORG#<org>` | `META` | |
//! | membership | `ORG#<org>` | `MEMBER#<account>` | `ACCOUNTID#<account>` / `ORG#<org>` |
//! | API key metadata | `ORG#<org>` | `APIKEY#<key id>` | |
//! | API key lookup | `APIKEY#<sha256 of key>` | `APIKEY` | |
//! | account | `ACCOUNT#<email>` | `ACCOUNT` | `ACCOUNTID#<account>` / `ACCOUNT` |
//! | signup challenge (TTL 15 min) | `SIGNUP#<id>` | `SIGNUP` | |
//! | signup codes per address (TTL 1 h) | `SIGNUPRATE#<email>` | `<hour start>` | |
//! | OAuth sign-in challenge (TTL 15 min) | `OAUTHLOGIN#<id>` | `LOGIN` | |
//! | OAuth authorization code (TTL) | `OAUTHCODE#<sha256 of code>` | `CODE` | |
//! | OAuth connection (refresh-token family) | `OAUTHCONN#<account>` | `<connection id>` | |
//! | OAuth refresh-token lookup (TTL 90 days) | `OAUTHREFRESH#<sha256 of token>` | `REFRESH` | |
//! | access-token signing key | `OAUTHKEYS` | `KEY#<kid>` | |
//! | TOTP factor of an account | `IDENTITY#<account>` | `TOTP` | |
//! | dashboard session (TTL: its expiry) | `IDENTITY#<account>` | `SESSION#<id>` | |
//! | single sign-on connection | `ORG#<org>` | `SSO` | |
//! | billing record (customer, subscription state) | `ORG#<org>` | `BILLING` | |
//! | payment-provider event processed (TTL 30 days) | `BILLINGEVENT#<event id>` | `EVENT` | |
//! | local payments adapter object (session, customer, subscription) | `LOCALPAY#<id>` | `LOCALPAY` | |
//! | SCIM token metadata | `ORG#<org>` | `SCIMTOKEN#<id>` | |
//! | SCIM token lookup | `SCIMTOKEN#<sha256 of token>` | `SCIMTOKEN` | |
//! | SCIM-provisioned user | `ORG#<org>` | `SCIMUSER#<account>` | |
//! | verified single sign-on domain (routing by email) | `SSODOMAIN#<name>` | `ORG#<org>` | |
//! | single sign-on attempt (TTL 10 min) | `SSOSTATE#<sha256 of state>` | `STATE` | |
//! | rate-limit window (TTL) | `RATE#<scope>#<subject>` | `<window start>` | |
//! | report mailbox connection | `ORG#<org>` | `MAILBOX#<id>` | `MAILBOXES` / `<org>#<id>` |
//! | alert rule | `ORG#<org>` | `ALERTRULE#<id>` | |
//! | scheduled report settings | `ORG#<org>` | `REPORTSET#<id>` | `REPORTSETTINGS` / `<next send unix, 12 digits>#<org>#<id>` |
//! | alert (id a UUIDv7: time-ordered; TTL 90 days once resolved) | `ORG#<org>` | `ALERT#<id>` | |
//! | open alert of a rule on a domain (one per subject) | `ORG#<org>` | `ALERTOPEN#<rule>#<domain>#<subject>` | |
//! | domain | `ORG#<org>` | `DOMAIN#<id>` | `SWEEP#<shard>` / `<next check unix>#<org>#<id>` |
//! | deleted domain whose partition is still to be emptied | `ORG#<org>` | `DOMAINGONE#<domain>` | |
//! | domain name claim (uniqueness) | `ORG#<org>` | `DOMAINNAME#<name>` | |
//! | domain name index (report attribution) | `DOMAINNAME#<name>` | `ORG#<org>` | |
//! | DNS snapshot | `ORG#<org>#D#<domain>` | `SNAPSHOT#<domain>#<type>#<unix ms>#<id>` | |
//! | latest snapshot per type | `ORG#<org>#D#<domain>` | `SNAPLATEST#<domain>#<type>` | |
//! | catalogue source (written once per catalogue version) | `SOURCES` | `SOURCE#<external id>` | |
//! | catalogue version | `SOURCES` | `VERSION` | |
//! | source promoted from a candidate | `SOURCES` | `PROMOTED#<external id>` | |
//! | curation of a source's instructions | `SOURCES` | `CURATION#<external id>#<kind>` | |
//! | an organization's own source | `ORG#<org>` | `CUSTOMSOURCE#<id>` | |
//! | candidate evidence of one watched domain | `CANDIDATES` | `EVIDENCE#<name>#<domain>` | `CANDFROM#<domain>` / `<name>` |
//! | staff's review of a candidate | `CANDIDATES` | `REVIEW#<name>` | |
//! | organization created from another (index on the organization item) | | | `CHILDOF#<parent>` / `ORG#<org>` |
//! | group | `ORG#<org>` | `GROUP#<id>` | |
//! | invitation (TTL: its expiry) | `ORG#<org>` | `INVITATION#<id>` | |
//! | invitation token lookup (TTL: its expiry) | `INVITETOKEN#<sha256 of token>` | `INVITATION` | |
//! | activity log entry | `ORG#<org>` | `ACTIVITY#<unix ms>#<id>` | |
//! | activity log reference (id → entry) | `ORG#<org>` | `ACTIVITYREF#<id>` | |
//! | imported report | `ORG#<org>#D#<domain>` | `REPORT#<domain>#<kind>#<identity key>` | |
//! | source addresses of a domain in forwarders' networks (address → forwarding type) | `ORG#<org>#D#<domain>` | `REPFWD#<domain>` | |
//! | report rows of a day (chunks of per-source rows) | `ORG#<org>#D#<domain>` | `REPDAY#<domain>#<yyyy-mm-dd>#<identity key>#<chunk>` | |
//! | unattributed report (no organization watches its domain) | `UNATTRIBUTED#<yyyy-mm-dd>` | `<identity key>` | |
//! | a domain's total of one report day | `ORG#<org>#D#<domain>` | `REPTOTAL#<domain>#<yyyy-mm-dd>` | |
//! | TLS report of a domain (RFC 8460, with its failure details) | `ORG#<org>#D#<domain>` | `TLSREPORT#<domain>#<id>` | |
//! | failure report of a domain (TTL: its retention) | `ORG#<org>#D#<domain>` | `FAILREPORT#<domain>#<id>` | |
//! | domain sender (DomainSource) | `ORG#<org>#D#<domain>` | `SENDER#<domain>#<id>` | |
//! | reverse-DNS name of an IP (TTL 7 days) | `PTR#<ip>` | `PTR` | |
//! | support ticket | `ORG#<org>` | `TICKET#<id>` | |
//! | support message | `ORG#<org>` | `TICKET#<ticket>#MSG#<unix ms>#<id>` | |
//! | task | `ORG#<org>` | `TASK#<domain>#<id>` | |
//! | task reference (id → domain) | `ORG#<org>` | `TASKREF#<id>` | |
//! | onboarding scan of a domain | `ORG#<org>` | `ONBOARDING#<domain>` | |
//! | webhook endpoint | `ORG#<org>` | `WEBHOOK#<id>` | |
//! | deleted webhook endpoint (TTL 30 days) | `ORG#<org>` | `WEBHOOKGONE#<id>` | |
//! | delivery attempt (TTL 30 days) | `ORG#<org>` | `DELIVERY#<endpoint>#<unix ms>#<id>` | |
//! | outbox event | `OUTBOX#<shard>` | `<unix ms>#<event id>` | |
//! | audit cache (TTL 10 min) | `AUDIT#<domain>` | `RESULT` | |
//! | activation scan (TTL 24 h) | `ACTIVATION#<domain>` | `SCAN` | |
//! | lead | `LEAD#<yyyy-mm-dd>` | `<unix ms>#<id>` | |
//! | hosted DKIM key | `ORG#<org>` | `DKIMKEY#<domain>#<id>` | |
//! | hosted-zone record set (local adapter of the hosted-zone port) | `ZONE#<name>` | `<TXT or CNAME>` | |
//! | prospecting report | `ORG#<org>` | `PROSPECT#<id>` | |
//! | prospecting report link (id → organization, for the public download) | `PROSPECT#<id>` | `LINK` | |
//!
//! Every tenant item's partition starts with `ORG#<org>`, and the organization always comes
//! from the credential, so one organization's handler cannot address another's items. A
//! domain's high-volume items (`ORG#<org>#D#<domain>`) are reached only through
//! [`crate::domain_data`], with a domain id the caller's organization was checked to own.

use uuid::Uuid;

/// Sort-key prefix of a domain's failure reports.
pub fn failure_reports_prefix(domain: Uuid) -> String {
    format!("FAILREPORT#{domain}#")
}

/// Sort key of a failure report (its id derives from the delivery: one item per message).
pub fn failure_report_sk(domain: Uuid, id: Uuid) -> String {
    format!("FAILREPORT#{domain}#{id}")
}

/// Sort-key prefix of an organization's own sources.
pub const CUSTOM_SOURCE_PREFIX: &str = "CUSTOMSOURCE#";

/// Sort key of an organization's own source.
pub fn custom_source_sk(id: Uuid) -> String {
    format!("{CUSTOM_SOURCE_PREFIX}{id}")
}

/// Partition of the catalogue candidates (global, staff's).
pub const CANDIDATES_PK: &str = "CANDIDATES";

/// Sort key of a watched domain's evidence of a candidate.
pub fn candidate_evidence_sk(name: &str, domain: Uuid) -> String {
    format!("EVIDENCE#{name}#{domain}")
}

/// Sort-key prefix of a candidate's evidence (`None`: every candidate's).
pub fn candidate_evidence_prefix(name: Option<&str>) -> String {
    name.map_or_else(|| "EVIDENCE#".to_owned(), |n| format!("EVIDENCE#{n}#"))
}

/// Sort key of staff's review of a candidate.
pub fn candidate_review_sk(name: &str) -> String {
    format!("REVIEW#{name}")
}

/// Index partition of the evidence one watched domain gave.
pub fn candidate_from_pk(domain: Uuid) -> String {
    format!("CANDFROM#{domain}")
}

/// Sort-key prefix of a domain's hosted DKIM keys.
pub fn dkim_keys_prefix(domain: Uuid) -> String {
    format!("DKIMKEY#{domain}#")
}

/// Sort key of a hosted DKIM key.
pub fn dkim_key_sk(domain: Uuid, id: Uuid) -> String {
    format!("DKIMKEY#{domain}#{id}")
}

/// Sort-key prefix of an organization's DNS connections.
pub const DNS_CONNECTIONS_PREFIX: &str = "DNSCONN#";

/// Sort key of a DNS connection.
pub fn dns_connection_sk(id: Uuid) -> String {
    format!("{DNS_CONNECTIONS_PREFIX}{id}")
}

/// Sort-key prefix of an organization's report mailbox connections.
pub const MAILBOXES_PREFIX: &str = "MAILBOX#";

/// Sort key of a report mailbox connection.
pub fn mailbox_sk(id: Uuid) -> String {
    format!("{MAILBOXES_PREFIX}{id}")
}

/// GSI1 partition listing every report mailbox connection (the poll schedule reads it).
pub const MAILBOXES_INDEX: &str = "MAILBOXES";

/// GSI1 sort key of a connection in [`MAILBOXES_INDEX`].
pub fn mailbox_index_sk(org: Uuid, id: Uuid) -> String {
    format!("{org}#{id}")
}

/// Sort-key prefix of an organization's scheduled report settings.
pub const REPORT_SETTINGS_PREFIX: &str = "REPORTSET#";

/// Sort key of a scheduled report's settings.
pub fn report_settings_sk(id: Uuid) -> String {
    format!("{REPORT_SETTINGS_PREFIX}{id}")
}

/// GSI1 partition of every scheduled report, by next send time.
pub const REPORT_SETTINGS_INDEX: &str = "REPORTSETTINGS";

/// GSI1 sort key of a report in [`REPORT_SETTINGS_INDEX`].
pub fn report_settings_index_sk(next_send: i64, org: Uuid, id: Uuid) -> String {
    format!("{:012}#{org}#{id}", next_send.max(0))
}

/// Sort-key prefix of an organization's alert rules.
pub const ALERT_RULES_PREFIX: &str = "ALERTRULE#";

/// Sort key of an alert rule.
pub fn alert_rule_sk(id: Uuid) -> String {
    format!("{ALERT_RULES_PREFIX}{id}")
}

/// Sort-key prefix of an organization's alerts.
pub const ALERTS_PREFIX: &str = "ALERT#";

/// Sort key of an alert.
pub fn alert_sk(id: Uuid) -> String {
    format!("{ALERTS_PREFIX}{id}")
}

/// Sort-key prefix of the open alerts of a rule on a domain.
pub fn alert_open_prefix(rule: Uuid, domain: Uuid) -> String {
    format!("ALERTOPEN#{rule}#{domain}#")
}

/// Sort-key prefix of every open alert of a rule.
pub fn alert_open_rule_prefix(rule: Uuid) -> String {
    format!("ALERTOPEN#{rule}#")
}

/// Sort key of the open alert of a rule on a domain about `subject`.
pub fn alert_open_sk(rule: Uuid, domain: Uuid, subject: &str) -> String {
    format!("{}{subject}", alert_open_prefix(rule, domain))
}

/// Sort key of a domain's hosted SPF state.
pub fn hosted_spf_sk(domain: Uuid) -> String {
    format!("HOSTEDSPF#{domain}")
}

/// Partition of the MTA-STS policy served for one domain name (sort key `POLICY`).
pub fn mta_sts_policy_pk(domain: &str) -> String {
    format!("MTASTS#{domain}")
}

/// Partition of the hosted-zone record sets at one name.
pub fn zone_pk(name: &str) -> String {
    format!("ZONE#{name}")
}

/// Sort-key prefix of an organization's prospecting reports.
pub const PROSPECT_PREFIX: &str = "PROSPECT#";
/// Sort key of a prospecting report in its organization's partition.
pub fn prospect_sk(id: Uuid) -> String {
    format!("{PROSPECT_PREFIX}{id}")
}
/// Partition of a prospecting report's public link.
pub fn prospect_link_pk(id: Uuid) -> String {
    format!("PROSPECT#{id}")
}
/// Sort key of a prospecting report's public link.
pub const PROSPECT_LINK_SK: &str = "LINK";

/// Index partition (GSI1) of the organizations created from `parent`.
pub fn children_gsi(parent: Uuid) -> String {
    format!("CHILDOF#{parent}")
}

/// Shards of the index of every organization (GSI2), read by the daily jobs and staff.
pub const ORG_INDEX_SHARDS: u32 = 4;

/// GSI2 partition of the organization index shard `org` falls in.
pub fn org_index_pk(org: Uuid) -> String {
    let shard = org.as_u128() % u128::from(ORG_INDEX_SHARDS);
    format!("ORGS#{shard}")
}

/// GSI2 partition of one shard of the organization index.
pub fn org_index_shard_pk(shard: u32) -> String {
    format!("ORGS#{shard}")
}

/// Partition of an organization's items.
pub fn org_pk(org: Uuid) -> String {
    format!("{ORG_PK_PREFIX}{org}")
}

/// Prefix of the organizations' partitions.
pub const ORG_PK_PREFIX: &str = "ORG#";

/// Partition of one domain's snapshots, reports, rows, totals, senders, TLS and failure reports
/// (`crate::domain_data`): a key of its own per domain spreads an organization's writes.
pub fn domain_pk(org: Uuid, domain: Uuid) -> String {
    format!("ORG#{org}#D#{domain}")
}

/// Sort-key prefix of the notes of deleted domains whose partition is still to be emptied.
pub const DOMAIN_GONE_PREFIX: &str = "DOMAINGONE#";

/// Sort key of a deleted domain's note (see [`DOMAIN_GONE_PREFIX`]).
pub fn domain_gone_sk(domain: Uuid) -> String {
    format!("{DOMAIN_GONE_PREFIX}{domain}")
}

/// Sort key of the organization record.
pub const ORG_META: &str = "META";

/// Sort key of the claim that an organization's task digest of one day was queued.
pub fn digest_day_sk(day: &str) -> String {
    format!("DIGESTDAY#{day}")
}

/// Sort key of what the organization's last task digest listed (its fingerprint).
pub const DIGEST_LAST: &str = "DIGEST#LAST";

/// Sort key of the marker that a notification of one occurrence went to one recipient (in the
/// organization partition, so the organization's purge removes it).
pub fn notified_sk(occurrence: &str, recipient: &str) -> String {
    format!("NOTIFIED#{occurrence}#{}", recipient.to_ascii_lowercase())
}

/// Sort key of a membership inside the organization partition.
pub fn member_sk(account: Uuid) -> String {
    format!("MEMBER#{account}")
}

/// Prefix of memberships in an organization partition.
pub const MEMBER_PREFIX: &str = "MEMBER#";

/// Sort key of API key metadata inside the organization partition.
pub fn api_key_sk(key_id: Uuid) -> String {
    format!("APIKEY#{key_id}")
}

/// Prefix of API key metadata in an organization partition.
pub const API_KEY_PREFIX: &str = "APIKEY#";

/// Partition of the lookup item for a presented key's hash.
pub fn api_key_lookup_pk(hash: &str) -> String {
    format!("APIKEY#{hash}")
}

/// Sort key of the API key lookup item.
pub const API_KEY_LOOKUP_SK: &str = "APIKEY";

/// Partition of an account, keyed by normalised email (uniqueness by conditional put).
pub fn account_pk(email: &str) -> String {
    format!("ACCOUNT#{email}")
}

/// Sort key of the account item.
pub const ACCOUNT_SK: &str = "ACCOUNT";

/// GSI1 partition grouping an account's record and its memberships.
pub fn account_id_gsi(account: Uuid) -> String {
    format!("ACCOUNTID#{account}")
}

/// GSI1 sort key of a membership under its account.
pub fn membership_gsi_sk(org: Uuid) -> String {
    format!("ORG#{org}")
}

/// Partition of a signup challenge.
pub fn signup_pk(id: Uuid) -> String {
    format!("SIGNUP#{id}")
}

/// Sort key of a signup challenge.
pub const SIGNUP_SK: &str = "SIGNUP";

/// Partition of the per-address signup-code counter.
pub fn signup_rate_pk(email: &str) -> String {
    format!("SIGNUPRATE#{email}")
}

/// Wrong sign-in codes for an address, one counter per UTC day and client (`<day>#<client>`).
pub fn signin_failures_pk(email: &str) -> String {
    format!("SIGNINFAIL#{email}")
}

/// Partition of a rate-limit bucket.
pub fn rate_pk(scope: &str, subject: &str) -> String {
    format!("RATE#{scope}#{subject}")
}

/// Number of outbox partitions. An event's shard follows its id, not its organization, so one
/// organization's burst of events (a sweep pass over 10,000 domains) spreads over every shard
/// instead of one key (ARCHITECTURE.md, "Write load per partition key"); the publisher drains
/// each. Shards 0 to 3 were an organization's before; they are drained like the rest.
pub const OUTBOX_SHARDS: u32 = 32;

/// The outbox shard of an event id (stable: a sum of its bytes).
pub fn outbox_shard(event_id: &str) -> u32 {
    event_id.bytes().fold(0u32, |sum, b| {
        sum.wrapping_mul(31).wrapping_add(u32::from(b))
    }) % OUTBOX_SHARDS
}

/// Partition of an outbox shard.
pub fn outbox_pk(shard: u32) -> String {
    format!("OUTBOX#{shard}")
}

/// Sort key of an outbox event (time-ordered within the shard).
pub fn outbox_sk(unix_ms: i128, event_id: &str) -> String {
    format!("{unix_ms:015}#{event_id}")
}

/// Sort key of a webhook endpoint.
pub fn webhook_sk(id: Uuid) -> String {
    format!("WEBHOOK#{id}")
}

/// Sort key of a deleted endpoint's tombstone (its delivery records stay readable 30 days).
pub fn webhook_tombstone_sk(id: Uuid) -> String {
    format!("WEBHOOKGONE#{id}")
}

/// Sort key of a group.
pub fn group_sk(id: Uuid) -> String {
    format!("GROUP#{id}")
}

/// Prefix of webhook endpoints in an organization partition.
pub const WEBHOOK_PREFIX: &str = "WEBHOOK#";

/// Prefix of one endpoint's delivery attempts.
pub fn delivery_prefix(endpoint: Uuid) -> String {
    format!("DELIVERY#{endpoint}#")
}

/// Sort key of a delivery attempt (time-ordered per endpoint).
pub fn delivery_sk(endpoint: Uuid, unix_ms: i128, id: Uuid) -> String {
    format!("DELIVERY#{endpoint}#{unix_ms:015}#{id}")
}

/// Partition of a domain's cached audit.
pub fn audit_cache_pk(domain: &str) -> String {
    format!("AUDIT#{domain}")
}

/// Sort key of a cached audit.
pub const AUDIT_CACHE_SK: &str = "RESULT";

/// Partition of a domain's stored activation scan.
pub fn activation_scan_pk(domain: &str) -> String {
    format!("ACTIVATION#{domain}")
}

/// Sort key of a stored activation scan.
pub const ACTIVATION_SCAN_SK: &str = "SCAN";

/// Partition of the leads captured on one day.
pub fn lead_pk(day: &str) -> String {
    format!("LEAD#{day}")
}

/// Sort key of a lead.
pub fn lead_sk(unix_ms: i128, id: Uuid) -> String {
    format!("{unix_ms:015}#{id}")
}

/// Sort key of a domain.
pub fn domain_sk(id: Uuid) -> String {
    format!("DOMAIN#{id}")
}

/// Prefix of domains in an organization partition.
pub const DOMAIN_PREFIX: &str = "DOMAIN#";

/// Sort key of a domain's list card (`mailward_domain::domain_list::DomainCard`), beside the
/// domain item in the organization's partition.
pub fn domain_card_sk(id: Uuid) -> String {
    format!("{DOMAIN_CARD_PREFIX}{id}")
}

/// Prefix of the list cards' sort keys.
pub const DOMAIN_CARD_PREFIX: &str = "DCARD#";

/// Sort key of the note that every domain of the organization has its card (written at the
/// organization's creation, or by the daily job once it has built the cards of an
/// organization created before cards existed). Shares [`DOMAIN_CARDS_QUERY`] with the cards, so
/// one query reads both.
pub const DOMAIN_CARDS_READY: &str = "DCARDS";

/// The prefix that queries the cards and the ready note together.
pub const DOMAIN_CARDS_QUERY: &str = "DCARD";

/// Sort key of the organization's card counter: how many writes changed its cards
/// (`crate::card_cache`). Outside [`DOMAIN_CARDS_QUERY`], so reading the cards does not read it.
pub const CARDS_VERSION: &str = "CARDVER";

/// Sort key of an organization's claim on a domain name.
pub fn domain_name_sk(name: &str) -> String {
    format!("DOMAINNAME#{name}")
}

/// Partition of the global index of organizations watching a name.
pub fn domain_name_pk(name: &str) -> String {
    format!("DOMAINNAME#{name}")
}

/// Shards of the sweep's due-work index (spreads the index partition: every write of a domain
/// item is also a write to its shard's index key, whatever the organization). 32 shards keep
/// each under 1,000 write units a second up to about 600,000 domains swept every 5 minutes
/// (ARCHITECTURE.md, "Write load per partition key"). Raised from 8: a domain keeps its old
/// shard's entry until its next write, and the coordinator reads every shard.
pub const SWEEP_SHARDS: u32 = 32;

/// The sweep shard of a domain.
pub fn sweep_shard(domain: Uuid) -> u32 {
    u32::from(domain.as_bytes()[15]) % SWEEP_SHARDS
}

/// GSI1 partition of a sweep shard.
pub fn sweep_pk(shard: u32) -> String {
    format!("SWEEP#{shard}")
}

/// GSI1 sort key of a domain in the sweep index (due time first, zero-padded).
pub fn sweep_sk(due_unix: i64, org: Uuid, domain: Uuid) -> String {
    format!("{due_unix:012}#{org}#{domain}")
}

/// Sort key of a DNS snapshot (time-ordered per domain and type).
pub fn snapshot_sk(domain: Uuid, record_type: &str, unix_ms: i128, id: Uuid) -> String {
    format!("SNAPSHOT#{domain}#{record_type}#{unix_ms:015}#{id}")
}

/// Prefix of a domain's snapshots, of one type when given.
pub fn snapshot_prefix(domain: Uuid, record_type: Option<&str>) -> String {
    match record_type {
        Some(t) => format!("SNAPSHOT#{domain}#{t}#"),
        None => format!("SNAPSHOT#{domain}#"),
    }
}

/// Sort key of the latest snapshot of one type.
pub fn snapshot_latest_sk(domain: Uuid, record_type: &str) -> String {
    format!("SNAPLATEST#{domain}#{record_type}")
}

/// Prefix of a domain's latest-snapshot markers.
pub fn snapshot_latest_prefix(domain: Uuid) -> String {
    format!("SNAPLATEST#{domain}#")
}

/// Prefix of every task in an organization partition.
pub const TASK_PREFIX: &str = "TASK#";

/// Prefix of one domain's tasks.
pub fn task_domain_prefix(domain: Uuid) -> String {
    format!("TASK#{domain}#")
}

/// Sort key of a task (under its domain).
pub fn task_sk(domain: Uuid, id: Uuid) -> String {
    format!("TASK#{domain}#{id}")
}

/// Sort key of a task's reference item (id → domain).
pub fn task_ref_sk(id: Uuid) -> String {
    format!("TASKREF#{id}")
}

/// Sort key of a domain's onboarding scan.
pub fn onboarding_sk(domain: Uuid) -> String {
    format!("ONBOARDING#{domain}")
}

/// Prefix of groups in an organization partition.
pub const GROUP_PREFIX: &str = "GROUP#";

/// Sort key of an invitation.
pub fn invitation_sk(id: Uuid) -> String {
    format!("INVITATION#{id}")
}

/// Prefix of invitations in an organization partition.
pub const INVITATION_PREFIX: &str = "INVITATION#";

/// Partition of an invitation token's lookup item.
pub fn invitation_token_pk(hash: &str) -> String {
    format!("INVITETOKEN#{hash}")
}

/// Sort key of an invitation token's lookup item.
pub const INVITATION_TOKEN_SK: &str = "INVITATION";

/// Prefix of activity log entries (newest last in sort order).
pub const ACTIVITY_PREFIX: &str = "ACTIVITY#";

/// Sort key of an activity log entry.
pub fn activity_sk(unix_ms: i128, id: Uuid) -> String {
    format!("ACTIVITY#{unix_ms:015}#{id}")
}

/// Sort key of an activity entry's reference item.
pub fn activity_ref_sk(id: Uuid) -> String {
    format!("ACTIVITYREF#{id}")
}

/// Prefix of an organization's exports.
pub const EXPORT_PREFIX: &str = "EXPORT#";

/// Sort key of an organization export.
pub fn export_sk(id: Uuid) -> String {
    format!("EXPORT#{id}")
}

/// Prefix of support tickets and their messages.
pub const TICKET_PREFIX: &str = "TICKET#";

/// Sort key of a support ticket.
pub fn ticket_sk(id: Uuid) -> String {
    format!("TICKET#{id}")
}

/// GSI1 partition of the support queue of one ticket status, across organizations.
pub fn support_queue_pk(status: &str) -> String {
    format!("SUPPORTQ#{status}")
}

/// GSI1 sort key of a ticket in the support queue (last change first in time order).
pub fn support_queue_sk(unix_ms: i128, org: Uuid, ticket: Uuid) -> String {
    format!("{unix_ms:015}#{org}#{ticket}")
}

/// Prefix of one ticket's messages.
pub fn ticket_messages_prefix(ticket: Uuid) -> String {
    format!("TICKET#{ticket}#MSG#")
}

/// Sort key of a support message.
pub fn ticket_message_sk(ticket: Uuid, unix_ms: i128, id: Uuid) -> String {
    format!("TICKET#{ticket}#MSG#{unix_ms:015}#{id}")
}

/// Sort key of an imported report of a domain.
pub fn report_sk(domain: Uuid, kind: &str, key: &str) -> String {
    format!("{REPORT_PREFIX}{domain}#{kind}#{key}")
}

/// Prefix of every imported report's sort key ([`report_sk`]).
pub const REPORT_PREFIX: &str = "REPORT#";

/// Prefix of every row chunk's sort key ([`report_day_sk`]).
pub const REPORT_DAY_PREFIX: &str = "REPDAY#";

/// Prefix of every forwarding-network note's sort key ([`forwarders_sk`]).
pub const FORWARDERS_PREFIX: &str = "REPFWD#";

/// Prefix of a domain's imported reports.
pub fn reports_prefix(domain: Uuid) -> String {
    format!("{REPORT_PREFIX}{domain}#")
}

/// Sort key of one chunk of a report's rows for a domain on a day (`yyyy-mm-dd`).
pub fn report_day_sk(domain: Uuid, day: &str, key: &str, chunk: usize) -> String {
    format!("{REPORT_DAY_PREFIX}{domain}#{day}#{key}#{chunk:04}")
}

/// Sort-key prefix of every row chunk of a domain.
pub fn report_days_prefix(domain: Uuid) -> String {
    format!("{REPORT_DAY_PREFIX}{domain}#")
}

/// Sort-key bounds of a domain's rows from day `from` to day `to` (both `yyyy-mm-dd`,
/// inclusive).
pub fn report_days_between(domain: Uuid, from: &str, to: &str) -> (String, String) {
    (
        format!("{REPORT_DAY_PREFIX}{domain}#{from}#"),
        format!("{REPORT_DAY_PREFIX}{domain}#{to}#~"),
    )
}

/// Sort key of what the organization keeps for a domain's sender requirements (header-analysis
/// verdicts, supplied spam rates).
pub fn sender_requirements_sk(domain: Uuid) -> String {
    format!("{SENDER_REQUIREMENTS_PREFIX}{domain}")
}

/// Prefix of every [`sender_requirements_sk`].
pub const SENDER_REQUIREMENTS_PREFIX: &str = "SENDREQ#";

/// Sort key of the forwarding networks among a domain's source addresses (written by sender
/// identification, read with the rows).
pub fn forwarders_sk(domain: Uuid) -> String {
    format!("{FORWARDERS_PREFIX}{domain}")
}

/// Partition of reports no organization watches (counted per day, for the operator).
pub fn unattributed_pk(day: &str) -> String {
    format!("UNATTRIBUTED#{day}")
}

/// Sort key of a domain's sender.
pub fn sender_sk(domain: Uuid, id: Uuid) -> String {
    format!("{SENDER_PREFIX}{domain}#{id}")
}

/// Prefix of every sender's sort key ([`sender_sk`]).
pub const SENDER_PREFIX: &str = "SENDER#";

/// Prefix of a domain's senders.
pub fn senders_prefix(domain: Uuid) -> String {
    format!("SENDER#{domain}#")
}

/// Partition of the cached reverse-DNS name of an IP address.
pub fn ptr_pk(ip: &str) -> String {
    format!("PTR#{ip}")
}

/// Sort key of the cached reverse-DNS name.
pub const PTR_SK: &str = "PTR";

/// Sort key of a domain's total of one report day.
pub fn report_total_sk(domain: Uuid, day: &str) -> String {
    format!("{REPORT_TOTAL_PREFIX}{domain}#{day}")
}

/// Prefix of every day total's sort key ([`report_total_sk`]).
pub const REPORT_TOTAL_PREFIX: &str = "REPTOTAL#";

/// Partitions an organization's report counters are spread over (`crate::report_versions`).
pub const REPORT_VERSION_SHARDS: u32 = 4;

/// Partition of one shard of an organization's report counters (sort key: the domain id).
pub fn report_versions_pk(org: Uuid, shard: u32) -> String {
    format!("REPVER#{org}#{shard}")
}

/// Sort key of a domain's TLS report.
pub fn tls_report_sk(domain: Uuid, id: Uuid) -> String {
    format!("TLSREPORT#{domain}#{id}")
}

/// Prefix of a domain's TLS reports.
pub fn tls_reports_prefix(domain: Uuid) -> String {
    format!("TLSREPORT#{domain}#")
}

/// Partition of an OAuth sign-in challenge.
pub fn oauth_login_pk(id: Uuid) -> String {
    format!("OAUTHLOGIN#{id}")
}

/// Sort key of an OAuth sign-in challenge.
pub const OAUTH_LOGIN_SK: &str = "LOGIN";

/// Partition of an authorization code (by its hash).
pub fn oauth_code_pk(hash: &str) -> String {
    format!("OAUTHCODE#{hash}")
}

/// Sort key of an authorization code.
pub const OAUTH_CODE_SK: &str = "CODE";

/// Partition of an account's OAuth connections.
pub fn oauth_connections_pk(account: Uuid) -> String {
    format!("OAUTHCONN#{account}")
}

/// Sort key of one OAuth connection.
pub fn oauth_connection_sk(id: Uuid) -> String {
    id.to_string()
}

/// Partition of a refresh token's lookup (by its hash).
pub fn oauth_refresh_pk(hash: &str) -> String {
    format!("OAUTHREFRESH#{hash}")
}

/// Sort key of a refresh token's lookup.
pub const OAUTH_REFRESH_SK: &str = "REFRESH";

/// Partition of an account's identity items (its TOTP factor and dashboard sessions).
pub fn identity_pk(account: Uuid) -> String {
    format!("IDENTITY#{account}")
}

/// Sort key of an account's TOTP factor.
pub const TOTP_SK: &str = "TOTP";

/// Sort-key prefix of an account's dashboard sessions.
pub const SESSION_PREFIX: &str = "SESSION#";

/// Sort key of one dashboard session.
pub fn session_sk(id: Uuid) -> String {
    format!("{SESSION_PREFIX}{id}")
}

/// Sort-key prefix of an organization's SCIM tokens.
pub const SCIM_TOKEN_PREFIX: &str = "SCIMTOKEN#";

/// Sort key of one SCIM token's metadata.
pub fn scim_token_sk(id: Uuid) -> String {
    format!("{SCIM_TOKEN_PREFIX}{id}")
}

/// Partition of a SCIM token's lookup (by its hash).
pub fn scim_lookup_pk(hash: &str) -> String {
    format!("SCIMTOKEN#{hash}")
}

/// Sort key of a SCIM token's lookup.
pub const SCIM_LOOKUP_SK: &str = "SCIMTOKEN";

/// Sort-key prefix of an organization's SCIM-provisioned users.
pub const SCIM_USER_PREFIX: &str = "SCIMUSER#";

/// Sort key of one SCIM-provisioned user.
pub fn scim_user_sk(account: Uuid) -> String {
    format!("{SCIM_USER_PREFIX}{account}")
}

/// Sort key of an organization's single sign-on connection.
pub const SSO_SK: &str = "SSO";

/// The sort key of an organization's billing record.
pub const BILLING_SK: &str = "BILLING";

/// A payment-provider event processed (webhook idempotency).
pub fn billing_event_pk(id: &str) -> String {
    format!("BILLINGEVENT#{id}")
}

/// GSI1 partition of the local payments adapter's objects of one customer.
pub fn local_pay_customer_gsi(customer: &str) -> String {
    format!("LOCALPAYCUS#{customer}")
}

/// Partition of an object of the local payments adapter.
pub fn local_pay_pk(id: &str) -> String {
    format!("LOCALPAY#{id}")
}

/// Partition of a verified single sign-on domain's index.
pub fn sso_domain_pk(name: &str) -> String {
    format!("SSODOMAIN#{name}")
}

/// Partition of a single sign-on attempt (by the state's hash).
pub fn sso_state_pk(hash: &str) -> String {
    format!("SSOSTATE#{hash}")
}

/// Sort key of a single sign-on attempt.
pub const SSO_STATE_SK: &str = "STATE";

/// Partition of the access-token signing keys.
pub const OAUTH_KEYS_PK: &str = "OAUTHKEYS";

/// Sort key of one signing key.
pub fn oauth_key_sk(kid: &str) -> String {
    format!("KEY#{kid}")
}
