#!/usr/bin/env python3
"""A careless Petstore client in Python: what NOT to do, for the conformance runner to catch.

It does each scenario's task the way careless clients do, and `petstore conformance` fails every
scenario it runs, each for that scenario's own reason (see README.md for the verdicts):

- no `Petstore-Version` (the key's pinned version answers, whatever it is);
- any failure (an error status, a reset connection, a `410` too) is retried at once, a few times;
- `Retry-After`, `X-RateLimit-Remaining` and `RateLimit` are ignored;
- no `Idempotency-Key` on a `POST`, no `If-None-Match` on a `GET`;
- a listing's next page is asked for with a cursor it makes up (the last id seen), as if cursors
  were offsets, instead of the `nextCursor` it was given;
- the webhook receiver answers `200` to every delivery, without verifying anything;
- with client credentials, each caller asks for an access token of its own, and a token refused as
  expired (`401` `invalid_token`) is sent again as it is, like any failure;
- an event stream that ends is opened again at once, without `Last-Event-ID` (its `retry` ignored):
  the events written meanwhile are lost, and it gives up on a stream silent for `SILENT` seconds.

It is deterministic: no randomness, no waits. Run it, from the repository's root:

    npx petstore conformance --url http://localhost:8080 --key "$PETSTORE_TEST_KEY" \\
        --command "python3 examples/python/careless_client.py" --jobs 4

It reads `PETSTORE_URL`, `PETSTORE_API_KEY`, `PETSTORE_SCENARIO`, for the token scenarios
`PETSTORE_CLIENT_ID` and `PETSTORE_CLIENT_SECRET`, and, for `webhook-receiver`,
`PETSTORE_RECEIVER_PORT`; it exits 0 when its task got done anyway, 1 when it gave up.
"""

import http.client
import json
import os
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer

RETRIES = 5  # "a few": every failure is tried again at once, this many times
SILENT = 2  # seconds an event stream may say nothing before the careless client gives up on it


def log(message):
    print(message, file=sys.stderr, flush=True)


class GaveUp(Exception):
    pass


def call(method, path, body=None, token=None):
    """One request, retried at once on any failure; only the key (or the token it is given) is sent."""
    url = os.environ["PETSTORE_URL"].rstrip("/") + path
    headers = {"Authorization": f"Bearer {token}"} if token else {"X-API-Key": os.environ["PETSTORE_API_KEY"]}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    for _ in range(1 + RETRIES):
        try:
            with urllib.request.urlopen(urllib.request.Request(url, data, headers, method=method)) as answer:
                log(f"{method} {path} -> {answer.status}")
                return json.loads(answer.read())
        except urllib.error.HTTPError as error:
            log(f"{method} {path} -> {error.code}; trying again")
        except (urllib.error.URLError, ConnectionError, http.client.HTTPException) as error:
            log(f"{method} {path} -> {error!r}; trying again")
    raise GaveUp(f"{method} {path} still failing after {RETRIES} retries")


def read_pets(*ids):
    def task():
        for pet_id in ids:
            log(f"pet {pet_id} is {call('GET', f'/pets/{pet_id}')['name']}")

    return task


def place_order():
    order = call("POST", "/store/orders", {"petId": 1, "quantity": 1})
    log(f"order {order['id']} placed")


def page_to_end():
    page = call("GET", "/pets?limit=5")
    while page["nextCursor"]:
        last_id = page["data"][-1]["id"]
        page = call("GET", f"/pets?limit=5&cursor={last_id}")  # a cursor of its own making


def sunset_gone():
    try:
        read_pets(1)()
    except GaveUp:
        pet = next(pet for pet in call("GET", "/pets")["data"] if pet["id"] == 1)
        log(f"pet 1 is {pet['name']} (found in GET /pets, after all)")


def list_pets():
    log(f"{len(call('GET', '/pets')['data'])} pets")


