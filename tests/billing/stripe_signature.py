"""Cross-checks Mailward's Stripe-Signature scheme with Stripe's own Python library.

Usage: stripe_signature.py SECRET PAYLOAD HEADER

1. `stripe.Webhook.construct_event` must accept PAYLOAD signed by Mailward (HEADER).
2. Signs a new event with the library's own signing code, for the caller to deliver to
   /billing/stripe-webhook.

Prints {"verified": <event id>, "payload": ..., "header": ...} as JSON.
"""

import json
import sys
import time

import stripe
from stripe._webhook import WebhookSignature

secret, payload, header = sys.argv[1], sys.argv[2], sys.argv[3]
event = stripe.Webhook.construct_event(payload, header, secret)

theirs = json.dumps(
    {
        "id": "evt_signed_by_stripe_python",
        "object": "event",
        "type": "customer.subscription.updated",
        "data": {"object": {"id": event["data"]["object"]["subscription"], "object": "subscription"}},
    }
)
now = int(time.time())
signature = WebhookSignature._compute_signature(f"{now}.{theirs}", secret)
their_header = f"t={now},v1={signature}"
# The library accepts its own header too (the check above is not vacuous).
stripe.Webhook.construct_event(theirs, their_header, secret)
print(json.dumps({"verified": event["id"], "payload": theirs, "header": their_header}))
