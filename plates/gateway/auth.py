"""API keys, sent as Plate Recognizer's clients send theirs: `Authorization: Token KEY`."""

from __future__ import annotations

import hashlib
import hmac
from typing import Iterable

from plates.gateway.errors import Refusal


def key_id(key: str) -> str:
    """A key's name in logs and limits: a short hash, from which a random key cannot be recovered."""
    return hashlib.sha256(key.encode()).hexdigest()[:12]


class KeyRing:
    """The keys the gateway accepts; with none, every request is let in (the gateway then serves the loopback only)."""

    def __init__(self, keys: Iterable[str]) -> None:
        # Digests of equal length: comparing them takes the same time whatever the token's length and content.
        self._digests = [(hashlib.sha256(key.encode()).digest(), key_id(key)) for key in keys]

    def identify(self, authorization: bytes | None) -> str | None:
        """The id of the key that `authorization` (the header's value) carries; None where no keys are set.
        Refusal 401 naming what is wrong otherwise."""
        if not self._digests:
            return None
        if authorization is None:
            raise Refusal(401, "unauthorized", "no API key: send the header 'Authorization: Token KEY'")
        scheme, _, token = authorization.strip().partition(b" ")
        if scheme.lower() != b"token" or not token.strip():
            raise Refusal(401, "unauthorized", "the Authorization header must be 'Token KEY'")
        digest = hashlib.sha256(token.strip()).digest()
        found = None
        for known, name in self._digests:  # every key compared: the time does not tell which one matched
            if hmac.compare_digest(known, digest):
                found = name
        if found is None:
            raise Refusal(401, "unauthorized", "the API key is not valid")
        return found
