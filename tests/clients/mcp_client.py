"""Drives the local stack's MCP endpoints with the official MCP Python SDK (`mcp`, pinned in
tests/run's .venv), the way an assistant connects:

1. sign up, add a domain with the API key;
2. the OAuth flow a connector runs: authorize with PKCE S256, sign in with the emailed code,
   pick the organization, trade the code for tokens;
3. the SDK connects to {base}/mcp with the access token, lists the tools and calls audit_domain,
   list_domains, get_domain and get_dmarc_summary, once with the 2026-07-28 revision (the
   SDK's default probe) and once with the initialize handshake;
4. the SDK connects to {base}/mcp/public with no token and calls audit_domain;
5. a second connection with the billing scopes calls get_subscription, start_checkout (the
   checkout page it answers is paid on the local stack's test-mode page), get_subscription again
   and start_billing_portal.

The token asks only the four read scopes, so `tools/list` shows no writing tool. With TOKEN_FILE
the access token is written there (the conformance suite's run uses it).

Usage: mcp_client.py BASE_URL OUTBOX_DIR [TOKEN_FILE]
"""

import asyncio
import base64
import hashlib
import html
import pathlib
import re
import secrets
import sys
import urllib.parse
import uuid

import httpx
import httpx2
from mcp import ClientSession, Client
from mcp.client.streamable_http import streamable_http_client

base, outbox = sys.argv[1].rstrip("/"), pathlib.Path(sys.argv[2])
email = f"agent-{uuid.uuid4().hex[:8]}@mcp-client.example"
http = httpx.Client(base_url=base, follow_redirects=False, timeout=30)


def code_for(address: str) -> str:
    mails = [p.read_text() for p in sorted(outbox.glob("*.eml"))]
    mail = next(m for m in reversed(mails) if f"To: {address}" in m)
    return re.search(r"code is (\d{6})", mail).group(1)


def state_of(page: str) -> str:
    return html.unescape(re.search(r'name="state" value="([^"]+)"', page).group(1))


# 1. An account, an organization and a domain.
started = http.post("/signup", json={"email": email, "organization_name": "MCP client"})
assert started.status_code == 201, started.text
verified = http.post("/signup/verify", json={"signup_id": started.json()["signup_id"], "code": code_for(email)})
assert verified.status_code == 201, verified.text
org = verified.json()["organization"]["id"]
key = verified.json()["api_key"]["key"]
added = http.post(
    "/domains",
    json={"url": "mcp-client.example"},
    auth=(key, ""),
    headers={"Mailward-Version": "2025-04-30"},
)
assert added.status_code == 201, added.text
domain_id = added.json()["id"]

# 2. OAuth 2.1: authorization code with PKCE S256, as a connector does it.
meta = http.get("/.well-known/oauth-authorization-server").json()
assert meta["code_challenge_methods_supported"] == ["S256"], meta


