"""Checks every request the Stripe adapter sent (as the stand-in recorded them) against Stripe's
published parameters: the TypedDicts that Stripe's Python library (`stripe` 16.1, generated from
Stripe's OpenAPI description at API version 2026-10-28.endive) declares for each call.

Usage: check_stripe_requests.py RECORDED.json

For each request (the test's own set-up calls, marked `X-Test-Setup`, are left out):
- the call must be one the adapter is known to make, mapped to its parameter class;
- every form field (`a[b][0][c]` decoded into nested objects and lists) must be a parameter of
  that class, of the declared type (strings, integers, booleans, literals, lists, maps,
  nested objects), and every required parameter must be present;
- `Stripe-Version` must be the library's API version, `Authorization` a Bearer secret key, and
  every POST must carry an `Idempotency-Key`.
Prints what it checked; exits 1 listing every mismatch.
"""

import json
import re
import sys
import typing
from decimal import Decimal
from urllib.parse import parse_qsl

import stripe
import typing_extensions
from stripe._api_version import _ApiVersion
from stripe._request_options import RequestOptions
from stripe.params import (
    CustomerCreateParams,
    CustomerDeleteParams,
    SubscriptionItemCreateParams,
    SubscriptionItemUpdateParams,
    SubscriptionRetrieveParams,
    SubscriptionUpdateParams,
)
from stripe.params.billing_portal import SessionCreateParams as PortalSessionCreateParams
from stripe.params.checkout import (
    SessionCreateParams as CheckoutSessionCreateParams,
    SessionRetrieveParams as CheckoutSessionRetrieveParams,
)

CALLS = [
    ("POST", r"/v1/customers", CustomerCreateParams),
    ("DELETE", r"/v1/customers/[A-Za-z0-9_]+", CustomerDeleteParams),
    ("POST", r"/v1/checkout/sessions", CheckoutSessionCreateParams),
    ("GET", r"/v1/checkout/sessions/[A-Za-z0-9_]+", CheckoutSessionRetrieveParams),
    ("POST", r"/v1/billing_portal/sessions", PortalSessionCreateParams),
    ("GET", r"/v1/subscriptions/[A-Za-z0-9_]+", SubscriptionRetrieveParams),
    ("POST", r"/v1/subscriptions/[A-Za-z0-9_]+", SubscriptionUpdateParams),
    ("POST", r"/v1/subscription_items", SubscriptionItemCreateParams),
    ("POST", r"/v1/subscription_items/[A-Za-z0-9_]+", SubscriptionItemUpdateParams),
]
OPTIONS = set(RequestOptions.__annotations__)
ANY = object()


def resolve(hint, scope):
    """A hint as written in the library's module `scope` (strings and forward references
    evaluated there, NotRequired/Required unwrapped); ANY when it names nothing there."""
    while True:
        if isinstance(hint, typing.ForwardRef):
            hint = hint.__forward_arg__
        if isinstance(hint, str):
            try:
                hint = eval(hint, scope)  # the library's own annotation text
            except Exception:
                return ANY
            continue
        origin = typing.get_origin(hint)
        if origin in (typing_extensions.NotRequired, typing_extensions.Required):
            hint = typing.get_args(hint)[0]
            continue
        return hint


def fields_of(cls):
    scope = vars(sys.modules[cls.__module__])
    return {k: (v, scope) for k, v in cls.__annotations__.items()}


def decode(body):
    """`a[b][0][c]=v` pairs into nested dicts (numeric keys stay strings; lists are checked by
    their keys being 0..n-1)."""
    root = {}
    for key, value in parse_qsl(body, keep_blank_values=True):
        parts = re.findall(r"[^\[\]]+", key)
        node = root
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return root


def is_typeddict(t):
    return isinstance(t, type) and typing_extensions.is_typeddict(t)


