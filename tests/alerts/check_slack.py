"""Checks Slack incoming-webhook messages with Slack's own SDK (slack_sdk's Block Kit models).

Usage: check_slack.py MESSAGE.json... Each file holds one message body as Mailward posted it.
Every block must parse into its slack_sdk model, pass the model's own validation (lengths,
required fields, element counts) and serialize back to what was sent; the plain-text fallback
`text` must be there. Exits non-zero naming the first failure.
"""

import json
import sys

from slack_sdk.models.blocks import Block


def check(path):
    with open(path, encoding="utf-8") as f:
        body = json.load(f)
    text = body.get("text")
    if not isinstance(text, str) or not text.strip():
        raise SystemExit(f"{path}: no plain-text fallback `text`")
    if not isinstance(body.get("blocks"), list) or not body["blocks"]:
        raise SystemExit(f"{path}: no blocks")
    if len(body["blocks"]) > 50:
        raise SystemExit(f"{path}: more than 50 blocks")
    for raw in body["blocks"]:
        block = Block.parse(raw)
        if block is None or type(block) is Block:
            raise SystemExit(f"{path}: slack_sdk does not know the block {raw!r}")
        block.validate_json()
        again = block.to_dict()
        if again != raw:
            raise SystemExit(f"{path}: {raw!r} reads back as {again!r}")


for p in sys.argv[1:]:
    check(p)
print(f"slack_sdk: {len(sys.argv) - 1} messages valid")
