#!/usr/bin/env python3
"""A good Petstore client in Python, on the standard library alone.

What it shows: everything a good API citizen does, in one small class (`PetstoreClient`), and the
task of each scenario of the catalogue (`GET /scenarios`) as a small function of a dispatch table
(`TASKS`), so that `petstore conformance` can run it against every scenario and the report card
finds nothing wrong:

- every request sends `X-API-Key` and `Petstore-Version: 2026-11-26` (the version this client was
  written against);
- one gate per key: after a `429` or a `503`, nothing is sent with the key until its `Retry-After`
  has passed; when `X-RateLimit-Remaining` is `0`, nothing until the binding window frees a slot
  (the largest `t` of the `RateLimit` header's windows with `r=0`);
- a `500`, `503`, `429` or a reset/cut connection is retried with exponential backoff and full
  jitter (a random wait between 0 and 100 ms x 2^n, at most 2 s), and never sooner than
  `Retry-After`; the random generator is seeded with the scenario's id, so runs repeat;
- every `POST` carries an `Idempotency-Key`, made once per operation and sent again on each retry;
- an `ETag` cache per URL: a `GET` sends `If-None-Match`, and a `304` means the cached body;
- listings are paged by passing `nextCursor` back unchanged, with the same filters;
- a `410` is never retried: it raises `Gone`, and the operation is never called again;
- with client credentials (the token scenarios), one access token for every thread of the client
  (`Tokens`): asked for once, behind a lock, renewed 30 s before `expires_in` runs out, and once
  after a `401` whose `WWW-Authenticate` says `invalid_token`, the request then sent again with the
  new token (never the refused one); a token request goes through the gate and the retries as any;
- the webhook receiver verifies Standard Webhooks signatures (HMAC-SHA256 over
  `{webhook-id}.{webhook-timestamp}.{body}`, any of the `v1,` signatures, 5 minutes' tolerance),
  answers `2xx` to a valid delivery and to a duplicate, `4xx` to anything else;
- the event stream (`GET /events/stream`, Server-Sent Events) is parsed as WHATWG HTML says
  (`ServerSentEvents`: `retry`, `id`, `event`, `data`, comments, any line ending); when it ends,
  the client waits its `retry` and reconnects with `Last-Event-ID`, the last id it received.

How to run it, from the repository's root, with the service running and a test key:

    npx petstore conformance --url http://localhost:8080 --key "$PETSTORE_TEST_KEY" \\
        --command "python3 examples/python/petstore_client.py" --jobs 4

The runner sets `PETSTORE_URL`, `PETSTORE_API_KEY` (a child test key), `PETSTORE_CLIENT_ID` and
`PETSTORE_CLIENT_SECRET` (the same key as an OAuth client: its id and the key) and `PETSTORE_SCENARIO`,
and, for `webhook-receiver`, `PETSTORE_RECEIVER_URL`, `PETSTORE_RECEIVER_PORT` and
`PETSTORE_WEBHOOK_SECRET`. The exit code is 0 when the scenario's task succeeded, 1 when it failed
and 2 when the environment is incomplete or names an unknown scenario.
"""

import base64
import concurrent.futures
import hashlib
import hmac
import http.client
import json
import os
import random
import re
import signal
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSION = "2026-11-26"
RETRYABLE = {429, 500, 503}
BACKOFF_BASE = 0.1  # seconds: the first retry waits up to 100 ms, the n-th up to 100 ms x 2^n
BACKOFF_CAP = 2.0  # seconds: no jittered wait is longer (Retry-After may ask for more)
MAX_ATTEMPTS = 16  # tries of one request before giving up
TIMEOUT = 30  # seconds to wait for one answer
WEBHOOK_TOLERANCE = 5 * 60  # seconds a webhook-timestamp may differ from our clock, both ways
RENEW_BEFORE = 30.0  # seconds before a token expires that it is renewed (at most half its life)
DEFAULT_RETRY_MS = 3000  # an event stream's reconnection time until its `retry` field says otherwise
MAX_STREAMS = 8  # openings of one event stream (the first and its reconnections) before giving up


def log(message):
    print(message, file=sys.stderr, flush=True)