def check(value, hint, where, problems, scope=None):
    if scope is not None:
        hint = resolve(hint, scope)
    if hint is ANY:
        return
    scope = scope or {}
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union or (origin is not None and str(origin) == "types.UnionType"):
        trials = []
        for branch in args:
            attempt = []
            check(value, branch, where, attempt, scope)
            if not attempt:
                return
            trials.append(attempt)
        problems.append(f"{where}: {value!r} fits none of {hint}")
        return
    if origin is typing_extensions.Literal or origin is typing.Literal:
        if value not in [str(a) for a in args]:
            problems.append(f"{where}: {value!r} is not one of {args}")
        return
    if origin in (list, typing.List):
        if not isinstance(value, dict) or sorted(value, key=int) != [str(i) for i in range(len(value))]:
            problems.append(f"{where}: expected a list (keys 0..n-1), got {value!r}")
            return
        for index, item in value.items():
            check(item, args[0], f"{where}[{index}]", problems, scope)
        return
    if origin in (dict, typing.Dict):
        if not isinstance(value, dict):
            problems.append(f"{where}: expected a map, got {value!r}")
        return
    if is_typeddict(hint):
        if not isinstance(value, dict):
            problems.append(f"{where}: expected an object, got {value!r}")
            return
        fields = fields_of(hint)
        for key, item in value.items():
            if key in OPTIONS:
                problems.append(f"{where}.{key}: a request option, not a parameter")
            elif key not in fields:
                problems.append(f"{where}.{key}: not a parameter of {hint.__name__}")
            else:
                field, field_scope = fields[key]
                check(item, field, f"{where}.{key}", problems, field_scope)
        for key in getattr(hint, "__required_keys__", ()):
            if key not in value and key not in OPTIONS:
                problems.append(f"{where}.{key}: required by {hint.__name__}, missing")
        return
    if hint is str:
        if not isinstance(value, str):
            problems.append(f"{where}: expected a string")
    elif hint is bool:
        if value not in ("true", "false"):
            problems.append(f"{where}: {value!r} is not a boolean")
    elif hint is int:
        if not re.fullmatch(r"-?[0-9]+", value if isinstance(value, str) else ""):
            problems.append(f"{where}: {value!r} is not an integer")
    elif hint in (float, Decimal):
        if not re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", value if isinstance(value, str) else ""):
            problems.append(f"{where}: {value!r} is not a number")
    elif hint is type(None):
        problems.append(f"{where}: {value!r} where nothing is allowed")
    # Other classes (an untyped Stripe object as a map's alternative) accept what the map did.


def main():
    recorded = json.load(open(sys.argv[1]))
    problems = []
    checked = []
    for req in recorded:
        if req["headers"].get("x-test-setup"):
            continue
        method, path = req["method"], req["path"]
        found = [c for m, p, c in CALLS if m == method and re.fullmatch(p, path)]
        if not found:
            problems.append(f"{method} {path}: a call the adapter is not known to make")
            continue
        where = f"{method} {path}"
        headers = req["headers"]
        if headers.get("stripe-version") != _ApiVersion.CURRENT:
            problems.append(f"{where}: Stripe-Version {headers.get('stripe-version')!r}, not {_ApiVersion.CURRENT}")
        if not (headers.get("authorization") or "").startswith("Bearer sk_"):
            problems.append(f"{where}: no Bearer secret key")
        if method == "POST" and not headers.get("idempotency-key"):
            problems.append(f"{where}: no Idempotency-Key")
        if method in ("GET", "DELETE") and req["body"]:
            problems.append(f"{where}: a {method} with a body")
        check(decode(req["body"]), found[0], where, problems, vars(sys.modules[found[0].__module__]))
        checked.append(f"{where} ({found[0].__name__}, {len(parse_qsl(req['body']))} fields)")
    print(f"stripe {stripe.VERSION}, API {_ApiVersion.CURRENT}: checked {len(checked)} requests")
    for line in checked:
        print("  ok", line)
    for line in problems:
        print("  MISMATCH", line)
    sys.exit(1 if problems or not checked else 0)


if __name__ == "__main__":
    main()
