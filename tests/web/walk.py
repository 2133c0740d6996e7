"""The web application walked as its users do, in Debian's Chromium through Playwright.

Driven by tests/api/api/web.rs, which owns the stack, the DNS server and the clock: a line
`@@ <command> <args>` on stdout asks it for something (the emailed code of an address, to
publish a record, to sweep, to import a report, to add a member) and its answer comes back on
stdin. Every other line is the walk's own log; the last one is `done`.

On every page: axe-core finds no serious or critical violation, the browser logs no error,
and a screenshot is saved at desktop and phone widths (--shots).
"""

import argparse
import base64
import hashlib
import hmac
import os
import re
import struct
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
    page.click("button[aria-label='Resend the invitation to invitee@walk.example']")
    expect(page.locator(".notice.ok")).to_contain_text("Invitation sent again")
    page.fill("#inv-email", "second@walk.example")
    page.click("button:has-text('Send invitation')")
    page.once("dialog", lambda d: d.accept())
    page.click("button[aria-label='Revoke the invitation to second@walk.example']")
    expect(page.locator(".notice.ok")).to_contain_text("Invitation revoked")
    expect(page.locator("#inv-h + table")).not_to_contain_text("second@walk.example")
    page.goto(BASE + "/app/organization/activity")
    expect(page.locator("main")).to_contain_text("invitee@walk.example")
    check(page, "activity")
    page.goto(BASE + "/app/organization/groups")
    page.fill("#group-name", "Walk clients A")
    page.click("button:has-text('Create group')")
    expect(page.locator(".notice.ok")).to_contain_text("Group Walk clients A created")
    expect(page.locator("#groups-h + table")).to_contain_text("Walk clients A")
    check(page, "groups")
    alert_rules_walk(page)
    page.goto(domain_url + "#settings")
    page.select_option("#group_id", label="Walk clients A")
    page.click("#settings button:has-text('Save')")
    expect(page.locator(".notice.ok")).to_contain_text("Settings saved")
    expect(page.locator("#group_id option:checked")).to_have_text("Walk clients A")
    page.goto(BASE + "/app/domains")
    page.select_option("#f-group", label="Walk clients A")
    page.click("button:has-text('Apply')")
    expect(page.locator("tbody tr")).to_have_count(1)
    expect(page.locator("tbody")).to_contain_text(A.domain)
    page.goto(BASE + "/app/organization/integrations")
    expect(page.locator("#hooks-h")).to_be_visible()
    page.fill("#hook-url", "http://127.0.0.1/hook")
    page.click("button:has-text('Create endpoint')")
    expect(page.locator(".notice.bad")).to_contain_text("url")
    page.fill("#hook-url", "https://hooks.walk.example/mailward")
    page.fill("#hook-description", "Walk receiver")
    page.click("#new-hook-h ~ details summary")
    page.locator("#new-hook-h ~ details input[type=checkbox]").first.check()
    page.click("button:has-text('Create endpoint')")
    expect(page.locator("#hook-secret")).not_to_be_empty()
    expect(page.locator("#hooks-h ~ h3")).to_contain_text("https://hooks.walk.example/mailward")
    page.click("summary[aria-label='Edit https://hooks.walk.example/mailward']")
    page.locator("select[name=status]").first.select_option("DISABLED")
    page.click("button:has-text('Save endpoint')")
    expect(page.locator(".notice.ok")).to_contain_text("Endpoint saved")
    expect(page.locator("#hooks-h ~ h3 .badge").first).to_have_text("DISABLED")
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

    hosting_walk(page, domain_url)
    dns_walk(page, domain_url)
    support_walk(page)
    prospecting_walk(browser, page)
    error_pages_walk(context)

    # Signing out ends the session: the pages send the person to sign in again.
    page.click("button:has-text('Sign out')")
    expect(page).to_have_url(re.compile(r"/app/sign-in"))
    page.goto(domain_url)
    expect(page).to_have_url(re.compile(r"/app/sign-in\?next="))
    context.close()
    return domain_url


