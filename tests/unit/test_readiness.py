"""Why a URL is not a ready Triton server, said in one line: nothing there, an HTTP server that is not Triton, or a
port that does not speak HTTP/1.1 (Triton's gRPC port)."""

from __future__ import annotations

import http.server
import socket
import threading

import pytest

from plates.cli.client import main as client_main
from plates.client.readiness import not_ready, require_ready
from plates.exceptions import ServerUnavailableError
from plates.server.launcher import free_port

# What a gRPC server sends first on any connection: an HTTP/2 SETTINGS frame.
HTTP2_SETTINGS = b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x64"


@pytest.fixture
def http2_port():
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)

    def answer():
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        with connection:
            connection.recv(65536)
            connection.sendall(HTTP2_SETTINGS)

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    listener.close()
    thread.join(timeout=10)


@pytest.fixture
def other_http_port(http_server):
    return int(http_server(http.server.BaseHTTPRequestHandler).rsplit(":", 1)[1])


def test_a_port_that_answers_http2_is_named_as_not_triton_http(http2_port):
    assert "not over HTTP/1.1: not Triton's HTTP endpoint (its gRPC port?)" in not_ready(f"127.0.0.1:{http2_port}")


def test_an_http_server_that_is_not_triton_is_named_by_its_answer(other_http_port):
    assert not_ready(f"127.0.0.1:{other_http_port}") == (
        "/v2/health/ready answers HTTP 501: not ready, or not Triton's HTTP endpoint"
    )


def test_a_closed_port_is_no_server():
    port = free_port()
    with pytest.raises(ServerUnavailableError, match=rf"no ready Triton server at http://127.0.0.1:{port}: no server"):
        require_ready(f"127.0.0.1:{port}")


def test_client_pointed_at_a_grpc_port_says_so_in_one_line_and_exits_69(http2_port, samples, capsys):
    assert client_main([str(samples / "car.jpg"), "--url", f"127.0.0.1:{http2_port}"]) == 69
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not Triton's HTTP endpoint (its gRPC port?)" in err
