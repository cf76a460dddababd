"""Talking to the service over HTTP as a user does: a photo in, its plates out."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from plates.exceptions import InvalidInputError, PlatesError, ServerUnavailableError
from plates.images import check_image
from plates.readiness import normalize_url

MODEL = "plate_recognition"
OUTPUTS = ("coordinates", "texts", "scores", "text_scores")


@dataclass(frozen=True)
class Plate:
    text: str | None  # None where a plate was found but not read as a valid Russian plate
    box: list[float]  # x1, y1, x2, y2 in the photo's pixels
    score: float  # detector confidence
    text_score: float = 0.0  # probability of the text under the recognizer

    def to_dict(self) -> dict:
        return asdict(self)


def plates_from_outputs(
    coordinates: np.ndarray, texts: np.ndarray, scores: np.ndarray, text_scores: np.ndarray
) -> list[Plate]:
    """The server's outputs as Plate objects, checked for agreeing lengths."""
    coordinates = np.asarray(coordinates, dtype=np.float32).reshape(-1, 4)
    if not len(coordinates) == len(texts) == len(scores) == len(text_scores):
        raise PlatesError(
            f"server answered {len(coordinates)} boxes, {len(texts)} texts, {len(scores)} scores and "
            f"{len(text_scores)} text scores: they must agree"
        )
    decoded = [t.decode() if isinstance(t, bytes) else str(t) for t in texts]
    return [
        Plate(text or None, [round(float(v), 1) for v in box], round(float(score), 4), round(float(text_score), 4))
        for box, text, score, text_score in zip(coordinates, decoded, scores, text_scores)
    ]


class PlatesClient:
    """`with PlatesClient("localhost:8000") as client: client.recognize(Path("a.jpg").read_bytes())`."""

    def __init__(self, url: str = "localhost:8000", timeout: float = 60.0) -> None:
        import tritonclient.http as httpclient

        self.url = normalize_url(url)
        self._http = httpclient
        host = self.url.split("://", 1)[1]
        self._client = httpclient.InferenceServerClient(host, connection_timeout=timeout, network_timeout=timeout)
        self._outputs = [httpclient.InferRequestedOutput(name, binary_data=True) for name in OUTPUTS]

    def recognize(self, image: bytes | np.ndarray) -> list[Plate]:
        """The plates of `image`: a photo file's bytes (JPEG or PNG, decoded by the server), or its HWC BGR pixels."""
        from tritonclient.utils import InferenceServerException

        try:
            result = self._client.infer(MODEL, self.inputs(image), outputs=self._outputs)
        except InferenceServerException as error:
            if str(error.status()) == "400":
                raise InvalidInputError(f"server rejected the image: {error.message()}") from error
            raise PlatesError(f"server at {self.url} failed: {error.message()}") from error
        except (ConnectionError, OSError) as error:
            raise ServerUnavailableError(f"no Triton server answers at {self.url}: {error}") from error
        return plates_from_outputs(*(result.as_numpy(name) for name in OUTPUTS))

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
        body, _ = self._http.InferenceServerClient.generate_request_body(self.inputs(image), outputs=self._outputs)
        return len(body)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> "PlatesClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
