"""The web application walked as its users do, in Debian's Chromium through Playwright.

Driven by tests/api/api/web.rs, which owns the stack, the DNS server and the clock: a line
`@@ <command> <args>` on stdout asks it for something (the emailed code of an address, to
publish a record, to sweep, to import a report, to add a member) and its answer comes back on
stdin. Every other line is the walk's own log; the last one is `done`.

On every page: axe-core finds no serious or critical violation, the browser logs no error,
and a screenshot is saved at desktop and phone widths (--shots).
"""

import argparse
import os
import re
import sys

from playwright.sync_api import expect, sync_playwright

ARGS = argparse.ArgumentParser()
ARGS.add_argument("--base", required=True)
ARGS.add_argument("--email", required=True)
ARGS.add_argument("--domain", required=True)
ARGS.add_argument("--shots", required=True)
ARGS.add_argument("--axe", required=True)
A = ARGS.parse_args()
BASE = A.base.rstrip("/")
os.makedirs(A.shots, exist_ok=True)
AXE = open(A.axe, encoding="utf-8").read()
ERRORS = []


def log(*words):
    print(*words, flush=True)


def ask(*words):
    print("@@", *words, flush=True)
    return sys.stdin.readline().strip()


def watch(page):
    """Fails the walk on any console error or CSP refusal."""
    # Only the application's pages count (the local payment stand-in's page has no icon, so the
    # browser's request for /favicon.ico is a 404 there).
    page.on("console", lambda m: m.type == "error" and "/app/" in page.url and ERRORS.append(f"{page.url}: {m.text}"))
    page.on("pageerror", lambda e: ERRORS.append(f"{page.url}: {e}"))