def connect(scope: str) -> str:
    """The access token of one connection asking `scope` (writes allowed on the consent page)."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    redirect = "http://127.0.0.1:8765/callback"
    query = urllib.parse.urlencode({
        "response_type": "code",
        "client_id": meta["mailward_connector_client_id"],
        "redirect_uri": redirect,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "python",
        "scope": scope,
        "resource": f"{base}/mcp",
    })
    page = http.get(urllib.parse.urlparse(meta["authorization_endpoint"]).path + "?" + query)
    assert page.status_code == 200, page.text
    page = http.post("/oauth/authorize", data={"step": "email", "state": state_of(page.text), "email": email})
    page = http.post("/oauth/authorize", data={"step": "code", "state": state_of(page.text), "code": code_for(email)})
    assert org in page.text, page.text
    done = http.post(
        "/oauth/authorize",
        data={"step": "consent", "state": state_of(page.text), "organization_id": org, "decision": "allow",
              "allow_changes": "yes"},
    )
    assert done.status_code == 303, done.text
    callback = urllib.parse.urlparse(done.headers["location"])
    params = dict(urllib.parse.parse_qsl(callback.query))
    assert params["state"] == "python", params
    tokens = http.post(
        urllib.parse.urlparse(meta["token_endpoint"]).path,
        data={
            "grant_type": "authorization_code",
            "code": params["code"],
            "redirect_uri": redirect,
            "client_id": meta["mailward_connector_client_id"],
            "code_verifier": verifier,
        },
    )
    assert tokens.status_code == 200, tokens.text
    return tokens.json()["access_token"]


access = connect("domains:read groups:read tasks:read dmarc_reports:read offline_access")
if len(sys.argv) > 3:
    pathlib.Path(sys.argv[3]).write_text(access)


def structured(result):
    assert not result.is_error, result
    assert result.structured_content is not None, result
    return result.structured_content


async def main_endpoint(mode: str) -> str:
    headers = {"Authorization": f"Bearer {access}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as client:
        async with Client(streamable_http_client(f"{base}/mcp", http_client=client), mode=mode) as mcp:
            tools = {t.name: t for t in (await mcp.list_tools()).tools}
            for name in ("audit_domain", "list_domains", "get_domain", "get_dmarc_summary"):
                assert name in tools, sorted(tools)
                assert tools[name].input_schema["type"] == "object"
            # Read scopes only: no writing tool is offered, and each tool says it only reads.
            assert "create_domain" not in tools and "delete_domain" not in tools, sorted(tools)
            assert all(t.annotations.read_only_hint for t in tools.values()), sorted(tools)
            assert tools["audit_domain"].annotations.open_world_hint, tools["audit_domain"]
            audit = structured(await mcp.call_tool("audit_domain", {"domain": "mcp-client.example"}))
            assert audit["summary"]["domain"] == "mcp-client.example", audit
            listed = structured(await mcp.call_tool("list_domains", {}))
            assert [d["url"] for d in listed["data"]] == ["mcp-client.example"], listed
            one = structured(await mcp.call_tool("get_domain", {"domain": "mcp-client.example"}))
            assert one["id"] == domain_id, one
            summary = structured(await mcp.call_tool("get_dmarc_summary", {"domain": domain_id}))
            assert isinstance(summary, dict), summary
            bad = await mcp.call_tool("get_domain", {})
            assert bad.is_error and bad.structured_content["error"]["param"] == "domain", bad
            return f"{mcp.protocol_version}: {len(tools)} tools"


async def legacy_session() -> str:
    headers = {"Authorization": f"Bearer {access}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as client:
        async with streamable_http_client(f"{base}/mcp", http_client=client) as (read, write, *_):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                listed = await session.call_tool("list_domains", {})
                assert not listed.is_error, listed
                return init.protocol_version


async def billing() -> str:
    """The three billing tools with a token holding the billing scopes: the subscription, a
    checkout paid on the local stack's test-mode page (the URL the tool answers is what a person
    opens), the subscription again, the billing portal."""
    token = connect("billing:read billing:write")
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as client:
        async with Client(streamable_http_client(f"{base}/mcp", http_client=client)) as mcp:
            names = {t.name for t in (await mcp.list_tools()).tools}
            assert {"get_subscription", "start_checkout", "start_billing_portal"} <= names, sorted(names)
            before = structured(await mcp.call_tool("get_subscription", {}))
            assert (before["plan"], before["status"]) == ("free", "none"), before
            page = structured(await mcp.call_tool("start_checkout", {"plan": "it_teams"}))
            paid = http.post(page["url"])
            assert paid.status_code == 303, paid.text
            after = structured(await mcp.call_tool("get_subscription", {}))
            assert (after["plan"], after["status"]) == ("it_teams", "trialing"), after
            portal = structured(await mcp.call_tool("start_billing_portal", {}))
            assert "/billing/local/portal/" in portal["url"], portal
            bad = await mcp.call_tool("start_checkout", {"plan": "free"})
            assert bad.is_error and bad.structured_content["error"]["param"] == "plan", bad
            return f"{after['plan']} {after['status']} until {after['trial_end']}"


async def public_endpoint() -> str:
    async with httpx2.AsyncClient(timeout=60) as client:
        async with Client(streamable_http_client(f"{base}/mcp/public", http_client=client)) as mcp:
            names = sorted(t.name for t in (await mcp.list_tools()).tools)
            assert names == ["audit_domain", "validate_spf_include"], names
            audit = structured(await mcp.call_tool("audit_domain", {"domain": "mcp-client.example"}))
            assert audit["summary"]["domain"] == "mcp-client.example", audit
            return f"{mcp.protocol_version}: {names}"


async def run():
    modern = await main_endpoint("auto")
    handshake = await main_endpoint("legacy")
    session = await legacy_session()
    public = await public_endpoint()
    paid = await billing()
    print(f"mcp client: OAuth flow done; /mcp {modern} and {handshake}; ClientSession {session}; /mcp/public {public}; billing tools: {paid}")


asyncio.run(run())
