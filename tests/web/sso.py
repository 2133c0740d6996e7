"""Signing in to the web application through the organization's identity provider, in
Chromium: the address on the sign-in page, the trip to the provider (oidc-provider, whose
interactions finish by themselves for the `login_hint`), the return through
/oauth/sso/callback to /app/sign-in/sso, and the domain list of the organization. Driven by
tests/api/api/web.rs; prints `done` at the end.
"""

import argparse
import re

from playwright.sync_api import expect, sync_playwright

ARGS = argparse.ArgumentParser()
ARGS.add_argument("--base", required=True)
ARGS.add_argument("--email", required=True)
A = ARGS.parse_args()
BASE = A.base.rstrip("/")

with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
    # The provider serves HTTPS with the test's own CA.
    context = browser.new_context(ignore_https_errors=True)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(BASE + "/app/sign-in")
    page.fill("#email", A.email)
    page.click("button:has-text('Email me a code')")
    expect(page).to_have_url(re.compile(r"/app/domains$"), timeout=20000)
    expect(page.locator("h1")).to_have_text("Domains")
    print("signed in through the provider:", page.url, flush=True)
    # The return link alone, in another browser, opens nothing.
    other = browser.new_context(ignore_https_errors=True).new_page()
    response = other.goto(BASE + "/app/sign-in/sso?signin=00000000-0000-4000-8000-000000000000")
    assert response.status == 403, response.status
    browser.close()
    assert not errors, errors
print("done", flush=True)