def check(page, name):
    """axe-core in the page (no serious or critical violation) and the two screenshots."""
    page.evaluate(AXE)
    violations = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 3)}))"
    )
    bad = [v for v in violations if v["impact"] in ("serious", "critical")]
    assert not bad, f"axe on {name} ({page.url}): {bad}"
    size = page.viewport_size
    page.screenshot(path=os.path.join(A.shots, f"{name}-desktop.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=os.path.join(A.shots, f"{name}-phone.png"), full_page=True)
    page.set_viewport_size(size)
    log(f"checked {name}: {len(violations)} minor or moderate axe findings")


def sign_in(page, email, keyboard=False):
    page.goto(BASE + "/")
    expect(page).to_have_url(re.compile(r"/app/sign-in"))
    if keyboard:
        tab_to(page, "#email")
        page.keyboard.type(email)
        page.keyboard.press("Enter")
    else:
        page.fill("#email", email)
        page.click("button:has-text('Email me a code')")
    expect(page).to_have_url(re.compile(r"/app/sign-in/code"))
    code = ask("code", email)
    if keyboard:
        tab_to(page, "#code")
        page.keyboard.type(code)
        page.keyboard.press("Enter")
    else:
        page.fill("#code", code)
        page.click("button:has-text('Sign in')")
    expect(page).to_have_url(re.compile(r"/app/domains"))


def tab_to(page, selector, limit=60):
    """Presses Tab until `selector` has the focus (keyboard only)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement && document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"Tab never reached {selector} on {page.url}")


def records(page):
    """The records table: (purpose, type, host, value) per row."""
    rows = []
    for row in page.locator("#records tbody tr").all():
        cells = row.locator("td")
        rows.append((
            cells.nth(0).inner_text().split()[0],
            cells.nth(1).inner_text().strip(),
            row.locator("code").nth(0).inner_text().strip(),
            row.locator("code").nth(1).inner_text().strip(),
        ))
    return rows


def owner_walk(browser):
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch(page)
    page.goto(BASE + "/app/sign-in")
    check(page, "sign-in")
    page.fill("#email", A.email)
    page.click("button:has-text('Email me a code')")
    check(page, "sign-in-code")
    page.fill("#code", ask("code", A.email))
    page.click("button:has-text('Sign in')")
    expect(page).to_have_url(re.compile(r"/app/domains$"))
    check(page, "domains-empty")

    # Add the domain (a pasted list of one), then its records.
    page.fill("#domains", A.domain)
    page.click("#domains ~ p button, button:has-text('Add')")
    expect(page).to_have_url(re.compile(r"/app/domains/[0-9a-f-]+\?n=ok"))
    expect(page.locator("h1")).to_have_text(A.domain)
    domain_url = page.url.split("?")[0]
    check(page, "domain-new")
    dmarc = [r for r in records(page) if r[0] == "dmarc"]
    assert dmarc, f"no DMARC record to publish: {records(page)}"
    _, kind, host, value = dmarc[0]
    log(f"publishing {kind} {host} {value}")
    assert ask("publish", host, kind, value) == "ok"

    # Check now, then the evaluation it queued (the sweep, on the test's clock): setup.
    page.click("button:has-text('Check now')")
    expect(page.locator(".notice.ok")).to_contain_text("Checked:")
    expect(page.locator("#records tbody tr").filter(has_text="dmarc").locator(".badge")).to_have_text("verified")
    assert ask("sweep") == "ok"
    page.goto(domain_url)
    expect(page.locator("#summary .badge").nth(1)).to_have_text("setup")
    # The sweep's snapshot of the DMARC record, as a change in the DNS history.
    expect(page.locator("#history")).to_contain_text(value)

    # A report arrives: the chart, the figures and the senders.
    assert ask("import") == "ok"
    page.goto(domain_url + "?days=7")
    expect(page.locator("#reports dd").first).to_have_text("150")
    bars = page.locator("#reports svg rect").evaluate_all("rs => rs.filter(r => parseFloat(r.getAttribute('height')) > 0).length")
    assert bars >= 1, "the chart drew no bar for the imported day"
    senders = page.locator("#senders tbody tr")
    assert senders.count() >= 1, "no sender listed after the import"
    check(page, "domain-reports")
    first = senders.first
    name = first.locator("td").first.inner_text()
    first.locator("button:has-text('Confirm')").click()
    expect(page.locator(".notice.ok")).to_contain_text("is now confirmed")
    log(f"confirmed sender {name!r}")

    # A notice comes only from our own redirects: a forged one in a link shows nothing.
    page.goto(domain_url + "?n=bad%3ACall+this+number&ns=AAAAAAAAAAAAAAAAAAAAAA")
    expect(page.locator("main")).not_to_contain_text("Call this number")

    # The tasks, the organization (a key shown once), the organizations.
    page.goto(BASE + "/app/tasks")
    check(page, "tasks")
    page.goto(BASE + "/app/organization")
    page.fill("#key-name", "walk script")
    page.click("button:has-text('Create key')")
    expect(page.locator(".secret code")).to_have_text(re.compile(r"^mw_"))
    check(page, "organization")
    page.click("text=People and alerts")
    page.fill("#inv-email", "invitee@walk.example")
    page.select_option("#inv-role", "editor")
    page.click("button:has-text('Send invitation')")
    expect(page.locator(".notice.ok")).to_contain_text("Invitation sent to invitee@walk.example")
    expect(page.locator("#inv-h")).to_be_visible()
    check(page, "people")
    page.goto(BASE + "/app/organization/activity")
    expect(page.locator("main")).to_contain_text("invitee@walk.example")
    check(page, "activity")
    page.goto(BASE + "/app/organization/groups")
    page.fill("#group-name", "Walk clients A")
    page.click("button:has-text('Create group')")
    expect(page.locator(".notice.ok")).to_contain_text("Group Walk clients A created")
    expect(page.locator("#groups-h + table")).to_contain_text("Walk clients A")
    check(page, "groups")
    page.goto(domain_url + "#settings")
    page.select_option("#group_id", label="Walk clients A")
    page.click("#settings button:has-text('Save')")
    expect(page.locator(".notice.ok")).to_contain_text("Settings saved")
    expect(page.locator("#group_id option:checked")).to_have_text("Walk clients A")
    page.goto(BASE + "/app/organization/integrations")
    expect(page.locator("#hooks-h")).to_be_visible()
    check(page, "integrations")
    page.goto(BASE + "/app/organization/billing")
    expect(page.locator("#usage-h")).to_be_visible()
    check(page, "billing")
    page.click("button:has-text('Subscribe')")
    expect(page).to_have_url(re.compile(r"/billing/local/checkout/"))
    log("on to the checkout page:", page.url.split("?")[0])
    page.goto(BASE + "/app/organizations")
    check(page, "organizations")
    page.goto(BASE + "/app/domains?sort=score&order=asc&monitoring_status=setup")
    expect(page.locator("tbody tr")).to_have_count(1)
    check(page, "domains")

    # Signing out ends the session: the pages send the person to sign in again.
    page.click("button:has-text('Sign out')")
    expect(page).to_have_url(re.compile(r"/app/sign-in"))
    page.goto(domain_url)
    expect(page).to_have_url(re.compile(r"/app/sign-in\?next="))
    context.close()
    return domain_url


def signup_walk(browser):
    """A newcomer creates an account from the sign-in page: the code, the key shown once, the
    (empty) domain list of the new organization."""
    email = "newcomer@walk-new.example"
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch(page)
    page.goto(BASE + "/app/sign-in")
    page.click("text=Create an account")
    check(page, "sign-up")
    page.fill("#email", email)
    page.fill("#organization_name", "Newcomer Ltd")
    page.click("button:has-text('Email me a code')")
    expect(page).to_have_url(re.compile(r"/app/sign-up/code"))
    page.fill("#code", ask("code", email))
    page.click("button:has-text('Create account')")
    if not page.locator(".secret code").count():
        log("welcome page:", page.inner_text("main"))
    expect(page.locator(".secret code")).to_have_text(re.compile(r"^mw_"))
    check(page, "welcome")
    page.click("text=Add your first domain")
    expect(page).to_have_url(re.compile(r"/app/domains$"))
    expect(page.locator("main")).to_contain_text("No domain matches")
    context.close()


def audit_walk(browser):
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch(page)
    page.goto(BASE + "/app/audit")
    page.fill("#domain", A.domain)
    page.click("button:has-text('Audit')")
    expect(page.locator("#result-h")).to_contain_text(A.domain)
    check(page, "audit")
    context.close()


def switch_to(page, org_name):
    page.goto(BASE + "/app/organizations")
    row = page.locator("tbody tr").filter(has_text=org_name)
    if row.locator("button").count():
        row.locator("button").click()
        expect(page).to_have_url(re.compile(r"/app/domains"))


def viewer_walk(browser, domain_url):
    email = "viewer@walk-viewer.example"
    assert ask("viewer", email) == "ok"
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch(page)
    sign_in(page, email)
    switch_to(page, "Walk Org")
    page.goto(domain_url)
    expect(page.locator("h1")).to_have_text(A.domain)
    assert page.locator("button:has-text('Check now')").count() == 0, "a viewer sees Check now"
    assert page.locator("#senders button").count() == 0, "a viewer sees sender decisions"
    assert page.locator("#settings button").count() == 0, "a viewer sees the settings' buttons"
    page.goto(BASE + "/app/domains")
    assert page.locator("#domains").count() == 0, "a viewer sees the add form"
    check(page, "domains-viewer")
    context.close()


def limited_walk(browser, other_id):
    email = "limited@walk-limited.example"
    assert ask("limited", email) == "ok"
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch(page)
    sign_in(page, email)
    switch_to(page, "Walk Org")
    page.goto(BASE + "/app/domains")
    listed = page.locator("tbody tr td:first-child").all_inner_texts()
    assert listed == [A.domain], f"a member limited to a group sees {listed}"
    # (A page of its own: the browser logs the expected 404 as an error.)
    unwatched = context.new_page()
    response = unwatched.goto(f"{BASE}/app/domains/{other_id}")
    assert response.status == 404, f"another group's domain answered {response.status}"
    expect(unwatched.locator("h1")).to_have_text("Not available")
    context.close()


def keyboard_walk(browser, domain_url):
    """Sign in, open the domain and check its records with the keyboard alone, under the real
    Content-Security-Policy (no bypass: a refused script or style is a console error)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch(page)
    sign_in(page, A.email, keyboard=True)
    tab_to(page, f"tbody a[href='{domain_url[len(BASE):]}']")
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_have_text(A.domain)
    tab_to(page, "#records form button[type=submit]", limit=120)
    page.keyboard.press("Enter")
    expect(page.locator(".notice.ok")).to_contain_text("Checked:")
    context.close()


def main():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        signup_walk(browser)
        domain_url = owner_walk(browser)
        audit_walk(browser)
        other_id = ask("other")
        viewer_walk(browser, domain_url)
        limited_walk(browser, other_id)
        keyboard_walk(browser, domain_url)
        browser.close()
    assert not ERRORS, "browser errors:\n" + "\n".join(ERRORS)
    log("done")


main()