def fetch_token():
    """A new access token, every time it is called: the client credentials in the form."""
    form = {
        "grant_type": "client_credentials",
        "client_id": os.environ["PETSTORE_CLIENT_ID"],
        "client_secret": os.environ["PETSTORE_CLIENT_SECRET"],
    }
    request = urllib.request.Request(
        os.environ["PETSTORE_URL"].rstrip("/") + "/oauth/token",
        urllib.parse.urlencode(form).encode(),
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    with urllib.request.urlopen(request) as answer:
        log(f"POST /oauth/token -> {answer.status}")
        return json.loads(answer.read())["access_token"]


def token_reuse():
    """Eight parallel callers, each with a token of its own."""
    failures = []

    def caller(pet_id):
        try:
            call("GET", f"/pets/{pet_id}", token=fetch_token())
        except Exception as failure:  # a thread's failure is the task's
            failures.append(failure)

    callers = [threading.Thread(target=caller, args=(pet_id,)) for pet_id in range(1, 9)]
    for thread in callers:
        thread.start()
    for thread in callers:
        thread.join()
    if failures:
        raise GaveUp(str(failures[0]))


def token_expiry():
    """One token, kept whatever happens: after the clock moved an hour on, the refused token is sent again."""
    token = fetch_token()
    call("GET", "/pets/1", token=token)
    call("POST", "/test-clock/advance", {"seconds": 3600})
    call("GET", "/pets/1", token=token)


def stream_resume():
    """Follows the events, placing order 2 once order 1's `order.placed` came; an ended stream is opened again at
    once, without Last-Event-ID, so order 2's event, written meanwhile, never comes: it gives up."""
    url = os.environ["PETSTORE_URL"].rstrip("/") + "/events/stream"
    orders, placed = [], set()
    for _ in range(1 + RETRIES):
        request = urllib.request.Request(url, headers={"X-API-Key": os.environ["PETSTORE_API_KEY"]})
        with urllib.request.urlopen(request, timeout=SILENT) as stream:
            log(f"GET /events/stream -> {stream.status}")
            if not orders:
                orders.append(call("POST", "/store/orders", {"petId": 1, "quantity": 1})["id"])
            event_type = None
            try:
                for line in stream:  # as if every line ended with LF, and every event were one data line
                    line = line.decode().strip()
                    if line.startswith("event:"):
                        event_type = line[len("event:"):].strip()
                    elif line.startswith("data:") and event_type == "order.placed":
                        placed.add(json.loads(line[len("data:"):])["data"]["id"])
                        if len(orders) == 1:
                            orders.append(call("POST", "/store/orders", {"petId": 1, "quantity": 1})["id"])
                        if placed >= set(orders) and len(orders) == 2:
                            return
            except TimeoutError:
                raise GaveUp(f"the event stream said nothing for {SILENT} s (order.placed came for {sorted(placed)})")
        log("the event stream ended; opening another at once")
    raise GaveUp(f"the event stream ended {1 + RETRIES} times")


def webhook_receiver():
    class AcceptEverything(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)  # no verification at all
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", int(os.environ["PETSTORE_RECEIVER_PORT"])), AcceptEverything)
    print("PETSTORE_READY", flush=True)
    server.serve_forever()  # until the runner's SIGTERM ends the process


TASKS = {
    "retry-after-503": read_pets(1),
    "backs-off-500": read_pets(1),
    "reset-order": place_order,
    "unavailable-order": place_order,
    "error-order": place_order,
    "rate-limited-burst": read_pets(1),
    "rate-limited-order": place_order,
    "pace-minute": read_pets(1, 2, 3),
    "pace-day": read_pets(1, 2),
    "revalidate": read_pets(1, 1, 1, 1),
    "page-to-end": page_to_end,
    "version-pin": read_pets(1, 2),
    "sunset-gone": sunset_gone,
    "webhook-receiver": webhook_receiver,
    "flaky-listing": list_pets,
    "token-reuse": token_reuse,
    "token-expiry": token_expiry,
    "stream-resume": stream_resume,
}

if __name__ == "__main__":
    try:
        TASKS[os.environ["PETSTORE_SCENARIO"]]()
    except GaveUp as gave_up:
        log(str(gave_up))
        sys.exit(1)
