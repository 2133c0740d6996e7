"""Drives the local stack through the Python client that openapi-python-client generated from
/swagger.json: signup, verify, POST /domains, GET /domains, GET /domains/{id}/dns-records, each
answer parsed into the generated typed models.

Usage: python_client.py BASE_URL OUTBOX_DIR (the generated package must be importable).
"""

import base64
import pathlib
import re
import sys
import uuid

from mailward_api_client import AuthenticatedClient, Client
from mailward_api_client.api.domains import create_domain, get_dns_records, list_domains
from mailward_api_client.api.signup import start_signup, verify_signup
from mailward_api_client.models import (
    CreateDomainRequest,
    DnsRecordsResponse,
    Domain,
    DomainList,
    OrganizationWithKey,
    SignupRequest,
    SignupStarted,
    VerifyRequest,
)

base_url, outbox = sys.argv[1], pathlib.Path(sys.argv[2])
email = f"client-{uuid.uuid4().hex[:8]}@python-client.example"

public = Client(base_url=base_url, raise_on_unexpected_status=True)
started = start_signup.sync(client=public, body=SignupRequest(email=email, organization_name="Python client"))
assert isinstance(started, SignupStarted), started

mail = next(m for m in (p.read_text() for p in sorted(outbox.glob("*.eml"))) if email in m)
code = re.search(r"code is (\d{6})", mail).group(1)
verified = verify_signup.sync(client=public, body=VerifyRequest(signup_id=started.signup_id, code=code))
assert isinstance(verified, OrganizationWithKey), verified
key = verified.api_key.key

client = AuthenticatedClient(
    base_url=base_url,
    token=base64.b64encode(f"{key}:".encode()).decode(),
    prefix="Basic",
    headers={"Mailward-Version": "2025-04-30"},
    raise_on_unexpected_status=True,
)
domain = create_domain.sync(client=client, body=CreateDomainRequest(url="python-client.example"))
assert isinstance(domain, Domain), domain
assert domain.url == "python-client.example"

listed = list_domains.sync(client=client)
assert isinstance(listed, DomainList), listed
assert [d.url for d in listed.data] == ["python-client.example"]
assert listed.page_info.total_count == 1

records = get_dns_records.sync(client=client, id=domain.id)
assert isinstance(records, DnsRecordsResponse), records
assert any(r.host == "_dmarc.python-client.example" for r in records.records), records
print(f"python client: signup, verify, create, list and dns-records parsed ({len(records.records)} records)")
