"""plates gateway in front of the real server, attacked as issue 25 attacked Triton, over real sockets on 127.0.0.1.

The gateway runs as users run it (`python -m plates.cli.main gateway`, keys from the environment), with short
deadlines so that the trickling cases end in seconds; or it is the one given with --gateway-url (the container's,
which scripts/test-image.sh starts with the same deadlines and its key in PLATES_GATEWAY_KEY). After every attack
the gateway must still be ready and still read car.jpg's plate. How fast each refusal came, and the memory of the
gateway and of Triton's processes before and after the attacks, are printed (`pytest -s`), not asserted: this
machine is shared.
"""

from __future__ import annotations

import gzip
import json
import select
import shutil
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest
import requests
from readings import CAR_PLATE, CAR_PLATE_LOWER

from plates.client.gateway import GatewayClient
from plates.client.readiness import normalize_url
from plates.exceptions import PlatesError
from plates.server.process_memory import format_growth, memory, server_processes

from .gateways import KEY, running_gateway, wait_until_ready

AUTH = {"Authorization": f"Token {KEY}"}
PATH = "/v1/plate-reader/"
HEADER_TIMEOUT, BODY_TIMEOUT = 2, 3
# Triton's HTTP front end aborted on this ~100-byte request (issue 25): the shape's product overflows its allocator.
HUGE_SHAPE = {"inputs": [{"name": "input__0", "shape": [8589934592, 1, 3], "datatype": "UINT8", "data": [1]}]}


@pytest.fixture(scope="module")
def gateway(request, triton_url, triton_grpc_url, tmp_path_factory) -> str:
    """A gateway on a free port of 127.0.0.1, ready (its deep check of Triton passed), or the one given: its URL."""
    given = request.config.getoption("--gateway-url")
    if given:
        url = normalize_url(given)
        wait_until_ready(url)
        yield url
        return
    log = Path(tmp_path_factory.mktemp("gateway")) / "gateway.log"
    timeouts = {"HEADER_TIMEOUT": str(HEADER_TIMEOUT), "BODY_TIMEOUT": str(BODY_TIMEOUT)}
    try:
        with running_gateway(triton_url, triton_grpc_url, log, KEYS=KEY, **timeouts) as url:
            port = url.rsplit(":", 1)[1]
            [gateway] = [child for child in psutil.Process().children() if port in child.cmdline()]
            triton = server_processes(triton_url)
            before, triton_before = gateway.memory_info().rss, memory(triton)
            yield url
            after = gateway.memory_info().rss
            print(f"gateway RSS before the attacks {before / 2**20:.0f} MiB, after {after / 2**20:.0f} MiB; Triton's:")
            print(format_growth(triton_before, memory(triton)))
    finally:
        print(log.read_text()[-3000:])


@pytest.fixture
def still_serving(gateway, samples):
    """After the test: the gateway is ready and reads car.jpg right. Ready by its next checks: with a 1 s interval
    each probe has 1 s, and one that a loaded machine answers late is a 503 until the next (as a Kubernetes
    readiness probe's failureThreshold allows)."""
    yield
    wait_until_ready(gateway, timeout=5)
    with GatewayClient(gateway, KEY, timeout=30) as client:
        answer = client.read((samples / "car.jpg").read_bytes(), "car.jpg")
    assert [r["plate"] for r in answer["results"]] == [CAR_PLATE_LOWER]


def timed(what: str, call):
    started = time.perf_counter()
    result = call()
    print(f"{what}: {status_of(result)} in {(time.perf_counter() - started) * 1000:.1f} ms")
    return result


def status_of(result) -> int:
    return result.status_code if isinstance(result, requests.Response) else result[0]


def error_code(response: requests.Response) -> str:
    return response.json()["error"]["code"]


def raw_exchange(url: str, head: bytes, body_parts, pause: float = 0.0) -> tuple[int, dict, int]:
    """Send `head`, then each of `body_parts` (pausing `pause` s between), until the gateway answers: its status,
    its JSON, and how many body bytes had been sent when the answer came."""
    host, port = url.removeprefix("http://").split(":")
    sent = 0
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(head)
        for part in body_parts:
            if select.select([connection], [], [], pause)[0]:
                break  # answered
            try:
                connection.sendall(part)
            except OSError:  # closed once it answered
                break
            sent += len(part)
        response = b""
        while chunk := connection.recv(65536):
            response += chunk
    status_line, _, rest = response.partition(b"\r\n")
    body = rest.partition(b"\r\n\r\n")[2]
    return int(status_line.split()[1]), json.loads(body), sent