class ApiError(Exception):
    """An answer the client cannot use (a 4xx, or a failure that outlived its retries)."""

    def __init__(self, method, path, status, problem):
        detail = problem.get("detail") if isinstance(problem, dict) else None
        super().__init__(f"{method} {path}: {status}" + (f" ({detail})" if detail else ""))
        self.status = status
        self.problem = problem


class Gone(ApiError):
    """A `410`: the operation (or version) is past its sunset, for good. Never retried."""


class ConnectionLost(Exception):
    """The connection was reset or cut before an answer came: the request may have been carried out."""


class Answer:
    def __init__(self, status, headers, raw, body=None):
        self.status = status
        self.headers = headers
        self.raw = raw
        self.body = body  # a stream's answer: the response, read as it comes (and closed) by its caller

    def json(self):
        return json.loads(self.raw) if self.raw else None

    def problem(self):
        """An error's problem details (RFC 9457), or what can be said of a body that is none."""
        try:
            return self.json() or {}
        except ValueError:
            return {"detail": self.raw[:200].decode(errors="replace")}


class Gate:
    """When the next request of one key may be sent (a monotonic instant)."""

    def __init__(self):
        self.open_at = 0.0

    def hold_for(self, seconds):
        self.open_at = max(self.open_at, time.monotonic() + seconds)

    def wait(self):
        delay = self.open_at - time.monotonic()
        if delay > 0:
            time.sleep(delay)


class Tokens:
    """One access token for every thread of a client: asked for once, and renewed once, behind a lock."""

    def __init__(self, fetch):
        self.fetch = fetch  # asks the service for a token: (access_token, expires_in)
        self.lock = threading.Lock()
        self.held = None  # (token, when to renew it: a monotonic instant)

    def get(self):
        """The token to send; the first thread to find none, or one due for renewal, gets one for all."""
        with self.lock:
            if self.held is None or time.monotonic() >= self.held[1]:
                token, expires_in = self.fetch()
                self.held = (token, time.monotonic() + expires_in - min(RENEW_BEFORE, expires_in / 2))
            return self.held[0]

    def refused(self, token):
        """The service refused `token` (401 invalid_token): the next `get` renews it, unless another thread did."""
        with self.lock:
            if self.held is not None and self.held[0] == token:
                self.held = None


