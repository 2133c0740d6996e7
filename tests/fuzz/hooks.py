"""The refusals of schema-valid requests that the service makes by design, for tests/fuzz/run.

schemathesis expects a request that fits the document to be accepted (its
`positive_data_acceptance` check takes 2xx, 3xx, 401, 403, 404, 409, 429 and 5xx). A few
operations refuse a request that fits the document because of something no schema can say: a
secret the fuzzer cannot know (an emailed code, a signed token), the content of a text a parser
must read (a DKIM key, an SPF record, a certificate), an id that names nothing in the
organization, the kind of the task or of the credential. Those refusals are documented on each
operation; this table lists them.

tests/fuzz/schemathesis.toml adds the status (400 or 422) to the accepted ones of exactly these
operations, and the check below takes the status back for everything else: on these operations,
a 400 or 422 answering schema-valid data fails unless its `code` and `param` are listed here.
"""

import schemathesis
from schemathesis.specs.openapi.checks import is_unexpected_http_status_case

INVALID = "parameter_invalid_or_missing"
# HTML pages carry neither code nor param.
PAGE = (None, None)

# The fields of a report mailbox connection that a schema cannot tie together.
# An alert rule: each condition type takes its own parameters, each destination type its own
# fields; ids must name the organization's groups, domains and webhook endpoints; a URL must
# lead to a public https host; a destination named by id must be one of the rule's.
ALERT_FIELDS = {
    (INVALID, param)
    for param in (
        "name",
        "scope.type",
        "scope.group_ids",
        "scope.domain_ids",
        "condition.band",
        "condition.threshold_pct",
        "condition.window_days",
        "condition.min_messages",
        "condition.min_sessions",
        "condition.within_days",
        "destinations",
    )
} | {
    (INVALID, f"destinations[{i}].{field}")
    for i in range(10)
    for field in ("id", "emails", "url", "routing_key", "endpoint_id")
}

MAILBOX_FIELDS = {
    (INVALID, param)
    for param in (
        "host",
        "auth.type",
        "auth.password",
        "auth.mechanism",
        "auth.token_url",
        "auth.client_id",
        "auth.refresh_token",
    )
}

