"""Reading a photo's plates through the gateway as its clients do: one multipart POST per photo, to Plate
Recognizer's Snapshot API (the default) or to CodeProject.AI's licence plate reader.

Its errors are the package's: a refusal (429) is OverloadedError, so that the benchmark counts it as the direct
path's 503s are counted; a gateway or Triton that does not answer is ServerUnavailableError.
"""

from __future__ import annotations

import requests

from plates.client.readiness import normalize_url
from plates.exceptions import InvalidInputError, OverloadedError, PlatesError, ServerUnavailableError

PATH = "/v1/plate-reader/"
PATHS = {"snapshot": PATH, "codeproject": "/v1/vision/alpr"}  # each API's route; both take the photo as `upload`


class GatewayClient:
    """`with GatewayClient("localhost:8080", token) as gateway: gateway.read(Path("a.jpg").read_bytes())`.

    One kept-alive connection: make one client per thread.
    """

    def __init__(
        self, url: str = "localhost:8080", token: str | None = None, timeout: float = 60.0, api: str = "snapshot"
    ) -> None:
        self.url = normalize_url(url) + PATHS[api]
        self.timeout = timeout
        self._session = requests.Session()
        if token:
            self._session.headers["Authorization"] = f"Token {token}"

    def read(self, photo: bytes, filename: str = "photo.jpg") -> dict:
        """The gateway's answer for the photo file `photo`, as JSON."""
        try:
            response = self._session.post(self.url, files={"upload": (filename, photo)}, timeout=self.timeout)
        except requests.RequestException as error:
            raise ServerUnavailableError(f"no gateway answers at {self.url}: {error}") from error
        if response.ok:
            return response.json()
        said = f"gateway answered {response.status_code}: {error_message(response)}"
        if response.status_code == 429:
            raise OverloadedError(said)
        if response.status_code == 503:
            raise ServerUnavailableError(said)
        if response.status_code < 500:
            raise InvalidInputError(said)
        raise PlatesError(said)

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> GatewayClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def error_message(response: requests.Response) -> str:
    """The message of the gateway's JSON error, or the start of whatever else answered."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and "message" in error:
        return str(error["message"])
    if isinstance(error, str):  # CodeProject.AI's shape
        return error
    return str(body.get("detail", body)) if isinstance(body, dict) else str(body)