class PetstoreClient:
    """A client of the Petstore API that a report card finds nothing wrong with."""

    _gates = {}  # one gate per API key, shared by every client of that key

    def __init__(self, base_url, api_key, rng, version=VERSION, client_credentials=None):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.version = version
        self.rng = rng  # seeded: the same run waits the same jittered times
        self.gate = self._gates.setdefault(api_key, Gate())
        self.etags = {}  # URL -> (ETag, body)
        self.gone = set()  # (method, path template) of operations that answered 410
        # (client_id, client_secret): every request carries an access token instead of the key.
        self.client_credentials = client_credentials
        self.tokens = Tokens(self._fetch_token) if client_credentials else None

    # The operations used by the tasks.

    def get(self, path, query=None):
        if query:
            path = f"{path}?{urllib.parse.urlencode(query)}"
        return self.request("GET", path)

    def post(self, path, body):
        # One Idempotency-Key per operation: every retry of it sends the same one.
        return self.request("POST", path, body, idempotency_key=str(uuid.uuid4()))

    def stream(self, path, last_event_id=""):
        """Opens an event stream (`text/event-stream`) through the gate and the retries, as any request; resumes
        after `last_event_id` when there is one. The answer's `body` is the open response, to read as it comes."""
        headers = {"Accept": "text/event-stream"}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        return self.request("GET", path, headers=headers, stream=True)

    def pages(self, path, filters=None):
        """Every item of a listing, page after page: `nextCursor` passed back unchanged, same filters."""
        cursor = None
        while True:
            query = dict(filters or {})
            if cursor:
                query["cursor"] = cursor
            page = self.get(path, query)
            yield from page["data"]
            cursor = page.get("nextCursor")
            if not cursor:
                return

    def _fetch_token(self):
        """`POST /oauth/token`: the client credentials grant, the client authenticated by HTTP Basic."""
        answer = self.request("POST", "/oauth/token", form={"grant_type": "client_credentials"})
        log(f"got an access token for {answer['expires_in']} s")
        return answer["access_token"], answer["expires_in"]

    # Retries, backoff and the key's gate.

    def request(self, method, path, body=None, idempotency_key=None, form=None, headers=None, stream=False):
        """One operation, retried; `form` is a token request's (sent with the client credentials, not a token);
        `stream`: a `200` is returned as an `Answer` whose `body` is still to be read."""
        operation = (method, re.sub(r"/\d+(?=/|$)", "/{id}", path.split("?")[0]))
        if operation in self.gone:
            raise Gone(method, path, 410, {"detail": "answered 410 before: not asked again"})
        renewed = False
        for attempt in range(MAX_ATTEMPTS):
            # The token first: asking for one is a request of its own, through the gate and these retries.
            token = self.tokens.get() if self.tokens and form is None else None
            try:
                answer = self._send(method, path, body, idempotency_key, token, form, headers, stream)
            except ConnectionLost as lost:
                why, retry_after = f"connection lost ({lost})", 0.0
            else:
                if answer.status == 304:
                    return self.etags[self._url(path)][1]
                if answer.body is not None:
                    return answer
                if 200 <= answer.status < 300:
                    return answer.json()
                if answer.status == 410:
                    self.gone.add(operation)
                    raise Gone(method, path, 410, answer.problem())
                if (
                    answer.status == 401
                    and token
                    and not renewed
                    and "invalid_token" in answer.headers.get("WWW-Authenticate", "")
                ):
                    # Expired (in the key's time): renewed once, for every thread, and sent again with the new one.
                    log(f"{method} {path}: the access token was refused; renewing it")
                    self.tokens.refused(token)
                    renewed = True
                    continue
                if answer.status not in RETRYABLE:
                    raise ApiError(method, path, answer.status, answer.problem())
                why, retry_after = f"{answer.status}", retry_after_seconds(answer.headers) or 0.0
            if attempt == MAX_ATTEMPTS - 1:
                break
            # Full jitter: a random wait from 0 to base x 2^n (capped); the gate adds what Retry-After asks.
            jitter = self.rng.uniform(0, min(BACKOFF_CAP, BACKOFF_BASE * 2**attempt))
            log(f"{method} {path}: {why}; retrying in {max(jitter, retry_after):.3f} s")
            time.sleep(jitter)
        raise ApiError(method, path, why, {"detail": f"gave up after {MAX_ATTEMPTS} tries"})

    def _url(self, path):
        return self.base_url + path

    def _send(self, method, path, body, idempotency_key, token=None, form=None, extra=None, stream=False):
        """One try: waits for the key's gate, sends, and learns from the answer's headers; `stream`: a `200`'s
        body is left unread (`Answer.body`)."""
        url = self._url(path)
        headers = {
            "Petstore-Version": self.version,
            "Accept": "application/json",
        }
        headers.update(extra or {})
        headers.update(self._auth(token, form is not None))
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        cached = self.etags.get(url) if method == "GET" and not stream else None
        if cached:
            headers["If-None-Match"] = cached[0]
        self.gate.wait()
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            response = urllib.request.urlopen(request, timeout=TIMEOUT)
            if stream and response.status == 200:
                answer = Answer(response.status, response.headers, b"", body=response)
            else:
                with response:
                    answer = Answer(response.status, response.headers, response.read())
        except urllib.error.HTTPError as error:  # a 3xx, 4xx or 5xx is an answer too
            answer = Answer(error.code, error.headers, error.read())
        except urllib.error.URLError as error:
            if isinstance(error.reason, OSError):
                raise ConnectionLost(error.reason) from error
            raise
        except (ConnectionError, http.client.HTTPException, TimeoutError) as error:
            raise ConnectionLost(error.__class__.__name__) from error
        log(f"{method} {path} -> {answer.status}")
        self._learn(answer)
        if method == "GET" and not stream and answer.status == 200 and answer.headers.get("ETag"):
            self.etags[url] = (answer.headers["ETag"], answer.json())
        return answer

    def _auth(self, token, asks_token):
        """The key; a token; or, asking for a token, the client credentials by HTTP Basic (form-encoded first)."""
        if asks_token:
            pair = ":".join(urllib.parse.quote_plus(part) for part in self.client_credentials)
            return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
        if token:
            return {"Authorization": f"Bearer {token}"}
        return {"X-API-Key": self.api_key}

    def _learn(self, answer):
        """The gate: a 429's or 503's Retry-After, and the pace the rate-limit headers ask for."""
        if answer.status in (429, 503):
            self.gate.hold_for(retry_after_seconds(answer.headers) or 1.0)
        if answer.headers.get("X-RateLimit-Remaining") == "0":
            # RateLimit: "minute";r=0;t=12, "day";r=940;t=50000 -> wait the largest t of a window with r=0
            waits = [int(t) for t in re.findall(r"r=0;t=(\d+)", answer.headers.get("RateLimit", ""))]
            if waits:
                log(f"no requests left: pausing {max(waits)} s")
                self.gate.hold_for(max(waits))


