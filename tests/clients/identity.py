"""Identity against the running `mailward` binary, with codes from an independent TOTP
implementation (pyotp): enrolment from the otpauth URI, sign-in with the second factor, a code
refused when reused within its step, recovery codes that work once, and an organization's
`require_mfa` holding an unenrolled member until they enrol.

Usage: identity.py BASE_URL OUTBOX_DIR
"""

import json
import pathlib
import re
import sys
import time
import urllib.error
import urllib.request
import uuid

import pyotp

base_url, outbox = sys.argv[1], pathlib.Path(sys.argv[2])
run = uuid.uuid4().hex[:8]


def call(method, path, body=None, token=None, key=None):
    request = urllib.request.Request(base_url + path, method=method)
    if body is not None:
        request.data = json.dumps(body).encode()
        request.add_header("content-type", "application/json")
    if token:
        request.add_header("authorization", f"Bearer {token}")
    if key:
        import base64

        request.add_header("authorization", "Basic " + base64.b64encode(f"{key}:".encode()).decode())
        request.add_header("mailward-version", "2025-04-30")
    try:
        with urllib.request.urlopen(request) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as error:
        raw = error.read()
        return error.code, json.loads(raw) if raw else None


def newest_mail(to, pattern):
    for _ in range(50):
        mails = [p.read_text() for p in sorted(outbox.glob("*.eml"))]
        for mail in reversed(mails):
            if f"To: {to}" in mail:
                found = re.search(pattern, mail)
                if found:
                    return found.group(1)
        time.sleep(0.1)
    raise AssertionError(f"no mail to {to} matching {pattern}")


def sign_up(email, org):
    status, started = call("POST", "/signup", {"email": email, "organization_name": org})
    assert status == 201, started
    code = newest_mail(email, r"code is (\d{6})")
    status, done = call("POST", "/signup/verify", {"signup_id": started["signup_id"], "code": code})
    assert status == 201, done
    return done["organization"]["id"], done["api_key"]["key"]


def start_sign_in(email):
    before = len(list(outbox.glob("*.eml")))
    status, started = call("POST", "/oauth/session/start", {"email": email})
    assert status == 202, started
    for _ in range(50):
        if len(list(outbox.glob("*.eml"))) > before:
            break
        time.sleep(0.1)
    return started["signin_id"], newest_mail(email, r"code is (\d{6})")


def enrol(token, email):
    status, started = call("POST", "/account/mfa/totp", {}, token=token)
    assert status == 200, started
    # The app reads the otpauth URI: pyotp parses it into the same parameters.
    totp = pyotp.parse_uri(started["otpauth_uri"])
    assert totp.secret == started["secret"] and totp.digits == 6 and totp.interval == 30
    assert totp.issuer == "Mailward" and totp.name == email, (totp.issuer, totp.name)
    assert "<svg" in started["qr_svg"]
    status, codes = call("POST", "/account/mfa/totp/confirm", {"code": totp.now()}, token=token)
    assert status == 200, codes
    assert len(set(codes["recovery_codes"])) == 10
    return totp, codes["recovery_codes"]


# An administrator signs in with the emailed code, enrols, and turns the requirement on.
admin = f"admin-{run}@identity.example"
org, key = sign_up(admin, "Identity client")
signin, code = start_sign_in(admin)
status, session = call("POST", "/oauth/session", {"signin_id": signin, "code": code})
assert status == 200, session
admin_token = session["token"]
status, body = call("POST", f"/organizations/{org}", {"require_mfa": True}, token=admin_token)
assert status == 403 and body["code"] == "mfa_confirmation_required", body
totp, recovery = enrol(admin_token, admin)
status, body = call("POST", f"/organizations/{org}", {"require_mfa": True}, token=admin_token)
assert status == 200 and body["require_mfa"] is True, body

# Sign-in now asks for the second factor. The next step's code is within the allowed drift.
signin, code = start_sign_in(admin)
status, body = call("POST", "/oauth/session", {"signin_id": signin, "code": code})
assert status == 403 and body["code"] == "mfa_required" and body["param"] == "mfa_code", body
next_code = totp.at(time.time() + 30)
status, session = call("POST", "/oauth/session", {"signin_id": signin, "mfa_code": next_code})
assert status == 200, session
status, listed = call("GET", "/oauth/sessions", token=session["token"])
assert status == 200 and any(s["current"] and "mfa" in s["amr"] for s in listed["data"]), listed

# The same code again, within its step: refused.
signin, code = start_sign_in(admin)
status, body = call("POST", "/oauth/session", {"signin_id": signin, "code": code, "mfa_code": next_code})
assert status == 400 and body["code"] == "mfa_code_reused", body
# A recovery code instead: once.
status, session = call("POST", "/oauth/session", {"signin_id": signin, "mfa_code": recovery[0]})
assert status == 200, session
signin, code = start_sign_in(admin)
status, body = call("POST", "/oauth/session", {"signin_id": signin, "code": code, "mfa_code": recovery[0]})
assert status == 400 and body["code"] == "mfa_code_incorrect", body

# A colleague without an authenticator is held at every route until they enrol.
colleague = f"kim-{run}@identity.example"
sign_up(colleague, "Kim's own")
status, body = call("POST", "/members", {"email": colleague, "roles": ["editor"]}, key=key)
assert status == 201, body
invitation = newest_mail(colleague, r"(mwinv_[A-Za-z0-9_-]+)")
status, body = call("POST", "/invitations/accept", {"token": invitation})
assert status == 201, body
signin, code = start_sign_in(colleague)
status, session = call("POST", "/oauth/session", {"signin_id": signin, "code": code, "organization_id": org})
assert status == 200, session
kim_token = session["token"]
status, body = call("GET", "/domains", token=kim_token)
assert status == 403 and body["code"] == "mfa_enrollment_required", body
status, body = call("GET", "/members/mfa/statuses", token=session["token"])
assert status == 403, body
kim_totp, _ = enrol(kim_token, colleague)
status, body = call("GET", "/domains", token=kim_token)
assert status == 200, body
status, statuses = call("GET", "/members/mfa/statuses", key=key)
assert status == 200 and all(s["mfa_enabled"] and not s["blocked_by_requirement"] for s in statuses), statuses

# Sign-out ends the session at its next request.
status, _ = call("DELETE", "/oauth/session", token=kim_token)
assert status == 204
status, body = call("GET", "/domains", token=kim_token)
assert status == 401, body
print("identity: TOTP (pyotp) enrolment, sign-in with MFA, reuse refused, recovery codes once, require_mfa enforced")
