"""API keys, sent as Plate Recognizer's clients send theirs: `Authorization: Token KEY`; and the networks whose
requests need none.

Plate Recognizer's on-premise SDK has no tokens, so the clients made for it send none (their CLI with `--sdk-url`,
`transfer.py` on a localhost URL), an empty one (pyzm) or whatever their settings hold (Home Assistant). From the
networks of `anonymous_from`, such a request is let in as ANONYMOUS, which has its own places in flight; a valid key
still counts as that key there, and works from anywhere.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Iterable

from plates.gateway.errors import Refusal

ANONYMOUS = "anonymous"  # the identity of a request let in without a key, from an anonymous network
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def key_id(key: str) -> str:
    """A key's name in logs and limits: a short hash, from which a random key cannot be recovered."""
    return hashlib.sha256(key.encode()).hexdigest()[:12]


class KeyRing:
    """The keys the gateway accepts and the networks it lets in without one. With neither, every request is let in
    (the gateway then serves the loopback only) and identified as None."""

    def __init__(self, keys: Iterable[str], anonymous_from: Iterable[Network] = ()) -> None:
        # Digests of equal length: comparing them takes the same time whatever the token's length and content.
        self._digests = [(hashlib.sha256(key.encode()).digest(), key_id(key)) for key in keys]
        self._anonymous = tuple(anonymous_from)

    def identify(self, authorization: bytes | None, client: str | None = None) -> str | None:
        """The id of the key that `authorization` (the header's value) carries, ANONYMOUS for a request from an
        anonymous network without a valid key, None where the gateway is open to all. Refusal 401 otherwise."""
        if not self._digests and not self._anonymous:
            return None
        try:
            return self._key_of(authorization)
        except Refusal:
            if self._is_anonymous(client):
                return ANONYMOUS
            raise

    def _key_of(self, authorization: bytes | None) -> str:
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

    def _is_anonymous(self, client: str | None) -> bool:
        if client is None or not self._anonymous:
            return False
        try:
            address = ipaddress.ip_address(client)
        except ValueError:  # a Unix socket's peer, or anything else that is not an IP address
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped  # a dual-stack socket reports IPv4 clients as ::ffff:a.b.c.d
        return any(address in network for network in self._anonymous)