def alert_rules_walk(page):
    """Alert rules on the groups page: a parameter that is not a number, then one out of range,
    refused naming the field; a rule on the walk's group mailing an address, listed, renamed,
    turned off and on, tested (the notice says how each destination went) and deleted."""
    page.goto(BASE + "/app/organization/groups")
    for threshold, says in (("ninety", "(field: threshold_pct)"), ("150", "(field: condition.threshold_pct)")):
        page.fill("#new-name", "Walk pass rate")
        page.select_option("#new-condition", "dmarc_pass_rate_below")
        page.fill("#new-threshold_pct", threshold)
        page.fill("#new-emails", "alerts@walk.example")
        page.click("button:has-text('Create rule')")
        expect(page.locator(".notice.bad")).to_contain_text(says)
    page.fill("#new-name", "Walk pass rate")
    page.select_option("#new-scope", label="Group Walk clients A")
    page.select_option("#new-condition", "dmarc_pass_rate_below")
    page.fill("#new-threshold_pct", "90")
    page.fill("#new-emails", "alerts@walk.example")
    page.click("button:has-text('Create rule')")
    expect(page.locator(".notice.ok")).to_contain_text("Alert rule Walk pass rate created")
    rule = page.locator("article.rule").filter(has_text="Walk pass rate")
    expect(rule).to_contain_text("DMARC pass rate below: 90%, over 7 days, at least 100 messages")
    expect(rule).to_contain_text("Group Walk clients A")
    expect(rule).to_contain_text("Email alerts@walk.example")

    page.click("summary[aria-label='Edit Walk pass rate']")
    expect(rule.locator("input[name=keep]")).to_be_checked()
    check(page, "alert-rules")
    rule.locator("input[name=name]").fill("Walk pass rate (clients)")
    rule.locator("button:has-text('Save rule')").click()
    expect(page.locator(".notice.ok")).to_contain_text("Alert rule Walk pass rate (clients) saved")
    expect(rule.locator("h3")).to_contain_text("Walk pass rate (clients)")
    expect(rule).to_contain_text("Email alerts@walk.example")
    page.click("button[aria-label='Turn off Walk pass rate (clients)']")
    expect(page.locator(".notice.ok")).to_contain_text("turned off")
    expect(rule.locator("h3 .badge")).to_have_text("off")
    page.click("button[aria-label='Turn on Walk pass rate (clients)']")
    expect(rule.locator("h3 .badge")).to_have_text("on")

    page.click("button[aria-label='Send a test of Walk pass rate (clients)']")
    expect(page.locator(".notice.ok")).to_contain_text("Test sent. email: ")
    log("alert rule test:", page.locator(".notice").inner_text())
    page.once("dialog", lambda d: d.accept())
    page.click("button[aria-label='Delete Walk pass rate (clients)']")
    expect(page.locator(".notice.ok")).to_contain_text("Alert rule deleted")
    expect(page.locator("#rules")).to_contain_text("No alert rule yet")


def hosting_walk(page, domain_url):
    """The hosted records of a domain: its DMARC policy, DMARC hosted behind a CNAME, a DKIM
    key added and deleted (a bad selector refused, naming the field), MTA-STS hosted, and a
    mark certificate file that is not one refused."""
    page.goto(domain_url + "#hosting")
    page.select_option("#dmarc-policy", "quarantine")
    page.fill("#dmarc-pct", "50")
    page.click("#hosting button:has-text('Save policy')")
    expect(page.locator(".notice.ok")).to_contain_text("DMARC policy saved")
    expect(page.locator("#dmarc-policy")).to_have_value("quarantine")
    expect(page.locator("#dmarc-pct")).to_have_value("50")
    dmarc = [r for r in records(page) if r[0] == "dmarc"]
    assert dmarc and "p=quarantine" in dmarc[0][3], f"the guidance did not follow the policy: {dmarc}"

    page.click("button:has-text('Host the DMARC record')")
    expect(page.locator(".notice.ok")).to_contain_text("DMARC is hosted")
    dmarc = [r for r in records(page) if r[0] == "dmarc"]
    assert dmarc and dmarc[0][1] == "CNAME", f"hosted DMARC is not a CNAME to publish: {dmarc}"
    expect(page.locator("button:has-text('Host the DMARC record')")).to_have_count(0)

    for selector, notice in (("not a selector!", ".notice.bad"), ("s1", ".notice.ok")):
        page.fill("#dkim-selector", selector)
        page.select_option("#dkim-type", "CNAME")
        page.fill("#dkim-value", "s1.dkim.sender.example")
        page.click("button:has-text('Add key')")
        expect(page.locator(notice)).to_contain_text("selector" if notice == ".notice.bad" else "Key s1 added")
    expect(page.locator("#hosting tbody")).to_contain_text("s1.dkim.sender.example")

    page.select_option("#sts-mode", "testing")
    page.click("button:has-text('Host MTA-STS')")
    expect(page.locator(".notice.ok")).to_contain_text("MTA-STS is hosted")
    expect(page.locator("#hosting")).to_contain_text("_mta-sts." + A.domain)

    bogus = os.path.join(A.shots, "not-a-vmc.pem")
    with open(bogus, "w", encoding="ascii") as f:
        f.write("-----BEGIN CERTIFICATE-----\nTm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n")
    page.set_input_files("#bimi-file", bogus)
    page.click("button:has-text('Upload and host')")
    expect(page.locator(".notice.bad")).to_be_visible()
    log("BIMI refusal:", page.locator(".notice.bad").inner_text())
    check(page, "domain-hosting")

    page.once("dialog", lambda d: d.accept())
    page.locator("#hosting form[data-confirm] button").first.click()
    expect(page.locator(".notice.ok")).to_contain_text("Key deleted")
    expect(page.locator("#hosting")).not_to_contain_text("s1.dkim.sender.example")


