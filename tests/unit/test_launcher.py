"""The launcher's ports and its word on a server that exits before it is ready, without starting one."""

from __future__ import annotations

import socket

import pytest

from plates.exceptions import ServerUnavailableError
from plates.server.launcher import LocalServer, ephemeral_floor, exit_reason, free_port, taken_ports

CUDA_NOISE = 'E1126 10:16:36.298700 21924 server.cc:241] "CudaDriverHelper has not been initialized."'


@pytest.fixture
def listening():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_free_ports_lie_below_the_ephemeral_range_and_are_never_handed_out_twice():
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == 50
    assert all(1024 <= port < ephemeral_floor() for port in ports)
    for port in ports:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))


def test_the_ephemeral_floor_is_the_kernels_or_linuxs_default(tmp_path):
    (tmp_path / "range").write_text("40000\t60999\n")
    assert ephemeral_floor(tmp_path / "range") == 40000
    assert ephemeral_floor(tmp_path / "missing") == 32768


def test_a_port_something_listens_on_is_named_and_a_free_one_is_not(listening):
    free = free_port()
    assert taken_ports("127.0.0.1", {"http": listening, "grpc": free}) == [f"http {listening}"]


def test_a_server_asked_for_a_taken_port_is_refused_before_it_starts(listening):
    server = LocalServer(http_port=free_port(), grpc_port=listening, metrics_port=free_port())
    with pytest.raises(ServerUnavailableError) as raised:
        server.start()
    assert str(raised.value) == f"cannot serve on 127.0.0.1: port already in use (grpc {listening})"
    assert server.triton is None


@pytest.mark.parametrize(
    "log, reason",
    [
        (
            f'{CUDA_NOISE}\nI1126 10:16:36.298876 21924 http_server.cc:4713] "Started HTTPService at 127.0.0.1:49387"\n'
            'E1126 10:16:36.340331 21924 main.cc:257] "failed to start HTTP service: Unavailable - Socket '
            "'127.0.0.1:49387' already in use \"\n",
            "failed to start HTTP service: Unavailable - Socket '127.0.0.1:49387' already in use",
        ),
        (
            f"{CUDA_NOISE}\nError: Failed to initialize NVML\n"
            "error: creating server: Internal - failed to stat file /x\n",
            "creating server: Internal - failed to stat file /x",
        ),
        (f'{CUDA_NOISE}\nI1126 10:16:36.298876 21924 model_lifecycle.cc:472] "loading: yolo:1"\n', ""),
    ],
    ids=["port taken", "no repository", "no fatal line"],
)
def test_the_reason_triton_exited_is_its_last_fatal_line_not_its_cuda_noise(tmp_path, log, reason):
    (tmp_path / "tritonserver.log").write_text(log)
    assert exit_reason(tmp_path / "tritonserver.log") == reason


def test_no_log_no_reason(tmp_path):
    assert exit_reason(None) == "" and exit_reason(tmp_path / "never-written.log") == ""
