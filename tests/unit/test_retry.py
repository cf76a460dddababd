import re

import numpy as np
import pytest
from tritonclient.utils import InferenceServerException

from plates.client.retry import NO_RETRY, RetryPolicy, call_with_retries
from plates.client.service import PlatesClient
from plates.exceptions import InvalidInputError, OverloadedError, PlatesError, ReloadingError, ServerUnavailableError


class FakeClock:
    """time.monotonic and time.sleep over a clock that moves only when slept on or told to."""

    def __init__(self) -> None:
        self.now = 0.0
        self.pauses: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


def refused_then(answers: list):
    """A call that raises each OverloadedError in `answers` in turn and returns the first other value."""
    calls = []

    def call():
        calls.append(1)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return call, calls


def test_pauses_grow_exponentially_up_to_the_cap_with_full_jitter():
    policy = RetryPolicy(tries=8, first_pause_s=0.1, max_pause_s=1.0)
    assert [policy.pause(r, lambda: 0.5) for r in range(6)] == pytest.approx([0.05, 0.1, 0.2, 0.4, 0.5, 0.5])
    assert policy.pause(3, lambda: 0.0) == 0.0


def test_a_refused_call_is_retried_after_jittered_pauses_until_it_succeeds():
    clock = FakeClock()
    call, calls = refused_then([OverloadedError("busy"), OverloadedError("busy"), "plates"])
    policy = RetryPolicy(tries=4, first_pause_s=0.1, max_pause_s=2.0)
    assert call_with_retries(call, policy, 10.0, clock, clock.sleep, draw=lambda: 0.5) == "plates"
    assert len(calls) == 3 and clock.pauses == pytest.approx([0.05, 0.1])


def test_retries_stop_after_the_last_try_with_one_line_saying_how_often():
    clock = FakeClock()
    call, calls = refused_then([OverloadedError("server at X is overloaded")] * 5)
    with pytest.raises(OverloadedError, match=r"^server at X is overloaded; refused 3 times in 0\.3 s, try later$"):
        call_with_retries(call, RetryPolicy(tries=3, first_pause_s=0.1), 10.0, clock, clock.sleep, draw=lambda: 1.0)
    assert len(calls) == 3 and clock.pauses == pytest.approx([0.1, 0.2])


def test_retries_stop_before_a_pause_would_pass_the_timeout():
    clock = FakeClock()
    call, calls = refused_then([OverloadedError("busy")] * 10)
    with pytest.raises(OverloadedError, match="refused 3 times"):
        call_with_retries(call, RetryPolicy(tries=10, first_pause_s=1.0), 3.5, clock, clock.sleep, draw=lambda: 1.0)
    assert clock.pauses == [1.0, 2.0] and clock.now < 3.5  # the next pause, 4 s, would end past 3.5 s


def test_no_retry_tries_once_and_other_errors_are_never_retried():
    clock = FakeClock()
    call, calls = refused_then([OverloadedError("busy"), "plates"])
    with pytest.raises(OverloadedError, match="refused 1 time in"):
        call_with_retries(call, NO_RETRY, 10.0, clock, clock.sleep)
    call, calls = refused_then([PlatesError("broken"), "plates"])
    with pytest.raises(PlatesError, match="^broken$"):
        call_with_retries(call, RetryPolicy(), 10.0, clock, clock.sleep)
    assert len(calls) == 1 and clock.pauses == []


def test_a_policy_without_a_try_is_refused():
    with pytest.raises(InvalidInputError, match="tries >= 1"):
        RetryPolicy(tries=0)


