"""Stands in for the person's browser when `mailward-mcp` opens the sign-in page: follows the
pages as a person would (the email address, the emailed code read from the local outbox, the
organization and Allow, the box for changes left ticked) and finally loads the callback on the
bridge's loopback port, which hands it the code.

Usage (as MAILWARD_MCP_BROWSER): scripted_browser.py URL, with MAILWARD_TEST_EMAIL and
MAILWARD_TEST_OUTBOX set; it writes what it did to MAILWARD_TEST_BROWSER_LOG when set.
"""

import html
import os
import pathlib
import re
import sys
import time
import urllib.parse

import httpx

url = sys.argv[1]
email = os.environ["MAILWARD_TEST_EMAIL"]
outbox = pathlib.Path(os.environ["MAILWARD_TEST_OUTBOX"])
log = os.environ.get("MAILWARD_TEST_BROWSER_LOG")
parsed = urllib.parse.urlparse(url)
http = httpx.Client(base_url=f"{parsed.scheme}://{parsed.netloc}", follow_redirects=False, timeout=30)


def state_of(page: str) -> str:
    return html.unescape(re.search(r'name="state" value="([^"]+)"', page).group(1))


def newest_code(after: int) -> str:
    for _ in range(100):
        mails = [p.read_text() for p in sorted(outbox.glob("*.eml"))][after:]
        found = [m for m in mails if f"To: {email}" in m and "code is " in m]
        if found:
            return re.search(r"code is (\d{6})", found[-1]).group(1)
        time.sleep(0.1)
    raise SystemExit("no sign-in code arrived")


page = http.get(url)
assert page.status_code == 200, page.text
before = len(list(outbox.glob("*.eml")))
page = http.post("/oauth/authorize", data={"step": "email", "state": state_of(page.text), "email": email})
page = http.post(
    "/oauth/authorize", data={"step": "code", "state": state_of(page.text), "code": newest_code(before)}
)
org = re.search(r'name="organization_id" value="([^"]+)"', page.text).group(1)
form = {"step": "consent", "state": state_of(page.text), "organization_id": org, "decision": "allow"}
if 'name="allow_changes"' in page.text:
    form["allow_changes"] = "yes"
done = http.post("/oauth/authorize", data=form)
assert done.status_code == 303, done.text
callback = httpx.get(done.headers["location"], timeout=30)
assert callback.status_code == 200, callback.text
if log:
    pathlib.Path(log).write_text(f"signed in through {done.headers['location'].split('?')[0]}\n")
