"""The gate every request passes: its id, its key and limits before its body is read, its log line and metrics.

A plain ASGI middleware rather than Starlette's BaseHTTPMiddleware: it must refuse before the route reads a byte of
the body, count the body's bytes as they arrive, and answer whatever the route raised, without buffering.
"""

from __future__ import annotations

import logging
import re
import time
import uuid

from starlette.requests import ClientDisconnect

from plates.gateway.auth import KeyRing
from plates.gateway.errors import Refusal
from plates.gateway.limits import BodyCounter, InFlight, check_headers
from plates.gateway.metrics import Metrics

access_log = logging.getLogger("plates.gateway.access")
log = logging.getLogger("plates.gateway")

# Served to anyone: the pages for people (their scripts send the key a person types), probes, Prometheus, the API's
# description, and the status routes that CodeProject.AI's clients poll carry no photos and no secrets.
OPEN_PATHS = frozenset({"/", "/history", "/healthz", "/readyz", "/metrics", "/openapi.json"})
OPEN_PREFIXES = ("/docs", "/v1/status/", "/v1/server/status/")
# Where another layer answered (an HTTP error of the routes, the connection's deadline), it leaves the answer's
# (status, code) in the scope under this key, for the log line and the metrics.
ANSWERED = "plates.answered"
SANE_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
CLIENT_CLOSED = 499  # nginx's status for a request whose client left before the answer: none was sent


class Gate:
    def __init__(
        self, app, *, keys: KeyRing, in_flight: InFlight, metrics: Metrics, max_body_bytes: int, routes: set[str]
    ) -> None:
        self.app = app
        self.keys = keys
        self.in_flight = in_flight
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes
        self.routes = routes

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = dict(scope["headers"])
        given = headers.get(b"x-request-id", b"").decode("latin-1")
        request_id = given if SANE_ID.fullmatch(given) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        status = None

        async def send_with_id(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message = {**message, "headers": [*message.get("headers", []), (b"x-request-id", request_id.encode())]}
            await send(message)

        key = code = body = None
        admitted = False
        try:
            if scope["path"] not in OPEN_PATHS and not scope["path"].startswith(OPEN_PREFIXES):
                key = self.keys.identify(headers.get(b"authorization"), (scope.get("client") or (None,))[0])
                scope["state"]["key"] = key
                check_headers(scope["headers"], self.max_body_bytes)
                await self.in_flight.admit(key)
                admitted = True
                receive = body = BodyCounter(receive, self.max_body_bytes)
            await self.app(scope, receive, send_with_id)
        except Refusal as refusal:
            code = refusal.code
            if status is None:
                # A body left unread (refused before or while it arrived) would be read as the next request.
                close = has_body(headers) and not (body is not None and body.complete)
                await answer(send_with_id, refusal, request_id, scope["path"], close)
        except ClientDisconnect:
            status = status or CLIENT_CLOSED
        except Exception:
            log.exception("request %s failed", request_id)
            code = "internal"
            if status is None:
                await answer(
                    send_with_id,
                    Refusal(500, code, f"internal error (request {request_id})"),
                    request_id,
                    scope["path"],
                )
        finally:
            if admitted:
                self.in_flight.release(key)
            status, code = scope.get(ANSWERED, (status, code))
            self.record(scope, status or 500, code, key, request_id, time.perf_counter() - started)

    def record(self, scope, status: int, code: str | None, key: str | None, request_id: str, seconds: float) -> None:
        route = scope["path"] if scope["path"] in self.routes else "other"
        self.metrics.answered(route, status, seconds, code)
        client = scope.get("client") or ("-", 0)
        access_log.info(
            '%s:%d "%s %s" %d %.1f ms key=%s id=%s%s',
            client[0],
            client[1],
            scope["method"],
            scope["path"][:200],
            status,
            seconds * 1000,
            key or "-",
            request_id,
            f" refused={code}" if code else "",
        )


def has_body(headers: dict[bytes, bytes]) -> bool:
    return headers.get(b"content-length", b"0").strip() not in (b"0", b"") or b"transfer-encoding" in headers


async def answer(send, refusal: Refusal, request_id: str, path: str, close: bool = False) -> None:
    body = refusal.body(request_id, path)
    headers = [*refusal.headers(), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
