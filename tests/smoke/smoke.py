#!/usr/bin/env python3
"""The smoke test of a Mailward deployment: what a deploy can break, checked through the public
API of any stage in about a minute, leaving nothing behind.

Python's standard library only, so it runs on a bare CI runner:

    tests/smoke/smoke.py --base-url https://api.staging.example --api-key KEY --skip-webhook
    tests/smoke/smoke.py --base-url URL --api-key KEY --webhook-url https://receiver.example/hook
    tests/smoke/smoke.py --base-url http://127.0.0.1:8080 --signup-outbox .mailward/outbox \\
        --local-receiver cert.pem key.pem

Steps: the health check; a credential (the given API key, or a signup whose code is read from
the local stack's outbox); a webhook endpoint subscribed to `domain.created` (when a receiver is
given); a domain added; its records guidance read; an audit of it; the webhook event received
and its signature checked (a local HTTPS receiver), or its delivery record read back (a remote
receiver the pipeline runs); the MCP endpoints: `tools/list` on `/mcp/public` and the OAuth
challenge of `/mcp`; then every created thing deleted and checked gone (the organization too,
when the smoke test signed it up). Exit status 0 when every step passed; each step prints one
line.
"""

import argparse
import base64
import hashlib
import hmac
import http.server
import json
import pathlib
import re
import ssl
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid

VERSION = "2025-04-30"


class Failed(Exception):
    pass


class Api:
    def __init__(self, base, key=None):
        self.base = base.rstrip("/")
        self.key = key

    def call(self, method, path, body=None, headers=None, auth=True):
        request = urllib.request.Request(self.base + path, method=method)
        if body is not None:
            request.data = json.dumps(body).encode()
            request.add_header("content-type", "application/json")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        if auth and self.key:
            token = base64.b64encode(f"{self.key}:".encode()).decode()
            request.add_header("authorization", f"Basic {token}")
            request.add_header("mailward-version", VERSION)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def json(self, method, path, body=None, expect=(200,), **kw):
        status, _, raw = self.call(method, path, body, **kw)
        if status not in expect:
            raise Failed(f"{method} {path}: {status} {raw[:300]!r}")
        return json.loads(raw) if raw else None


class Receiver:
    """An HTTPS receiver on loopback recording every POST (body and signature header)."""

    def __init__(self, cert, key):
        received = self.received = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                received.append((self.headers.get("mailward-signature", ""), body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.url = f"https://localhost:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()


def step(name, detail=""):
    print(f"ok   {name}{': ' + detail if detail else ''}", flush=True)


def wait_for(what, probe, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.5)
    raise Failed(f"{what} within {seconds} s")


def signed_up(api, outbox):
    email = f"smoke-{uuid.uuid4().hex[:10]}@smoke.example"
    started = api.json(
        "POST",
        "/signup",
        {"email": email, "organization_name": "Smoke test"},
        expect=(201,),
        auth=False,
    )

    def code():
        for mail in sorted(pathlib.Path(outbox).glob("*.eml"), reverse=True):
            text = mail.read_text(errors="replace")
            found = re.search(r"code is (\d{6})", text)
            if f"To: {email}" in text and found:
                return found.group(1)
        return None

    done = api.json(
        "POST",
        "/signup/verify",
        {"signup_id": started["signup_id"], "code": wait_for("the signup code", code, 30)},
        expect=(201,),
        auth=False,
    )
    return done["organization"]["id"], done["api_key"]["key"]


def signature_ok(header, body, secret):
    parts = dict(p.split("=", 1) for p in header.split(",") if "=" in p)
    expected = hmac.new(secret.encode(), f"{parts.get('t', '')}.".encode() + body, hashlib.sha256)
    return hmac.compare_digest(parts.get("v1", ""), expected.hexdigest())


def mcp_public(api):
    headers = {"accept": "application/json, text/event-stream"}
    status, got, raw = api.call(
        "POST",
        "/mcp/public",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "mailward-smoke", "version": "1"},
            },
        },
        headers=headers,
        auth=False,
    )
    if status != 200:
        raise Failed(f"MCP initialize: {status} {raw[:200]!r}")
    session = {k.lower(): v for k, v in got.items()}.get("mcp-session-id")
    if session:
        headers["mcp-session-id"] = session
    api.call(
        "POST",
        "/mcp/public",
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers=headers,
        auth=False,
    )
    status, got, raw = api.call(
        "POST",
        "/mcp/public",
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        headers=headers,
        auth=False,
    )
    text = raw.decode(errors="replace")
    # A JSON answer, or one server-sent event carrying it.
    payload = (
        text
        if text.lstrip().startswith("{")
        else "".join(line[5:] for line in text.splitlines() if line.startswith("data:"))
    )
    tools = [t["name"] for t in json.loads(payload)["result"]["tools"]]
    if status != 200 or "audit_domain" not in tools:
        raise Failed(f"MCP tools/list: {status} {tools}")
    return tools


