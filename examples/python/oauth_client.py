#!/usr/bin/env python3
"""A Petstore client that signs in with OAuth 2.0, on requests-oauthlib (docs/tokens.md).

What it shows: the service as any OAuth 2.0 authorization server, to a library that knows nothing of
it. The key is the client: its id (`key_...`) the client id, the key itself (`pet_...`) the client
secret. It

- reads the service's metadata (RFC 8414, `/.well-known/oauth-authorization-server`), checks that its
  `issuer` is the URL it was given and that it takes the client authentication asked for, and takes
  the token endpoint from it;
- gets an access token for `pets:read` by the client credentials grant, with
  `oauthlib.oauth2.BackendApplicationClient`, the credentials sent by HTTP Basic
  (`client_secret_basic`, the default) or, with `--post`, in the form (`client_secret_post`);
- reads pet 1 with the token (`Authorization: Bearer ...`) and `Petstore-Version: 2026-11-26`.

It prints one JSON line of what happened (never the key nor the token): the authentication the
library used, the token's type, lifetime and scope, and the pet's status and name. The exit code is 0
when the pet was read (200), 1 otherwise, and 2 when the environment is incomplete.

How to run it (Debian: `apt-get install python3-requests-oauthlib`; elsewhere `pip install
requests-oauthlib`), with the service running and a key and its id (`npx petstore keys list`):

    PETSTORE_URL=http://localhost:8080 PETSTORE_CLIENT_ID=key_... PETSTORE_CLIENT_SECRET=pet_... \\
        python3 examples/python/oauth_client.py [--post]

`PETSTORE_URL` must be the service's `PUBLIC_URL` (the issuer). oauthlib refuses plain http; on
the loopback addresses (a service on this machine) this client allows it, anywhere else it does not.
"""

import json
import os
import sys
import urllib.parse

import requests
from oauthlib.oauth2 import BackendApplicationClient, OAuth2Error
from requests_oauthlib import OAuth2Session

VERSION = "2026-11-26"
SCOPE = ["pets:read"]
TIMEOUT = 30  # seconds to wait for one answer
LOOPBACK = {"localhost", "127.0.0.1", "::1"}


def main() -> int:
    try:
        url = os.environ["PETSTORE_URL"].rstrip("/")
        client_id = os.environ["PETSTORE_CLIENT_ID"]
        client_secret = os.environ["PETSTORE_CLIENT_SECRET"]
    except KeyError as missing:
        print(f"set {missing.args[0]} (see this file's docstring)", file=sys.stderr)
        return 2
    method = "client_secret_post" if "--post" in sys.argv[1:] else "client_secret_basic"
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme == "http" and parsed.hostname in LOOPBACK:
        os.environ["OAUTHLIB_INSECURE_TRANSPORT"] = "1"

    metadata = requests.get(f"{url}/.well-known/oauth-authorization-server", timeout=TIMEOUT).json()
    if metadata.get("issuer") != url:
        print(f"the issuer is {metadata.get('issuer')!r}, not {url!r} (PUBLIC_URL)", file=sys.stderr)
        return 1
    if method not in metadata.get("token_endpoint_auth_methods_supported", []):
        print(f"the token endpoint does not take {method}", file=sys.stderr)
        return 1

    oauth = OAuth2Session(client=BackendApplicationClient(client_id=client_id, scope=SCOPE))
    # What the library sent for the token, read from the answer's request: HTTP Basic or the form.
    sent = {}

    def record(answer):
        basic = answer.request.headers.get("Authorization", "").startswith("Basic ")
        in_form = "client_secret" in urllib.parse.parse_qs(answer.request.body or "")
        ways = {(True, False): "client_secret_basic", (False, True): "client_secret_post"}
        sent["authentication"] = ways.get((basic, in_form), "both or neither")
        return answer

    oauth.register_compliance_hook("access_token_response", record)
    try:
        token = oauth.fetch_token(
            metadata["token_endpoint"],
            client_id=client_id,
            client_secret=client_secret,
            # requests-oauthlib sends the credentials by HTTP Basic unless told to put the client id in the form.
            include_client_id=method == "client_secret_post",
            timeout=TIMEOUT,
        )
    except OAuth2Error as refused:
        print(f"no token: {refused.error}: {refused.description}", file=sys.stderr)
        return 1
    answer = oauth.get(f"{url}/pets/1", headers={"Petstore-Version": VERSION}, timeout=TIMEOUT)
    print(
        json.dumps(
            {
                "authentication": sent.get("authentication"),
                "token_type": token.get("token_type"),
                "expires_in": token.get("expires_in"),
                "scope": token.get("scope"),
                "status": answer.status_code,
                "authorization": answer.request.headers.get("Authorization", "").split(" ")[0],
                "pet": answer.json().get("name") if answer.status_code == 200 else None,
            }
        )
    )
    return 0 if answer.status_code == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
