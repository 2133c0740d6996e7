"""SCIM 2.0 through the scim2-client library (PyPI), as an identity provider drives a SCIM
server: discovery (ServiceProviderConfig, ResourceTypes, Schemas, each parsed by scim2-models),
then Users and Groups. Run by `tests/api/api/scim.rs`, which prepares the organization and checks
the effects through the REST API.

Usage:
  scim.py provision BASE_URL TOKEN       provisions kim@corp.example (editor) in a new group and
                                         prints {"kim": id, "group": id, "admin": id}
  scim.py deprovision BASE_URL TOKEN ID  deactivates, then deletes the user
  scim.py tester BASE_URL TOKEN          runs the scim2-tester compliance checks of discovery
                                         and misc (its CRUD checks fill userName with random
                                         text, which Mailward refuses: a user is an email at a
                                         verified domain; `provision` covers CRUD); prints the
                                         counts and fails on any ERROR or CRITICAL
"""

import json
import sys
import warnings

import httpx2 as httpx
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_models import PatchOp, PatchOperation, SCIMException, SearchRequest

# The library's own deprecation notes are not findings about the server.
warnings.simplefilter("ignore", DeprecationWarning)
command, base_url, token = sys.argv[1], sys.argv[2], sys.argv[3]
http = httpx.Client(base_url=f"{base_url}/scim/v2", headers={"Authorization": f"Bearer {token}"})
client = SyncSCIMClient(http)
client.discover()
assert {rt.id for rt in client.resource_types} == {"User", "Group"}, client.resource_types
assert client.service_provider_config.patch.supported
User = client.get_resource_model("User")
Group = client.get_resource_model("Group")


def expect_error(status, call):
    try:
        result = call()
    except SCIMException as error:
        assert str(status) in repr(error) or getattr(error, "status", None) == status, repr(error)
        return
    raise AssertionError(f"expected a SCIM error {status}, got {result!r}")


def find(user_name):
    found = client.query(User, query_parameters=SearchRequest(filter=f'userName eq "{user_name}"'))
    return found.resources or []


if command == "provision":
    # A bad token is refused with SCIM's 401.
    response = httpx.get(f"{base_url}/scim/v2/Users", headers={"Authorization": "Bearer mwscim_nope"})
    assert response.status_code == 401 and response.json()["status"] == "401", response.text

    assert find("kim@corp.example") == []
    kim = client.create(
        User(
            user_name="kim@corp.example",
            display_name="Kim",
            name=User.Name(given_name="Kim", family_name="Lee"),
            roles=[User.Roles(value="editor")],
            external_id="okta-123",
        )
    )
    assert kim.id and kim.active and kim.user_name == "kim@corp.example", kim
    assert [r.value for r in kim.roles] == ["editor"], kim.roles
    # Case-insensitive userName filter; a second create is a uniqueness conflict.
    assert [u.id for u in find("KIM@corp.example")] == [kim.id]
    expect_error(409, lambda: client.create(User(user_name="kim@corp.example")))
    # Not a verified domain of the organization.
    expect_error(403, lambda: client.create(User(user_name="eve@elsewhere.example")))
    # An unsupported filter.
    expect_error(400, lambda: client.query(User, query_parameters=SearchRequest(filter='title co "x"')))

    # Replace and patch.
    kim.display_name = "Kim Lee"
    kim = client.replace(kim)
    assert kim.display_name == "Kim Lee"
    kim = client.modify(
        User, kim.id, PatchOp[User](operations=[PatchOperation(op="replace", path="name.givenName", value="Kimberly")])
    )
    assert kim.name.given_name == "Kimberly", kim

    # A group with Kim; its membership is Kim's group limit.
    group = client.create(Group(display_name="EU customers", members=[Group.Members(value=kim.id)]))
    assert [m.value for m in group.members] == [kim.id], group
    group = client.modify(
        Group, group.id, PatchOp[Group](operations=[PatchOperation(op="replace", path="displayName", value="EU clients")])
    )
    assert group.display_name == "EU clients"
    listed = client.query(Group, query_parameters=SearchRequest(filter='displayName eq "EU clients"'))
    assert [g.id for g in listed.resources] == [group.id]
    kim = client.query(User, kim.id)
    assert [g.value for g in kim.groups] == [group.id], kim.groups

    # The administrator, adopted: never deprovisioned while the last one.
    admin = client.create(User(user_name="admin@corp.example"))
    expect_error(400, lambda: client.delete(User, admin.id))
    print(json.dumps({"kim": kim.id, "group": group.id, "admin": admin.id}))

elif command == "tester":
    from scim2_tester import Status, check_server

    results = check_server(client, include_tags={"discovery", "misc"})
    bad = [r for r in results if r.status in (Status.ERROR, Status.CRITICAL)]
    for r in bad:
        print(f"{r.status.name}: {r.title}: {r.reason}", file=sys.stderr)
    counts = {}
    for r in results:
        counts[r.status.name] = counts.get(r.status.name, 0) + 1
    assert not bad, f"{len(bad)} compliance checks failed: {counts}"
    print(json.dumps(counts))

elif command == "deprovision":
    user_id = sys.argv[4]
    kim = client.modify(User, user_id, PatchOp[User](operations=[PatchOperation(op="replace", path="active", value=False)]))
    assert kim.active is False, kim
    client.delete(User, user_id)
    expect_error(404, lambda: client.query(User, user_id))
    print(json.dumps({"deleted": user_id}))