def retry_after_seconds(headers):
    """`Retry-After` in seconds (delta-seconds or an HTTP date), or None."""
    value = headers.get("Retry-After")
    if not value:
        return None
    if value.strip().isdigit():
        return float(value)
    from email.utils import parsedate_to_datetime

    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


# The event stream.


class ServerSentEvents:
    """One connection's `text/event-stream`, parsed as WHATWG HTML says (section 9.2.6): bytes in, events out.

    Lines end with CRLF, LF or CR; a line starting with `:` is a comment (`: keep-alive`); `field: value` (one
    space after the colon dropped) sets `event`, appends to `data`, sets the last event id (`id`, unless it holds
    a NUL) or the reconnection time (`retry`, ASCII digits only); other fields are ignored; a blank line
    dispatches the event (none when no `data` came) and makes the id buffer the last event id, which carries over
    to the next connection like `retry_ms`. An event cut off by the stream's end is never dispatched.
    """

    LINE_END = re.compile(rb"\r\n|\r|\n")

    def __init__(self, last_event_id="", retry_ms=DEFAULT_RETRY_MS):
        self.last_event_id = last_event_id  # what Last-Event-ID says on the next connection
        self.retry_ms = retry_ms
        self._id = last_event_id  # the last event id buffer
        self._type = ""
        self._data = []
        self._pending = b""  # bytes of a line not yet ended
        self._first_line = True  # a byte order mark before it is dropped

    def feed(self, chunk):
        """The events (type, data, id) that `chunk` completes."""
        self._pending += chunk
        events = []
        while True:
            end = self.LINE_END.search(self._pending)
            # A CR last of all may be the first half of a CRLF: the next chunk (or the stream's end) says.
            if end is None or (end.group() == b"\r" and end.end() == len(self._pending)):
                return events
            line, self._pending = self._pending[: end.start()], self._pending[end.end() :]
            event = self._line(line)
            if event:
                events.append(event)

    def end(self):
        """The stream ended: a line ended by a last CR counts; what remains of an event is dropped."""
        events = self.feed(b"\n") if self._pending.endswith(b"\r") else []
        self._pending, self._type, self._data = b"", "", []
        return events

    def _line(self, raw):
        line = raw.decode("utf-8", errors="replace")
        if self._first_line:
            self._first_line = False
            line = line.removeprefix("\ufeff")
        if line == "":
            self.last_event_id = self._id
            if not self._data:
                self._type = ""
                return None
            event = (self._type or "message", "\n".join(self._data), self.last_event_id)
            self._type, self._data = "", []
            return event
        if line.startswith(":"):
            return None
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "event":
            self._type = value
        elif field == "data":
            self._data.append(value)
        elif field == "id" and "\0" not in value:
            self._id = value
        elif field == "retry" and value.isascii() and value.isdigit():
            self.retry_ms = int(value)
        return None


def read_events(body, parser):
    """The events of an open stream's `body`, as they come, until it ends or its connection is lost."""
    while True:
        try:
            chunk = body.read1(64 * 1024)  # what has come, without waiting for more
        except (OSError, http.client.HTTPException) as lost:  # reset, cut, or silent for TIMEOUT
            log(f"the stream's connection was lost ({lost!r})")
            chunk = b""
        if not chunk:
            yield from parser.end()
            return
        yield from parser.feed(chunk)


# The webhook receiver.


