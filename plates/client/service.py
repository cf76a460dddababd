"""Talking to the service over HTTP as a user does: a photo in, its plates out."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from plates.client.readiness import normalize_url
from plates.client.retry import RetryPolicy, call_with_retries
from plates.exceptions import (
    RELOADING,
    InvalidInputError,
    OverloadedError,
    PlatesError,
    ReloadingError,
    ServerUnavailableError,
    not_serving,
)
from plates.photos.pixels import check_image
from plates.recognition.regions import Region, region_of

MODEL = "plate_recognition"
OUTPUTS = ("coordinates", "texts", "scores", "text_scores", "candidates", "candidate_scores")


@dataclass(frozen=True)
class Plate:
    text: str | None  # None where a plate was found but not read as a valid Russian plate
    box: list[float]  # x1, y1, x2, y2 in the photo's pixels
    score: float  # detector confidence
    text_score: float = 0.0  # probability of the text under the recognizer
    # (text, probability) of the likeliest texts, best first, also where `text` is None because its score fell
    # below the server's min_text_score
    candidates: list[tuple[str, float]] = field(default_factory=list)

    @property
    def region(self) -> Region | None:
        """The federal subject of the plate's region code; None where unread or the code is in no region's list."""
        return region_of(self.text)

    def to_dict(self, candidates: int = 0) -> dict:
        """The fields as JSON takes them, with the region; the first `candidates` candidates only if asked for."""
        fields = asdict(self)
        del fields["candidates"]
        fields["region"] = self.region.to_dict() if self.region else None
        if candidates:
            fields["candidates"] = [{"text": t, "score": s} for t, s in self.candidates[:candidates]]
        return fields


def plates_from_outputs(
    coordinates: np.ndarray,
    texts: np.ndarray,
    scores: np.ndarray,
    text_scores: np.ndarray,
    candidates: np.ndarray | None = None,
    candidate_scores: np.ndarray | None = None,
) -> list[Plate]:
    """The server's outputs as Plate objects, checked for agreeing lengths; candidates' padding dropped."""
    coordinates = np.asarray(coordinates, dtype=np.float32).reshape(-1, 4)
    if not len(coordinates) == len(texts) == len(scores) == len(text_scores):
        raise PlatesError(
            f"server answered {len(coordinates)} boxes, {len(texts)} texts, {len(scores)} scores and "
            f"{len(text_scores)} text scores: they must agree"
        )
    decoded = [_text(t) for t in texts]
    alternatives = _candidates(candidates, candidate_scores, len(coordinates))
    return [
        Plate(
            text or None,
            [round(float(v), 1) for v in box],
            round(float(score), 4),
            round(float(text_score), 4),
            alternative,
        )
        for box, text, score, text_score, alternative in zip(coordinates, decoded, scores, text_scores, alternatives)
    ]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _candidates(texts: np.ndarray | None, scores: np.ndarray | None, plates: int) -> list[list[tuple[str, float]]]:
    if texts is None or scores is None:
        return [[] for _ in range(plates)]
    if not np.ndim(texts) == np.ndim(scores) == 2 or np.shape(texts) != np.shape(scores) or len(texts) != plates:
        raise PlatesError(
            f"server answered {plates} boxes, candidates {list(np.shape(texts))} and candidate scores "
            f"{list(np.shape(scores))}: they must be [{plates}, K] both"
        )
    return [
        [(_text(t), round(float(s), 4)) for t, s in zip(row_texts, row_scores) if _text(t)]
        for row_texts, row_scores in zip(texts, scores)
    ]


# How many PlatesClients each thread holds open: the last one closed in a thread of its own releases the thread's
# gevent hub (below).
_open_in_thread = threading.local()


class PlatesClient:
    """`with PlatesClient("localhost:8000") as client: client.recognize(Path("a.jpg").read_bytes())`.

    A request the server refuses as overloaded (HTTP 503) is sent again as `retry` says, within `timeout` seconds
    (also each request's network timeout); OverloadedError once it gives up.
    """

    def __init__(self, url: str = "localhost:8000", timeout: float = 60.0, retry: RetryPolicy = RetryPolicy()) -> None:
        import tritonclient.http as httpclient

        self.url = normalize_url(url)
        self.timeout = timeout
        self.retry = retry
        self._http = httpclient
        host = self.url.split("://", 1)[1]
        self._client = httpclient.InferenceServerClient(host, connection_timeout=timeout, network_timeout=timeout)
        self._thread: int | None = threading.get_ident()  # None once closed
        _open_in_thread.count = getattr(_open_in_thread, "count", 0) + 1

    def recognize(self, image: bytes | np.ndarray) -> list[Plate]:
        """The plates of `image`: a photo file's bytes (JPEG or PNG, decoded by the server), or its HWC BGR pixels."""
        result = self.infer(MODEL, self.inputs(image), OUTPUTS)
        return plates_from_outputs(*(result.as_numpy(name) for name in OUTPUTS))

    def infer(self, model: str, inputs: list, outputs: Sequence[str]):
        """`model`'s `outputs` for `inputs` (tritonclient InferInputs), refusals retried and errors raised as in
        recognize: one model of the service called directly, as `plates bench` calls the detector alone."""
        requested = self._requested(outputs)
        return call_with_retries(lambda: self._infer(model, inputs, requested), self.retry, self.timeout)

    def _requested(self, outputs: Sequence[str]) -> list:
        return [self._http.InferRequestedOutput(name, binary_data=True) for name in outputs]

    def _infer(self, model, inputs, outputs):
        from geventhttpclient.response import HTTPConnectionClosed
        from tritonclient.utils import InferenceServerException

        try:
            return self._client.infer(model, inputs, outputs=outputs)
        except InferenceServerException as error:
            # Triton's own answer while the model itself cannot serve (its stub died, it reloads): 400 where it is not
            # loaded, but the image is not why.
            if not_serving(model, error.message()):
                said = f"server at {self.url} cannot serve {model} now: {error.message()}"
                raise ServerUnavailableError(said) from error
            if str(error.status()) == "400":
                raise InvalidInputError(f"server rejected the image: {error.message()}") from error
            # The orchestrator's answer while a model it calls reloads: also 503, but retrying at once will not help.
            if str(error.status()) == "503" and RELOADING in error.message():
                raise ReloadingError(f"server at {self.url}: {error.message()}") from error
            # Triton's refusals (a full queue, a queue timeout), also those of a model the orchestrator called.
            if str(error.status()) == "503":
                raise OverloadedError(f"server at {self.url} is overloaded: {error.message()}") from error
            raise PlatesError(f"server at {self.url} failed: {error.message()}") from error
        # A kept-alive connection to a server that has since been killed (restarted) closes on the next request.
        except (ConnectionError, OSError, HTTPConnectionClosed) as error:
            raise ServerUnavailableError(f"no Triton server answers at {self.url}: {error}") from error

    def inputs(self, image: bytes | np.ndarray) -> list:
        """The request's one input: `image_bytes` for a file's bytes, `input__0` for pixels."""
        if isinstance(image, (bytes, bytearray)):
            if not image:
                raise InvalidInputError("image is empty")
            tensor = self._http.InferInput("image_bytes", [1], "BYTES")
            # An object array keeps every byte; a numpy bytes_ array would drop trailing NULs.
            tensor.set_data_from_numpy(np.array([bytes(image)], dtype=np.object_))
            return [tensor]
        image = check_image(image)
        tensor = self._http.InferInput("input__0", list(image.shape), "UINT8")
        tensor.set_data_from_numpy(image)
        return [tensor]

    def request_size(self, image: bytes | np.ndarray) -> int:
        """Bytes of the HTTP request body that sends `image`: what goes on the wire, headers aside."""
        body, _ = self._http.InferenceServerClient.generate_request_body(
            self.inputs(image), outputs=self._requested(OUTPUTS)
        )
        return len(body)

    def ready(self) -> bool:
        """Whether the server says it is ready, asked over this client's own connection, which this opens."""
        return self._client.is_server_ready()

    def close(self) -> None:
        self._client.close()
        if self._thread != threading.get_ident():  # closed before, or from another thread: its hub is not this one
            return
        self._thread = None
        _open_in_thread.count -= 1
        if _open_in_thread.count == 0 and threading.current_thread() is not threading.main_thread():
            # tritonclient's HTTP client runs on gevent, which gives each thread a hub whose event loop holds two
            # file descriptors until it is destroyed: a thread that ends without it leaks them, and a server that
            # makes a client in each of its request threads runs out (1,150 after one overload test's bursts).
            import gevent

            gevent.get_hub().destroy(destroy_loop=True)

    def __enter__(self) -> PlatesClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