class Refusing:
    """A tritonclient HTTP client whose server answers 503 `refusals` times, then car.jpg's one plate."""

    def __init__(self, refusals: int, status: str = "503", message: str = "Exceeds maximum queue size") -> None:
        self.refusals, self.status, self.message, self.calls = refusals, status, message, 0

    def infer(self, model, inputs, outputs):
        self.calls += 1
        self.model, self.outputs = model, [output.name() for output in outputs]
        if self.calls <= self.refusals:
            raise InferenceServerException(self.message, status=self.status)
        return self

    def as_numpy(self, name):
        return {
            "coordinates": np.array([[1, 2, 3, 4]], np.float32),
            "texts": np.array([b"B840CK197"], dtype=np.object_),
            "scores": np.array([0.6], np.float32),
            "text_scores": np.array([0.4], np.float32),
            "candidates": np.array([[b"B840CK197"]], dtype=np.object_),
            "candidate_scores": np.array([[0.4]], np.float32),
        }[name]

    def close(self):
        pass


def client_over(server: Refusing, retry: RetryPolicy) -> PlatesClient:
    client = PlatesClient("localhost:9", timeout=5.0, retry=retry)
    client._client = server
    return client


def test_plates_client_retries_a_503_and_reads_the_answer():
    server = Refusing(refusals=2)
    with client_over(server, RetryPolicy(tries=3, first_pause_s=0.001)) as client:
        [plate] = client.recognize(np.zeros((8, 8, 3), np.uint8))
    assert plate.text == "B840CK197" and server.calls == 3


def test_a_model_called_directly_is_retried_the_same_way():
    # plates bench calls yolo alone; the health checks of plates serve can fill its one-request queue for a moment.
    server = Refusing(refusals=2)
    with client_over(server, RetryPolicy(tries=3, first_pause_s=0.001)) as client:
        client.infer("yolo", client.inputs(np.zeros((8, 8, 3), np.uint8)), ["output__1"])
    assert server.calls == 3 and server.model == "yolo" and server.outputs == ["output__1"]


def test_plates_client_gives_up_with_an_overloaded_error_naming_the_server():
    server = Refusing(refusals=5)
    with client_over(server, RetryPolicy(tries=2, first_pause_s=0.001)) as client:
        with pytest.raises(OverloadedError, match=r"server at http://localhost:9 is overloaded: .*refused 2 times"):
            client.recognize(np.zeros((8, 8, 3), np.uint8))
    assert server.calls == 2


def test_plates_client_does_not_retry_a_server_fault():
    server = Refusing(refusals=1, status="500")
    with client_over(server, RetryPolicy(tries=3, first_pause_s=0.001)) as client:
        with pytest.raises(PlatesError, match="failed: Exceeds") as raised:
            client.recognize(np.zeros((8, 8, 3), np.uint8))
    assert not isinstance(raised.value, OverloadedError) and server.calls == 1


def test_plates_client_does_not_retry_a_model_that_reloads_nor_call_it_overloaded():
    said = "plate_recognition: the service is reloading model 'stn' (Exceeds maximum queue size)"
    server = Refusing(refusals=1, message=said)
    with client_over(server, RetryPolicy(tries=3, first_pause_s=0.001)) as client:
        with pytest.raises(ReloadingError, match=re.escape(f"server at http://localhost:9: {said}")):
            client.recognize(np.zeros((8, 8, 3), np.uint8))
    assert server.calls == 1


def test_plates_client_calls_a_model_that_is_not_loaded_unavailable_not_a_bad_image():
    # Triton's own answer (HTTP 400) while plate_recognition itself reloads.
    said = "Request for unknown model: 'plate_recognition' has no available versions"
    server = Refusing(refusals=1, status="400", message=said)
    with client_over(server, RetryPolicy(tries=3, first_pause_s=0.001)) as client:
        with pytest.raises(ServerUnavailableError, match=re.escape(f"cannot serve plate_recognition now: {said}")):
            client.recognize(np.zeros((8, 8, 3), np.uint8))
    assert server.calls == 1


def test_a_connection_the_server_closed_is_no_server_answering():
    from geventhttpclient.response import HTTPConnectionClosed

    class Closed(Refusing):
        def infer(self, model, inputs, outputs):
            raise HTTPConnectionClosed("connection closed.")

    with client_over(Closed(refusals=0), RetryPolicy()) as client:
        with pytest.raises(ServerUnavailableError, match=r"^no Triton server answers at http://localhost:9: conn"):
            client.recognize(np.zeros((8, 8, 3), np.uint8))