class WebhookVerifier:
    """Standard Webhooks: `v1,` HMAC-SHA256 signatures over `{id}.{timestamp}.{body}`."""

    def __init__(self, secret):
        self.key = base64.b64decode(secret[len("whsec_"):] if secret.startswith("whsec_") else secret)

    def verify(self, headers, body):
        """Raises ValueError with the reason when the delivery is not a good one."""
        webhook_id = headers.get("webhook-id")
        timestamp = headers.get("webhook-timestamp")
        signatures = headers.get("webhook-signature")
        if not (webhook_id and timestamp and signatures):
            raise ValueError("missing webhook headers")
        try:
            sent_at = int(timestamp)
        except ValueError:
            raise ValueError("bad webhook-timestamp") from None
        if abs(time.time() - sent_at) > WEBHOOK_TOLERANCE:
            raise ValueError("webhook-timestamp too old or in the future")
        signed = f"{webhook_id}.{timestamp}.".encode() + body
        expected = base64.b64encode(hmac.new(self.key, signed, hashlib.sha256).digest()).decode()
        for signature in signatures.split():
            version, _, value = signature.partition(",")
            if version == "v1" and hmac.compare_digest(value, expected):
                return json.loads(body)
        raise ValueError("no valid signature")


def serve_webhooks(port, secret, host="127.0.0.1"):
    """Receives deliveries until SIGTERM; prints PETSTORE_READY once listening. Returns 0."""
    verifier = WebhookVerifier(secret)
    seen = set()
    seen_lock = threading.Lock()

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                event = verifier.verify(self.headers, body)
            except ValueError as refused:
                log(f"webhook refused: {refused}")
                return self.reply(400)
            with seen_lock:
                duplicate = self.headers["webhook-id"] in seen
                seen.add(self.headers["webhook-id"])
            if duplicate:
                log(f"webhook {self.headers['webhook-id']}: a duplicate, acknowledged")
            else:
                log(f"webhook {self.headers['webhook-id']}: {event.get('type')}")  # handle the event here
            self.reply(204)

        def reply(self, status):
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass  # the lines above say what happened

    server = ThreadingHTTPServer((host, port), Receiver)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("PETSTORE_READY", flush=True)
    while not stop.wait(0.2):
        pass
    server.shutdown()
    server.server_close()
    log("receiver stopped")
    return 0


# The scenarios' tasks: what each scenario's `clientMust` asks for.


def read_pet_1(client):
    pet = client.get("/pets/1")
    log(f"pet 1 is {pet['name']}")


def read_pets(*ids):
    def task(client):
        for pet_id in ids:
            log(f"pet {pet_id} is {client.get(f'/pets/{pet_id}')['name']}")

    return task


def order_pet_1(client):
    """`POST /store/orders` for pet 1 (with an Idempotency-Key, retried): the order's id."""
    order = client.post("/store/orders", {"petId": 1, "quantity": 1})
    log(f"order {order['id']} placed ({order['status']})")
    return order["id"]


def place_order(client):
    order_pet_1(client)
    orders = client.get("/store/orders")["data"]
    if len(orders) != 1:
        raise RuntimeError(f"{len(orders)} orders resulted, not one")


def revalidate(client):
    for _ in range(4):
        read_pet_1(client)


def page_to_end(client):
    pets = list(client.pages("/pets", {"limit": 5}))
    log(f"{len(pets)} pets listed")


def sunset_gone(client):
    try:
        read_pet_1(client)
    except Gone as gone:
        log(f"{gone}: finding pet 1 in GET /pets instead")
        pet = next((pet for pet in client.pages("/pets") if pet["id"] == 1), None)
        if pet is None:
            raise RuntimeError("pet 1 is not listed")
        log(f"pet 1 is {pet['name']}")


def list_pets(client):
    page = client.get("/pets")
    log(f"{len(page['data'])} pets on the first page")


def token_reuse(client):
    """Pets 1 to 8 from eight parallel threads, sharing the client's one token."""
    with concurrent.futures.ThreadPoolExecutor(8) as callers:
        pets = list(callers.map(lambda pet_id: client.get(f"/pets/{pet_id}"), range(1, 9)))
    log(f"pets {', '.join(str(pet['id']) for pet in pets)} read by eight threads with one token")


def token_expiry(client):
    """Pet 1 read, the key's clock moved an hour on (by the test: the client's monotonic clock knows nothing of
    it), pet 1 read again: its expired token is refused, renewed once, and the read sent again."""
    read_pet_1(client)
    moved = client.post("/test-clock/advance", {"seconds": 3600})
    log(f"the test moved the key's clock an hour on (offset {moved['offsetSeconds']} s)")
    read_pet_1(client)