def dns_walk(page, domain_url):
    """A Route 53 connection (moto): bad keys refused naming the field, good ones read the
    zones, coverage lists the walk's domain, and its records are published through it."""
    page.goto(BASE + "/app/organization/dns")
    check(page, "dns")
    if ask("route53") == "none":
        log("DNS connection skipped: no MOTO_ENDPOINT")
        return
    keys = (("not a key", "x", ".notice.bad", "access_key_id"),
            ("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ".notice.ok", "Connected"))
    for key, secret, notice, says in keys:
        page.fill("#conn-name", "Walk Route 53")
        page.fill("#conn-key", key)
        page.fill("#conn-secret", secret)
        page.click("button:has-text('Connect')")
        expect(page.locator(notice)).to_contain_text(says)
    row = page.locator("#coverage tbody tr").filter(has_text=A.domain)
    expect(row).to_have_count(1)
    zone = row.locator("code").inner_text().strip()
    check(page, "dns-coverage")

    page.goto(domain_url + "#records")
    page.select_option("#publish-connection", label="Walk Route 53")
    page.click("button:has-text('Publish in my DNS')")
    expect(page.locator(".notice.ok")).to_contain_text("Published")
    sets = ask("route53", zone, "_dmarc." + A.domain)
    log("published in Route 53:", sets)
    assert "CNAME" in sets, f"the hosted DMARC CNAME is not in the zone: {sets}"


# The smallest PNG: one transparent pixel.
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)


def support_walk(page):
    """A support ticket with an attachment: a type that is not accepted is refused naming the
    field, a PNG is stored and downloads back through the ticket, and a reply is added."""
    text = os.path.join(A.shots, "notes.txt")
    with open(text, "w", encoding="ascii") as f:
        f.write("plain text is not an accepted attachment\n")
    pixel = os.path.join(A.shots, "pixel.png")
    with open(pixel, "wb") as f:
        f.write(PIXEL)
    page.goto(BASE + "/app/support")
    check(page, "support")
    for attached, notice, says in ((text, ".notice.bad", "mime_type"), (pixel, ".notice.ok", "Ticket opened")):
        page.fill("#ticket-subject", "Help with the walk")
        page.fill("#ticket-body", "Our DMARC reports stopped.\nWhat now?")
        page.set_input_files("#new-file-0", attached)
        page.click("button:has-text('Open ticket')")
        expect(page.locator(notice)).to_contain_text(says)
    expect(page.locator("h1")).to_have_text("Help with the walk")
    link = page.locator("article a:has-text('pixel.png')")
    expect(link).to_have_count(1)
    got = page.request.get(BASE + link.get_attribute("href"))
    assert got.ok and got.body() == PIXEL, f"the attachment did not come back: {got.status}"
    page.fill("#reply-body", "Found it: the rua address was removed.")
    page.click("button:has-text('Send reply')")
    expect(page.locator(".notice.ok")).to_contain_text("Reply sent")
    expect(page.locator("article")).to_have_count(2)
    check(page, "support-ticket")
    page.goto(BASE + "/app/support")
    expect(page.locator("#tickets-h + table")).to_contain_text("Help with the walk")


def prospecting_walk(browser, page):
    """A prospecting report written from the page; its public page read without an account,
    its PDF downloaded; deleted, the link answers 404."""
    page.goto(BASE + "/app/prospecting")
    check(page, "prospecting")
    page.fill("#report-for", "Walk Prospect Ltd")
    page.fill("#report-domains", A.domain + "\nnot a domain!")
    page.select_option("#report-currency", "EUR")
    page.click("button:has-text('Write the report')")
    expect(page).to_have_url(re.compile(r"/app/reports/[0-9a-f-]+\?n=ok"))
    expect(page.locator(".notice.ok")).to_contain_text("Report written")
    expect(page.locator("main")).to_contain_text(A.domain + " · ")
    report_url = page.url.split("?")[0]
    pdf = page.request.get(BASE + page.locator("a:has-text('Download the PDF')").get_attribute("href"))
    assert pdf.ok and pdf.body()[:5] == b"%PDF-", f"no PDF: {pdf.status}"

    # The public page needs no account.
    stranger = browser.new_context(viewport={"width": 1280, "height": 900})
    public = stranger.new_page()
    watch(public)
    public.goto(report_url)
    expect(public.locator("h1")).not_to_be_empty()
    expect(public.locator("main")).to_contain_text("Walk Prospect Ltd")
    check(public, "prospecting-report")

    page.goto(BASE + "/app/prospecting")
    expect(page.locator("#reports-h + table")).to_contain_text("Walk Prospect Ltd")
    page.once("dialog", lambda d: d.accept())
    page.click("button[aria-label='Delete the report for Walk Prospect Ltd']")
    expect(page.locator(".notice.ok")).to_contain_text("Report deleted")
    gone = stranger.request.get(report_url)
    assert gone.status == 404, f"a deleted report's page answered {gone.status}"
    stranger.close()


def error_pages_walk(context):
    """The pages people meet when something is off, checked like the others (on a page of
    their own: the browser logs a 4xx document as an error): not found, a form whose token
    was forged, and the page that leads to the payment provider."""
    page = context.new_page()
    missing = page.goto(BASE + "/app/domains/00000000-0000-0000-0000-000000000000")
    assert missing.status == 404, f"an unknown domain answered {missing.status}"
    check(page, "not-found")
    page.goto(BASE + "/app/organization")
    page.evaluate("() => document.querySelectorAll('input[name=_csrf]').forEach(i => i.value = 'forged')")
    page.fill("#key-name", "forged")
    page.click("button:has-text('Create key')")
    expect(page.locator("h1")).to_have_text("This form expired")
    check(page, "form-expired")
    # The continue page follows its link by script; with the provider answering 204 (a
    # navigation that changes nothing) it stays on screen to be checked.
    page.route("**/billing/local/**", lambda route: route.fulfill(status=204))
    page.goto(BASE + "/app/organization/billing")
    page.click("button:has-text('Subscribe')")
    expect(page.locator("a[data-autofollow]")).to_be_visible()
    check(page, "continue")
    page.close()


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
    page.goto(BASE + "/app/organization/settings")
    expect(page.locator("#details dd").first).to_have_text("Walk Org")
    assert page.locator("main form").count() == 0, "a viewer sees the settings' forms"
    check(page, "org-settings-viewer")
    page.goto(BASE + "/app/organization/groups")
    expect(page.locator("#rules-h")).to_be_visible()
    assert page.locator("#rules form, #new-rule-h").count() == 0, "a viewer sees the alert rules' forms"
    page.goto(BASE + "/app/organization/sso")
    expect(page.locator("main")).to_contain_text("Only administrators")
    assert page.locator("main form").count() == 0, "a viewer sees single sign-on's forms"
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


def totp(secret, at):
    """The authenticator app's code (RFC 6238: HMAC-SHA-1 of the 30-second step, 6 digits)."""
    key = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
    digest = hmac.new(key, struct.pack(">Q", at // 30), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    value = struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF
    return f"{value % 1_000_000:06d}"


def enrol(page):
    """Sets up the authenticator app on the two-factor page; its secret and the recovery codes."""
    page.click("button:has-text('Set up an authenticator app')")
    secret = page.locator("#totp-secret").inner_text().strip()
    expect(page.locator("#totp-uri")).to_contain_text(f"secret={secret}")
    expect(page.locator("img.qr")).to_be_visible()
    # Codes come from the service's clock (the test's), not this machine's.
    now = int(ask("now", "0"))
    page.fill("#confirm-code", totp(secret, now))
    page.click("button:has-text('Confirm and turn on')")
    expect(page.locator(".notice.ok")).to_contain_text("Two-factor authentication is on")
    expect(page.locator("#recovery-codes li")).to_have_count(10)
    return secret, now


def security_walk(browser):
    """A new organization's administrator (the owner's sign-ins must stay code-only): the
    settings and notification switches, an authenticator app enrolled with codes computed from
    the secret shown, the organization requiring MFA, single sign-on with a domain proven by
    its TXT record, the app turned off with a recovery code, and the MFA gate's enrolment."""
    email = "admin@walk2.example"
    assert ask("admin2", email) == "ok"
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch(page)
    sign_in(page, email)

    # Settings: the name (a bad phone number refused, naming the field), a notification switch.
    page.goto(BASE + "/app/organization")
    page.click("nav.sections >> text=Settings and notifications")
    expect(page).to_have_url(re.compile(r"/app/organization/settings"))
    page.fill("#name", "Walk Two Renamed")
    page.click("button:has-text('Save settings')")
    expect(page.locator(".notice.ok")).to_contain_text("Settings of Walk Two Renamed saved")
    expect(page.locator("#name")).to_have_value("Walk Two Renamed")
    page.fill("#phone_number", "call me")
    page.click("button:has-text('Save settings')")
    expect(page.locator(".notice.bad")).to_contain_text("(field: phone_number)")
    page.check("#opt-require_mfa")
    page.click("button:has-text('Save settings')")
    expect(page.locator(".notice.bad")).to_contain_text("(field: require_mfa)")
    expect(page.locator("#opt-require_mfa")).not_to_be_checked()
    expect(page.locator("#opt-tasks_digests")).to_be_checked()
    page.uncheck("#opt-tasks_digests")
    page.click("button:has-text('Save notifications')")
    expect(page.locator(".notice.ok")).to_contain_text("Notifications saved")
    expect(page.locator("#opt-tasks_digests")).not_to_be_checked()
    expect(page.locator("#opt-alerts")).to_be_checked()
    page.reload()
    expect(page.locator("#opt-tasks_digests")).not_to_be_checked()
    check(page, "org-settings")

    # The authenticator app: enrolled, the recovery codes shown once, then replaced.
    page.click("nav.sections >> text=Your two-factor authentication")
    expect(page.locator("#totp .badge")).to_have_text("Off")
    check(page, "security-off")
    page.click("button:has-text('Set up an authenticator app')")
    expect(page.locator("#totp-secret")).to_be_visible()
    check(page, "security-enrol")
    page.goto(BASE + "/app/account/security")
    expect(page.locator("#totp .badge")).to_have_text("Waiting")
    page.click("button:has-text('Start again with a new secret')")
    secret = page.locator("#totp-secret").inner_text().strip()
    expect(page.locator("#totp-uri")).to_contain_text(f"secret={secret}")
    expect(page.locator("img.qr")).to_be_visible()
    page.fill("#confirm-code", "000000" if totp(secret, int(ask("now", "0"))) != "000000" else "111111")
    page.click("button:has-text('Confirm and turn on')")
    expect(page.locator(".notice.bad")).to_contain_text("(field: code)")
    page.click("button:has-text('Cancel the enrolment')")
    expect(page.locator("#totp .badge")).to_have_text("Off")
    secret, now = enrol(page)
    first = page.locator("#recovery-codes").inner_text()
    check(page, "security-codes")
    page.goto(BASE + "/app/account/security")
    expect(page.locator("#recovery-codes")).to_have_count(0)
    expect(page.locator("#totp .badge")).to_have_text("On")
    page.fill("#regen-code", totp(secret, now))
    page.click("button:has-text('Make new recovery codes')")
    expect(page.locator(".notice.bad")).to_contain_text("(field: code)")
    # The next step's code (one step of drift is accepted).
    page.fill("#regen-code", totp(secret, now + 30))
    page.click("button:has-text('Make new recovery codes')")
    expect(page.locator("#recovery-codes li")).to_have_count(10)
    codes = page.locator("#recovery-codes li").all_inner_texts()
    assert page.locator("#recovery-codes").inner_text() != first, "the recovery codes were not replaced"
    check(page, "security-on")

    # Signed in with MFA, the administrator may require it.
    page.goto(BASE + "/app/organization/settings")
    page.check("#opt-require_mfa")
    page.click("button:has-text('Save settings')")
    expect(page.locator(".notice.ok")).to_contain_text("saved")
    expect(page.locator("#opt-require_mfa")).to_be_checked()

    # Single sign-on: an issuer without https refused (naming it), then saved; its domain's TXT
    # record published and verified; then removed.
    page.click("nav.sections >> text=Single sign-on")
    expect(page.locator("#conn-h")).to_be_visible()
    check(page, "sso-none")

    def fill_sso(issuer):
        page.fill("#issuer", issuer)
        page.fill("#client_id", "mailward-walk")
        page.fill("#client_secret", "walk-client-secret")
        page.fill("#sso-domains", "walk2.test")
        page.click("button:has-text('Save single sign-on')")

    fill_sso("http://idp.walk2.example")
    expect(page.locator(".notice.bad")).to_contain_text("(field: issuer)")
    fill_sso("https://idp.walk2.example")
    expect(page.locator(".notice.ok")).to_contain_text("Single sign-on saved")
    row = page.locator("#connection tbody tr")
    expect(row).to_have_count(1)
    txt_name = row.locator("td").nth(1).inner_text().strip()
    txt_value = row.locator("td").nth(2).inner_text().strip()
    assert txt_name == "_mailward-sso.walk2.test", f"TXT name {txt_name!r}"
    expect(row.locator(".badge")).to_have_text("not verified")
    expect(page.locator("#connection")).to_contain_text("ends in …cret")
    assert ask("publish", txt_name, "TXT", txt_value) == "ok"
    page.click("button:has-text('Verify domains')")
    expect(page.locator(".notice.ok")).to_contain_text("1 of 1 domains verified")
    expect(row.locator(".badge")).to_have_text("verified")
    expect(page.locator("button:has-text('Verify domains')")).to_have_count(0)
    expect(page.locator("#client_secret")).to_have_value("")
    check(page, "sso")
    page.once("dialog", lambda d: d.accept())
    page.click("button:has-text('Remove single sign-on')")
    expect(page.locator(".notice.ok")).to_contain_text("Single sign-on removed")
    expect(page.locator("#connection tbody")).to_have_count(0)

    # The app turned off with a recovery code.
    page.goto(BASE + "/app/account/security")
    page.fill("#off-code", codes[0].strip())
    page.once("dialog", lambda d: d.accept())
    page.click("button:has-text('Turn off two-factor authentication')")
    expect(page.locator(".notice.ok")).to_contain_text("Two-factor authentication is off")
    expect(page.locator("#totp .badge")).to_have_text("Off")
    page.click("button:has-text('Sign out')")
    expect(page.locator("#email")).to_be_visible()

    # The organization requires MFA and the account has none: the door sends the person to
    # enrol, and the confirmed app lets them in. (A page of its own: the door answers 403,
    # which the browser logs as an error.)
    door = context.new_page()
    sign_in(door, email)
    expect(door.locator("h1")).to_have_text("Two-factor authentication required")
    check(door, "mfa-required")
    door.click("text=Set up an authenticator app")
    expect(door).to_have_url(re.compile(r"/app/account/security$"))
    enrol(door)
    door.goto(BASE + "/app/domains")
    expect(door.locator("h1")).to_have_text("Domains")
    context.close()


def nojs_walk(browser, domain_url):
    """Without JavaScript: sign in, read the domain list and a domain's page (its chart is SVG
    in the page), and post a form (check now), which redirects with its notice."""
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    sign_in(page, A.email)
    expect(page.locator("tbody tr").first).to_be_visible()
    page.goto(domain_url + "?days=30")
    expect(page.locator("h1")).to_have_text(A.domain)
    expect(page.locator("#reports svg").first).to_be_visible()
    expect(page.locator("button[data-copy]").first).to_be_hidden()
    page.click("#records button:has-text('Check now')")
    expect(page.locator(".notice.ok")).to_contain_text("Checked:")
    context.close()


def main():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        signup_walk(browser)
        domain_url = owner_walk(browser)
        security_walk(browser)
        audit_walk(browser)
        other_id = ask("other")
        viewer_walk(browser, domain_url)
        limited_walk(browser, other_id)
        keyboard_walk(browser, domain_url)
        nojs_walk(browser, domain_url)
        browser.close()
    assert not ERRORS, "browser errors:\n" + "\n".join(ERRORS)
    log("done")


main()