def form_head(url_path: str, length: int | None) -> bytes:
    """A form's request line and headers; the connection closes after the answer, which ends raw_exchange."""
    size = b"Transfer-Encoding: chunked\r\n" if length is None else b"Content-Length: %d\r\n" % length
    return (
        (
            f"POST {url_path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token {KEY}\r\nConnection: close\r\n"
            "Content-Type: multipart/form-data; boundary=b\r\n"
        ).encode()
        + size
        + b"\r\n"
    )


PART = b'--b\r\nContent-Disposition: form-data; name="upload"; filename="a.jpg"\r\n\r\n'


def chunked(data: bytes, size: int, write: int = 2**16):
    """`data` in the chunked transfer coding, in chunks of `size` bytes, handed out in writes of about `write` bytes
    (a write per 6-byte chunk would make the client, not the gateway, the slow side)."""
    pieces = (data[start : start + size] for start in range(0, len(data), size))
    framed = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\n\r\n"
    return (framed[start : start + write] for start in range(0, len(framed), write))


def test_a_real_client_reads_car_jpg(gateway, samples, still_serving):
    with (samples / "car.jpg").open("rb") as photo:
        response = requests.post(
            gateway + PATH, files={"upload": photo}, data={"camera_id": "gate-1"}, headers=AUTH, timeout=30
        )
    assert response.status_code == 201
    body = response.json()
    assert body["camera_id"] == "gate-1" and body["filename"] == "car.jpg"
    [result] = body["results"]
    assert result["plate"] == CAR_PLATE_LOWER and result["text"] == CAR_PLATE
    assert result["subject"] == {"code": "197", "name": "Moscow"}