# operation -> status -> {(code, param)}: why the request is refused.
DOCUMENTED = {
    # Secrets: only the emailed code or the signed token is right.
    "POST /signup/verify": {
        400: {("signup_code_incorrect", "code"), ("signup_challenge_invalid", "signup_id")}
    },
    "POST /oauth/session": {
        400: {
            ("signin_code_incorrect", "code"),
            ("signin_challenge_invalid", "signin_id"),
            # The code may be left out only once a challenge's email step is done.
            (INVALID, "code"),
        }
    },
    # Staff sign-in: the same emailed-code step as POST /oauth/session.
    "POST /staff/session": {
        400: {
            ("signin_code_incorrect", "code"),
            ("signin_challenge_invalid", "signin_id"),
            (INVALID, "code"),
        }
    },
    # The state is the single-use value of a trip to the provider that the fuzzer cannot make.
    "GET /oauth/sso/callback": {400: {PAGE}},
    # Creating the connection needs its three credentials (updating it does not); an issuer
    # with a query or fragment is not an issuer (OpenID Connect Discovery §2); a host name must
    # also be a domain name Mailward can watch.
    "POST /sso": {
        400: {
            (INVALID, "issuer"),
            (INVALID, "client_id"),
            (INVALID, "client_secret"),
        }
        | {(INVALID, f"domains[{i}]") for i in range(20)}
    },
    "POST /invitations/accept": {400: {("invitation_token_invalid", "token")}},
    # Stripe's webhook: only a body signed with the endpoint's secret is processed.
    "POST /billing/stripe-webhook": {400: {("invalid_signature", "Stripe-Signature")}},
    "GET /notifications/unsubscribe": {400: {(INVALID, "token")}},
    "POST /notifications/unsubscribe": {400: {(INVALID, "token")}},
    # The sign-in page's state is a signed field of the previous page.
    "POST /oauth/authorize": {400: {PAGE}},
    # An HTTPS callback must be exactly one the service lists (the pattern admits any https URL).
    "GET /oauth/authorize": {400: {PAGE}},
    # Content a parser must read: a usable DKIM key, an SPF record, a mark certificate.
    "POST /domains/{id}/dkim-keys": {400: {(INVALID, "value")}},
    "POST /domains/{id}/dkim-keys/{key_id}": {400: {(INVALID, "value")}},
    "POST /domains/{id}/bimi/assets": {
        422: {("bimi_certificate_invalid", None), ("certificate_url_unreachable", "certificate_url")}
    },
    # The DNS host (a stub refusing every credential, tests/fuzz/stubs.py) is asked.
    "POST /dns-connections": {422: {("dns_connection_failed", None)}},
    # A report mailbox: the fields each provider and sign-in type takes (IMAP needs a host,
    # Graph takes none; a password sign-in takes only the password, an oauth2 one needs the
    # token endpoint, client and refresh token; a mechanism is IMAP's); at most 10 per
    # organization. A poll is refused for a paused connection or refused credentials.
    "POST /mailbox-connections": {
        400: MAILBOX_FIELDS,
        422: {("mailbox_connection_limit", None)},
    },
    "POST /mailbox-connections/{id}": {400: MAILBOX_FIELDS | {(INVALID, "move_to")}},
    "POST /mailbox-connections/{id}/poll": {422: {("mailbox_not_polled", None)}},
    # A scheduled report: a group id must name one of the organization's groups; the logo's
    # URL must lead to a public https host; one report per organization and per group.
    "POST /report-settings": {
        400: {(INVALID, "scope.group_id"), (INVALID, "branding.logo_url"), (INVALID, "recipients"),
              (INVALID, "branding.name"), (INVALID, "branding.footer")},
        409: {("report_settings_exist", None)},
    },
    "POST /report-settings/{id}": {
        400: {(INVALID, "branding.logo_url"), (INVALID, "recipients"), (INVALID, "branding.name"),
              (INVALID, "branding.footer")},
    },
    # Alert rules (see ALERT_FIELDS); at most 100 per organization.
    "POST /alert-rules": {400: ALERT_FIELDS, 422: {("alert_rule_limit", None)}},
    "POST /alert-rules/{id}": {400: ALERT_FIELDS},
    # Ids that must name a group of the organization; SPF text; the account an email must have.
    "POST /domains": {400: {(INVALID, "group_id")}},
    "POST /domains/{id}": {400: {(INVALID, "group_id"), (INVALID, "target_spf")}},
    "POST /members": {400: {(INVALID, "email"), (INVALID, "groups")}},
    "POST /members/{id}": {400: {(INVALID, "groups")}},
    "POST /invitations": {400: {(INVALID, "groups")}},
    # Attachments must have been uploaded with a form of POST /support/presigned-url.
    "POST /support/tickets": {400: {(INVALID, "attachments")}},
    "POST /support/tickets/{id}/replies": {400: {(INVALID, "attachments")}},
    # An organization's own source: names a parser reads (domain names, DKIM selectors, an
    # https address, a category word), and it needs sending_domains or envelope_froms.
    **{
        op: {
            400: {
                (INVALID, p)
                for p in (
                    "name",
                    "category",
                    "homepage",
                    "sending_domains",
                    "envelope_froms",
                    "dkim_selectors",
                    "spf_includes",
                )
            }
        }
        for op in ("POST /sources", "POST /sources/{id}")
    },
    # A TLS report upload: the body must be an RFC 8460 report, which no schema can say.
    "POST /tlsrpt/{token}": {400: {(INVALID, "body")}},
    # The credential: an API key may not name an administrator to invite.
    "POST /organizations": {400: {(INVALID, "invite_email")}},
    # The task: the confirm_source fields fit only that kind of task; a snooze must end within
    # 90 days and goes only with status snoozed; confirming a sender closes the task as done.
    "POST /tasks/{id}": {
        400: {
            (INVALID, "ignore_spf"),
            (INVALID, "ignore_dkim"),
            (INVALID, "confirm_source"),
            (INVALID, "confirm_source_in_use"),
            (INVALID, "snoozed_until"),
            (INVALID, "status"),
        }
    },
}


def _code_and_param(response):
    if "json" not in response.headers.get("content-type", [""])[0]:
        return PAGE
    try:
        body = response.json()
    except ValueError:
        return PAGE
    if not isinstance(body, dict):
        return PAGE
    return body.get("code"), body.get("param")


@schemathesis.check
def refusals_of_valid_data_are_documented(ctx, response, case):
    """On the operations of DOCUMENTED, a 400 or 422 to schema-valid data names a listed cause."""
    documented = DOCUMENTED.get(case.operation.label)
    meta = case.meta
    if documented is None or meta is None or not meta.generation.mode.is_positive:
        return None
    if is_unexpected_http_status_case(case) or response.status_code not in (400, 422):
        return None
    cause = _code_and_param(response)
    if cause not in documented.get(response.status_code, set()):
        raise AssertionError(
            f"Valid data refused with {response.status_code} {cause}, "
            f"not a documented refusal of {case.operation.label}"
        )
    return None