def run(args):
    anonymous = Api(args.base_url)
    status, _, raw = anonymous.call("GET", "/health-check", auth=False)
    if status != 200:
        raise Failed(f"GET /health-check: {status} {raw[:200]!r}")
    step("health check")

    org = None
    if args.api_key:
        api = Api(args.base_url, args.api_key)
        step("credential", "the given API key")
    else:
        org, key = signed_up(anonymous, args.signup_outbox)
        api = Api(args.base_url, key)
        step("credential", f"signed up organization {org} (code read from the outbox)")

    receiver = Receiver(*args.local_receiver) if args.local_receiver else None
    hook_url = receiver.url if receiver else args.webhook_url
    endpoint = secret = domain = None
    try:
        if hook_url:
            created = api.json(
                "POST",
                "/webhook-endpoints",
                {
                    "url": hook_url,
                    "description": "smoke test",
                    "enabled_events": ["domain.created"],
                },
                expect=(201,),
            )
            endpoint, secret = created["id"], created.get("secret")
            step("webhook endpoint", endpoint)

        name = f"smoke-{uuid.uuid4().hex[:10]}.example"
        domain = api.json("POST", "/domains", {"url": name}, expect=(201,))["id"]
        step("domain added", name)

        records = api.json("GET", f"/domains/{domain}/dns-records")
        if not json.dumps(records).count("DMARC1"):
            raise Failed(f"records guidance without a DMARC record: {json.dumps(records)[:300]}")
        step("records guidance read")

        audit = api.json("GET", f"/tools/audit?domain={name}")
        if "summary" not in audit:
            raise Failed(f"audit without a summary: {json.dumps(audit)[:300]}")
        step("audit", f"status {audit.get('status')}")

        if receiver:

            def event():
                for header, body in receiver.received:
                    data = json.loads(body)
                    if data.get("type") == "domain.created" and domain in json.dumps(data):
                        return header, body
                return None

            header, body = wait_for("the domain.created webhook", event)
            if not signature_ok(header, body, secret):
                raise Failed("the webhook's Mailward-Signature does not verify with the secret")
            step("webhook received", "domain.created, signature verified")
        elif endpoint:

            def delivered():
                got = api.json("GET", f"/webhook-endpoints/{endpoint}/deliveries")
                items = got.get("data", got) if isinstance(got, dict) else got
                return [d for d in items if 200 <= int(d.get("response_status") or 0) < 300]

            wait_for("a successful delivery record", delivered)
            step("webhook delivered", "delivery record with a 2xx answer")
        else:
            step("webhook", "SKIPPED (--skip-webhook)")

        tools = mcp_public(anonymous)
        status, headers, _ = anonymous.call(
            "POST",
            "/mcp",
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"accept": "application/json, text/event-stream"},
            auth=False,
        )
        challenge = {k.lower(): v for k, v in headers.items()}.get("www-authenticate", "")
        if status != 401 or "resource_metadata" not in challenge:
            raise Failed(f"/mcp without a token: {status} {challenge!r}")
        step("MCP", f"tools/list on /mcp/public ({len(tools)} tools); /mcp asks for OAuth")
    finally:
        cleanup(api, domain, endpoint, org)
        if receiver:
            receiver.stop()


def cleanup(api, domain, endpoint, org):
    problems = []
    if domain:
        status, _, _ = api.call("DELETE", f"/domains/{domain}")
        gone, _, _ = api.call("GET", f"/domains/{domain}")
        if status != 204 or gone != 404:
            problems.append(f"domain {domain}: DELETE {status}, then GET {gone}")
    if endpoint:
        status, _, _ = api.call("DELETE", f"/webhook-endpoints/{endpoint}")
        gone, _, _ = api.call("GET", f"/webhook-endpoints/{endpoint}")
        if status != 204 or gone != 404:
            problems.append(f"webhook endpoint {endpoint}: DELETE {status}, then GET {gone}")
    if org:
        status, _, _ = api.call("DELETE", f"/organizations/{org}")
        if status not in (200, 202, 204):
            problems.append(f"organization {org}: DELETE {status}")
        else:
            # Its key stops working once the organization is marked for deletion.
            wait_for(
                "the organization's key to be refused",
                lambda: api.call("GET", "/domains")[0] in (401, 403),
                30,
            )
    if problems:
        raise Failed("left behind: " + "; ".join(problems))
    step("cleaned up", "domain, webhook endpoint" + (", organization" if org else ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True)
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--api-key", help="an organization's API key (kept: nothing else is made)")
    who.add_argument("--signup-outbox", help="sign up, reading the code from this outbox folder")
    hook = parser.add_mutually_exclusive_group(required=True)
    hook.add_argument(
        "--local-receiver",
        nargs=2,
        metavar=("CERT", "KEY"),
        help="serve HTTPS on loopback with this certificate and check the event",
    )
    hook.add_argument("--webhook-url", help="an HTTPS receiver; its delivery record is checked")
    hook.add_argument(
        "--skip-webhook", action="store_true", help="skip the webhook step (say so in the pipeline)"
    )
    args = parser.parse_args()
    started = time.monotonic()
    try:
        run(args)
    except Failed as failure:
        print(f"FAIL {failure}", flush=True)
        return 1
    print(f"smoke: every step passed in {time.monotonic() - started:.1f} s against {args.base_url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