def stream_resume(client):
    """Follows the key's events while placing two orders for pet 1, the second once the first's `order.placed`
    has arrived; when the stream ends (or its connection is lost), waits its `retry` and reconnects with
    `Last-Event-ID`, until both orders' `order.placed` have arrived. An event that arrives twice is a failure."""
    orders = []  # the ids of the orders placed, in turn
    arrived = set()  # the orders whose order.placed has arrived
    last_event_id, retry_ms = "", DEFAULT_RETRY_MS
    for opening in range(MAX_STREAMS):
        if opening:
            log(f"the stream ended: reconnecting in {retry_ms} ms, after {last_event_id or 'no event'}")
            time.sleep(retry_ms / 1000)
        parser = ServerSentEvents(last_event_id, retry_ms)
        answer = client.stream("/events/stream", last_event_id)
        with answer.body as body:
            if not orders:
                orders.append(order_pet_1(client))  # once the stream is open: its order.placed comes on it
            for event_type, data, event_id in read_events(body, parser):
                log(f"event {event_id}: {event_type}")
                if event_type != "order.placed":
                    continue  # order.approved and the rest: not this task's
                order_id = json.loads(data)["data"]["id"]
                if order_id in arrived:
                    raise RuntimeError(f"order {order_id}'s order.placed arrived twice (again as {event_id})")
                arrived.add(order_id)
                if orders == [order_id]:
                    orders.append(order_pet_1(client))  # between two reads: the stream waits meanwhile
                if len(orders) == 2 and arrived >= set(orders):
                    log(f"orders {orders[0]} and {orders[1]}: each order.placed arrived once")
                    return
        last_event_id, retry_ms = parser.last_event_id, parser.retry_ms
    raise RuntimeError(f"{MAX_STREAMS} streams opened, and not every order.placed arrived (orders {orders})")


TASKS = {
    "retry-after-503": read_pet_1,
    "backs-off-500": read_pet_1,
    "reset-order": place_order,
    "unavailable-order": place_order,
    "error-order": place_order,
    "rate-limited-burst": read_pet_1,
    "rate-limited-order": place_order,
    "pace-minute": read_pets(1, 2, 3),
    "pace-day": read_pets(1, 2),
    "revalidate": revalidate,
    "page-to-end": page_to_end,
    "version-pin": read_pets(1, 2),
    "sunset-gone": sunset_gone,
    "flaky-listing": list_pets,
    "token-reuse": token_reuse,
    "token-expiry": token_expiry,
    "stream-resume": stream_resume,
    # webhook-receiver: serve_webhooks, below
}
# The scenarios whose client signs in with the key's client credentials: its requests carry an access token.
WITH_TOKENS = {"token-reuse", "token-expiry"}


def main():
    scenario = os.environ.get("PETSTORE_SCENARIO", "")
    if scenario == "webhook-receiver":
        receiver_url = urllib.parse.urlsplit(os.environ.get("PETSTORE_RECEIVER_URL", ""))
        host = "127.0.0.1" if receiver_url.hostname in (None, "127.0.0.1", "localhost") else ""
        return serve_webhooks(int(os.environ["PETSTORE_RECEIVER_PORT"]), os.environ["PETSTORE_WEBHOOK_SECRET"], host)
    task = TASKS.get(scenario)
    needed = ["PETSTORE_URL", "PETSTORE_API_KEY"]
    if scenario in WITH_TOKENS:
        needed += ["PETSTORE_CLIENT_ID", "PETSTORE_CLIENT_SECRET"]
    if task is None or not all(os.environ.get(name) for name in needed):
        log(f"usage: {', '.join(needed)} and PETSTORE_SCENARIO (one of {', '.join(TASKS)}, webhook-receiver)")
        return 2
    credentials = None
    if scenario in WITH_TOKENS:
        credentials = (os.environ["PETSTORE_CLIENT_ID"], os.environ["PETSTORE_CLIENT_SECRET"])
    client = PetstoreClient(
        os.environ["PETSTORE_URL"],
        os.environ["PETSTORE_API_KEY"],
        random.Random(scenario),
        client_credentials=credentials,
    )
    try:
        task(client)
    except (ApiError, RuntimeError) as failure:
        log(f"{scenario}: failed: {failure}")
        return 1
    log(f"{scenario}: done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
