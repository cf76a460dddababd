"""The connection's deadlines and header limit (plates.gateway.server), over raw sockets: what uvicorn alone lacks."""

from __future__ import annotations

import json
import logging
import socket
import time

from plates.gateway.settings import Settings

from .conftest import KEY, photo

FAST = Settings(keys=(KEY,), header_timeout=0.3, body_timeout=0.5, max_header_bytes=2048)


def connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=5)


def answer(connection: socket.socket) -> tuple[int, dict, bytes]:
    """Status, headers and body of the one response the gateway sends before it closes."""
    data = b""
    while chunk := connection.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


def test_headers_that_trickle_get_408_at_the_deadline(gateway):
    with gateway(FAST) as url, connect(url) as connection:
        started = time.monotonic()
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        try:
            for _ in range(20):
                connection.sendall(b"X-Slow: a\r\n")  # every byte would restart uvicorn's keep-alive timer
                time.sleep(0.05)
        except OSError:  # closed by the gateway
            pass
        status, headers, body = answer(connection)
        waited = time.monotonic() - started
    assert status == 408 and json.loads(body)["error"]["code"] == "header_timeout"
    assert headers["connection"] == "close" and waited < 2


def test_a_body_that_trickles_gets_408_and_is_logged_with_its_request(gateway, caplog):
    caplog.set_level(logging.INFO, "plates.gateway.access")
    part = b'--b\r\nContent-Disposition: form-data; name="upload"; filename="a.jpg"\r\n\r\n'
    form = part + photo() + b"\r\n--b--\r\n"
    head = (
        f"POST /v1/plate-reader/ HTTP/1.1\r\nHost: x\r\nAuthorization: Token {KEY}\r\n"
        f"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: {len(form)}\r\n\r\n"
    ).encode()
    with gateway(FAST) as url, connect(url) as connection:
        connection.sendall(head + form[:20])
        time.sleep(0.2)
        connection.sendall(form[20:40])
        status, headers, body = answer(connection)
    assert status == 408 and json.loads(body)["error"]["code"] == "body_timeout"
    assert json.loads(body)["error"]["request_id"] == headers["x-request-id"]
    assert "408" in caplog.text and "refused=body_timeout" in caplog.text


def test_a_connection_that_sends_nothing_is_closed(gateway):
    with gateway(FAST) as url, connect(url) as connection:
        started = time.monotonic()
        assert connection.recv(100) == b""
        assert time.monotonic() - started < 2


def test_headers_over_the_limit_get_431(gateway):
    with gateway(FAST) as url, connect(url) as connection:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-Big: " + b"a" * 3000 + b"\r\n")
        status, _, body = answer(connection)
    assert status == 431 and json.loads(body)["error"]["code"] == "headers_too_large"


def test_what_is_not_http_gets_a_json_400(gateway):
    with gateway(FAST) as url, connect(url) as connection:
        connection.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 12x\r\n\r\n")
        status, _, body = answer(connection)
    assert status == 400 and json.loads(body)["error"]["code"] == "invalid_http"


def kept_alive_answer(connection: socket.socket) -> tuple[bytes, bytes]:
    """The status line and body of one response on a connection that stays open: its head may come in one segment
    and its body in the next, on a loaded machine."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += connection.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    )
    while len(body) < length:
        body += connection.recv(65536)
    return head.split(b"\r\n")[0], body


def test_keep_alive_requests_are_each_given_their_own_deadline(gateway):
    with gateway(FAST) as url, connect(url) as connection:
        for _ in range(3):  # 3 x 0.2 s on one connection: longer than one header deadline, but each request is quick
            connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            status_line, body = kept_alive_answer(connection)
            assert status_line.startswith(b"HTTP/1.1 200") and json.loads(body) == {"alive": True}
            time.sleep(0.2)


def test_a_refused_connection_lingers_so_a_client_still_sending_reads_its_answer(gateway):
    # Closed outright, a socket with unread data sends a reset, which can destroy the answer before the client
    # reads it (a race, so this looks at the mechanism): the gateway shuts its side after the answer, then drops
    # what the client still sends for a moment, and the client's sends keep succeeding meanwhile.
    head = (
        f"POST /v1/plate-reader/ HTTP/1.1\r\nHost: x\r\nAuthorization: Token {KEY}\r\n"
        f"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: {50 * 2**20}\r\n\r\n"
    ).encode()
    with gateway(FAST) as url, connect(url) as connection:
        connection.sendall(head + bytes(2**20))
        status, _, body = answer(connection)  # up to the gateway's end of the connection
        for _ in range(5):
            connection.sendall(bytes(2**20))  # would fail once a reset came back
            time.sleep(0.05)
    assert status == 413 and json.loads(body)["error"]["code"] == "body_too_large"
