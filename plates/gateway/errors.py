"""The gateway's answers that are not plates: every one JSON, with a code naming the cause and a message, in the
shape the clients of the route asked read.

Plate Recognizer's (every path but CodeProject.AI's): `{"error": {"code": "body_too_large", "message": "...",
"request_id": "..."}, "detail": "...", "status_code": 413}`: `detail` and `status_code` are where their own errors
carry the message and the status, so that their clients show them. CodeProject.AI's (`/v1/vision/`, `/v1/image/`):
`{"success": false, "error": "...", "code": 413, ...}`, as their server answers a request it cannot serve.
"""

from __future__ import annotations

import json
from http import HTTPStatus

RETRY_BUSY_S = 1  # after a 429: the requests in flight are short
RETRY_DOWN_S = 5  # after a 503: the health check's period, when a restarted Triton is seen again
RETRY_RELOADING_S = 2  # after a 503 while a model reloads: 3 to 6 s on the 2-core machine (docs/health.md)
# CodeProject.AI's routes: their clients read `success` and `error`, never `detail`.
CODEPROJECT_PREFIXES = ("/v1/vision/", "/v1/image/")


class Refusal(Exception):
    """A request answered with an error: HTTP `status`, a `code` naming the cause, a `message` for people."""

    def __init__(self, status: int, code: str, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after

    def headers(self) -> list[tuple[bytes, bytes]]:
        headers = [(b"content-type", b"application/json")]
        if self.status == 401:
            headers.append((b"www-authenticate", b"Token"))
        if self.retry_after is not None:
            headers.append((b"retry-after", str(self.retry_after).encode()))
        return headers

    def body(self, request_id: str | None = None, path: str = "") -> bytes:
        """The answer's JSON for a request to `path`: CodeProject.AI's shape on their routes, Plate Recognizer's
        elsewhere."""
        if path.startswith(CODEPROJECT_PREFIXES):
            answer = {
                "success": False,
                "error": self.message,
                "code": self.status,
                "error_code": self.code,
                "request_id": request_id,
            }
        else:
            error = {"code": self.code, "message": self.message, "request_id": request_id}
            answer = {"error": error, "detail": self.message, "status_code": self.status}
        return json.dumps(answer).encode()


def raw_response(refusal: Refusal, request_id: str | None = None, path: str = "") -> bytes:
    """The whole HTTP/1.1 response, for the connection's protocol to write where no application answers; it closes."""
    body = refusal.body(request_id, path)
    head = [f"HTTP/1.1 {refusal.status} {HTTPStatus(refusal.status).phrase}".encode()]
    head += [name + b": " + value for name, value in refusal.headers()]
    if request_id is not None:
        head.append(b"x-request-id: " + request_id.encode())
    head += [b"content-length: " + str(len(body)).encode(), b"connection: close"]
    return b"\r\n".join(head) + b"\r\n\r\n" + body
