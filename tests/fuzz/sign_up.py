"""Signs up on the local stack and prints the new organization's API key.

Usage: python sign_up.py BASE_URL OUTBOX_DIR
"""

import json
import pathlib
import re
import sys
import time
import urllib.request

base, outbox = sys.argv[1], pathlib.Path(sys.argv[2])
email = "fuzz@fuzz.example"


def post(path, body):
    req = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req) as resp:
        return json.load(resp)


started = post("/signup", {"email": email, "organization_name": "Fuzz"})
code = None
for _ in range(50):
    mails = [p.read_text() for p in sorted(outbox.glob("*.eml"))]
    found = [re.search(r"code is (\d{6})", m) for m in mails if email in m]
    if found and found[-1]:
        code = found[-1].group(1)
        break
    time.sleep(0.1)
if code is None:
    sys.exit("sign_up.py: no signup code arrived")
verified = post("/signup/verify", {"signup_id": started["signup_id"], "code": code})
print(verified["api_key"]["key"])
