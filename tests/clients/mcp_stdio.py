"""The stdio bridge `mailward-mcp` under the official MCP Python SDK's stdio client, against
the local stack:

1. sign up and add a domain with the API key;
2. the SDK starts the bridge, which opens the sign-in page (the browser is
   tests/clients/scripted_browser.py), catches the code on port 8765 and keeps the refresh token
   in its configuration directory (0600); the SDK lists the tools and calls get_domain;
3. the SDK starts the bridge again: it renews access from the stored refresh token without
   opening the browser, and calls get_domain.

Usage: mcp_stdio.py BASE_URL OUTBOX_DIR BRIDGE_BINARY
"""

import asyncio
import os
import pathlib
import re
import stat
import sys
import tempfile
import uuid

import httpx
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

base, outbox, bridge = sys.argv[1].rstrip("/"), pathlib.Path(sys.argv[2]), sys.argv[3]
email = f"stdio-{uuid.uuid4().hex[:8]}@mcp-stdio.example"
http = httpx.Client(base_url=base, follow_redirects=False, timeout=30)
here = pathlib.Path(__file__).resolve().parent


def code_for(address: str) -> str:
    mails = [p.read_text() for p in sorted(outbox.glob("*.eml"))]
    mail = next(m for m in reversed(mails) if f"To: {address}" in m)
    return re.search(r"code is (\d{6})", mail).group(1)


started = http.post("/signup", json={"email": email, "organization_name": "Stdio bridge"})
assert started.status_code == 201, started.text
verified = http.post("/signup/verify", json={"signup_id": started.json()["signup_id"], "code": code_for(email)})
assert verified.status_code == 201, verified.text
key = verified.json()["api_key"]["key"]
added = http.post(
    "/domains", json={"url": "stdio.example"}, auth=(key, ""), headers={"Mailward-Version": "2025-04-30"}
)
assert added.status_code == 201, added.text
domain_id = added.json()["id"]

work = pathlib.Path(tempfile.mkdtemp())
config = work / "config"
browser_log = work / "browser.log"


def params() -> StdioServerParameters:
    return StdioServerParameters(
        command=bridge,
        args=["--url", base],
        env={
            "MAILWARD_MCP_CONFIG_DIR": str(config),
            "MAILWARD_MCP_BROWSER": f"{sys.executable} {here / 'scripted_browser.py'}",
            "MAILWARD_TEST_EMAIL": email,
            "MAILWARD_TEST_OUTBOX": str(outbox),
            "MAILWARD_TEST_BROWSER_LOG": str(browser_log),
            "PATH": os.environ.get("PATH", ""),
        },
    )


async def session() -> str:
    async with Client(stdio_client(params())) as mcp:
        tools = {t.name for t in (await mcp.list_tools()).tools}
        assert {"get_domain", "list_domains", "create_domain"} <= tools, sorted(tools)
        result = await mcp.call_tool("get_domain", {"domain": "stdio.example"})
        assert not result.is_error, result
        assert result.structured_content["id"] == domain_id, result
        return f"{mcp.protocol_version}: {len(tools)} tools"


async def run():
    first = await asyncio.wait_for(session(), 120)
    assert browser_log.exists(), "the bridge opened no sign-in page"
    assert "127.0.0.1:8765/callback" in browser_log.read_text(), browser_log.read_text()
    stored = list(config.glob("credentials-*.json"))
    assert len(stored) == 1, stored
    assert stat.S_IMODE(stored[0].stat().st_mode) == 0o600, oct(stored[0].stat().st_mode)
    assert stat.S_IMODE(config.stat().st_mode) == 0o700, oct(config.stat().st_mode)
    browser_log.unlink()
    second = await asyncio.wait_for(session(), 60)
    assert not browser_log.exists(), "the second start signed in again instead of refreshing"
    print(f"mcp stdio bridge: signed in through the browser, {first}; restarted on the stored refresh token, {second}")


asyncio.run(run())