def test_curl_reads_car_jpg(gateway, samples):
    # curl is one of the README's prerequisites: the manual's own way to call the gateway.
    assert shutil.which("curl"), "curl is not installed (README, Prerequisites)"
    output = subprocess.run(
        ["curl", "-sS", "-F", f"upload=@{samples / 'car.jpg'}", "-H", f"Authorization: Token {KEY}", gateway + PATH],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert json.loads(output)["results"][0]["plate"] == CAR_PLATE_LOWER


def test_4_clients_at_once_are_all_served_none_refused(gateway, samples):
    # Triton direct refuses a third of 4 clients' photos (its queue holds 3); the gateway holds what Triton cannot
    # take yet, so none of them is refused.
    photo = (samples / "car.jpg").read_bytes()

    def client(_: int) -> list[tuple[int, str | None]]:
        with GatewayClient(gateway, KEY, timeout=30) as reader:
            answers = []
            for _ in range(6):
                try:
                    answers.append((201, reader.read(photo)["results"][0]["plate"]))
                except PlatesError as error:
                    answers.append((0, str(error)))
            return answers

    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = [answer for answers in pool.map(client, range(4)) for answer in answers]
    assert answers == [(201, CAR_PLATE_LOWER)] * 24


def test_tritons_api_is_not_reachable_through_the_gateway(gateway, still_serving):
    for path in ("/v2/models/plate_recognition/infer", "/v2/models/yolo/infer", "/v2/repository/index"):
        response = timed(
            f"huge-shape JSON to {path}",
            lambda: requests.post(gateway + path, json=HUGE_SHAPE, headers=AUTH, timeout=10),
        )
        assert response.status_code == 404 and error_code(response) == "not_found"
    response = requests.post(gateway + PATH, json=HUGE_SHAPE, headers=AUTH, timeout=10)
    assert response.status_code == 415 and error_code(response) == "not_a_form"


def test_a_gzip_body_is_refused(gateway, still_serving):
    bomb = gzip.compress(PART + bytes(50 * 2**20), compresslevel=1)  # 50 MiB in a few hundred KB
    headers = {**AUTH, "Content-Encoding": "gzip", "Content-Type": "multipart/form-data; boundary=b"}
    response = timed("gzip body", lambda: requests.post(gateway + PATH, data=bomb, headers=headers, timeout=10))
    assert response.status_code == 415 and error_code(response) == "content_encoding"


def test_3_mb_in_6_byte_chunks_gets_a_clear_answer(gateway, still_serving):
    form = PART + b"\xff\xd8\xff" + bytes(3 * 10**6) + b"\r\n--b--\r\n"  # a JPEG's start, never its end
    head = form_head(PATH, None)
    status, body, _ = timed("3 MB in 6-byte chunks", lambda: raw_exchange(gateway, head, chunked(form, 6)))
    assert (status, body["error"]["code"]) == (400, "invalid_request")
    assert "upload" in body["error"]["message"]


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_a_200_mb_body_is_refused_before_it_is_sent(gateway, still_serving, declared):
    total, block = 200 * 2**20, bytes(2**20)
    blocks = [PART, *(block for _ in range(total // len(block)))]  # a form whose file never ends
    if declared:
        parts, head = iter(blocks), form_head(PATH, total)
    else:
        parts, head = (b"%x\r\n%s\r\n" % (len(b), b) for b in blocks), form_head(PATH, None)
    status, body, sent = timed(
        f"200 MB body ({'declared' if declared else 'chunked'})", lambda: raw_exchange(gateway, head, parts)
    )
    print(f"  answered after {sent / 2**20:.0f} MiB of 200 sent")
    assert (status, body["error"]["code"]) == (413, "body_too_large")
    assert sent < total


def test_a_body_trickled_at_10_bytes_a_second_times_out(gateway, still_serving, samples):
    form = PART + (samples / "car.jpg").read_bytes() + b"\r\n--b--\r\n"
    pieces = (form[start : start + 10] for start in range(0, len(form), 10))
    status, body, sent = timed("body at 10 B/s", lambda: raw_exchange(gateway, form_head(PATH, len(form)), pieces, 1.0))
    assert (status, body["error"]["code"]) == (408, "body_timeout")
    assert sent <= 10 * (BODY_TIMEOUT + 2)


def test_headers_trickled_at_10_bytes_a_second_time_out(gateway, still_serving):
    head = form_head(PATH, 100)
    status, body, _ = timed(
        "headers at 10 B/s",
        lambda: raw_exchange(gateway, head[:10], (head[start : start + 10] for start in range(10, len(head), 10)), 1.0),
    )
    assert (status, body["error"]["code"]) == (408, "header_timeout")


def test_200_connections_at_once_are_served_or_refused_and_the_gateway_stays_up(gateway, still_serving, samples):
    form = PART + (samples / "car.jpg").read_bytes() + b"\r\n--b--\r\n"
    request = form_head(PATH, len(form)) + form
    host, port = gateway.removeprefix("http://").split(":")
    connections = [socket.create_connection((host, int(port)), timeout=60) for _ in range(200)]

    def exchange(connection: socket.socket) -> int:
        with connection:
            connection.sendall(request)
            answer = b""
            while chunk := connection.recv(65536):
                answer += chunk
        status = int(answer.split(b" ", 2)[1])
        assert status == 201 or (status == 429 and b"retry-after: 1" in answer.lower()), answer[:300]
        return status

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=200) as pool:
        statuses = list(pool.map(exchange, connections))
    print(
        f"200 connections at once: {statuses.count(201)} read, {statuses.count(429)} refused with 429, in "
        f"{time.perf_counter() - started:.1f} s"
    )
    assert statuses.count(201) >= 1


@pytest.mark.parametrize("token", [None, "wrong-key"], ids=["missing", "wrong"])
def test_a_missing_or_wrong_token_is_401(gateway, still_serving, samples, token):
    headers = {} if token is None else {"Authorization": f"Token {token}"}
    photo = (samples / "car.jpg").read_bytes()
    response = timed(
        f"{'no' if token is None else 'wrong'} token",
        lambda: requests.post(gateway + PATH, files={"upload": photo}, headers=headers, timeout=10),
    )
    assert response.status_code == 401 and response.headers["WWW-Authenticate"] == "Token"
    assert error_code(response) == "unauthorized"


def test_upload_url_is_refused(gateway, still_serving):
    response = requests.post(
        gateway + PATH,
        files={"upload_url": (None, "http://169.254.169.254/latest/meta-data/")},
        headers=AUTH,
        timeout=10,
    )
    assert response.status_code == 400 and error_code(response) == "upload_url_refused"
