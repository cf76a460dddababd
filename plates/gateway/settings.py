"""The gateway's settings: each a flag, else its PLATES_GATEWAY_* variable, else the default.

API keys are never flags (a command line is visible to every user of the machine): PLATES_GATEWAY_KEYS holds them
comma-separated, and a file (--keys-file, PLATES_GATEWAY_KEYS_FILE: a mounted secret) one per line, `#` comments,
each optionally followed by its quota of photos a month (`KEY 2500`). --anonymous-from names the networks whose
requests need no key. With neither keys nor such networks the gateway serves anyone, so it then listens on the
loopback only.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
from dataclasses import dataclass, field, fields
from pathlib import Path

from plates.exceptions import SettingsError
from plates.gateway.auth import Network

PREFIX = "PLATES_GATEWAY_"


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    # Plate Recognizer's on-premise SDK serves on 8080: their clients need only the host changed.
    port: int = 8080
    triton_grpc: str = "127.0.0.1:8001"  # the photos go here
    triton_http: str = "127.0.0.1:8000"  # the deep health check (plates.client.health) goes here
    keys: tuple[str, ...] = field(default=(), repr=False)
    quotas: tuple[tuple[str, int], ...] = field(default=(), repr=False)  # (key, photos a month) for keys that have one
    # Networks whose requests are served without a key (clients made for Plate Recognizer's on-premise SDK send none).
    anonymous_from: tuple[Network, ...] = ()
    max_in_flight_anonymous: int = 4  # requests in flight at once without a key, over all anonymous clients
    max_body_bytes: int = 10 * 2**20  # a 12 MP phone photo is 3 to 6 MB
    max_header_bytes: int = 16 * 2**10  # h11's and most proxies' limit for a request's line and headers
    max_in_flight: int = 8  # photos accepted at once, over all keys: at Triton or waiting their turn
    max_in_flight_per_key: int = 4  # ... and for one key
    # Photos at Triton at once. plate_recognition's one instance takes one while the next waits in its queue, so it
    # never idles between photos; more would fill its queue (3 places), which idles it (docs/performance.md, The
    # gateway) and leaves no place for the health check or in-cluster clients. With more instances: their count + 1.
    max_at_triton: int = 2
    # Seconds a photo may wait for its turn at Triton, and again while Triton refuses it as busy.
    queue_timeout: float = 5.0
    # Seconds a request over the places above waits for one, in its turn, before it is refused (429): a client that
    # ignores Retry-After then costs a timer, not a core (plates.gateway.limits.InFlight).
    wait_for_place: float = 1.0
    max_connections: int = 256  # beyond, uvicorn answers 503 (plain text) before the application runs
    backlog: int = 256  # connections the kernel queues before the gateway accepts them
    header_timeout: float = 10.0  # seconds from a request's first byte to the end of its headers
    body_timeout: float = 30.0  # seconds from the end of the headers to the end of the body
    inference_timeout: float = 30.0  # seconds Triton has for one photo
    health_interval: float = 5.0  # seconds between deep health checks
    # The site's store (plates.store), where photos that name a camera_id are remembered; its crops folder; and each
    # camera's role for visits.
    store: str | None = None
    store_crops: str | None = None
    camera_roles: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        numbers = {f.name: getattr(self, f.name) for f in fields(self) if f.type in ("int", "float")}
        for name, value in numbers.items():
            if value <= 0 and name != "port":
                raise SettingsError(f"gateway setting {name} must be positive, got {value}")
        if not self.keys and not self.anonymous_from and not is_loopback(self.host):
            raise SettingsError(
                f"refusing to listen on {self.host} without API keys: set {PREFIX}KEYS or --keys-file, or listen on "
                "127.0.0.1"
            )
        for key in self.keys:
            if not key.isascii() or not key.isprintable() or " " in key or "," in key:
                raise SettingsError("an API key must be printable ASCII without spaces or commas")

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name other than localhost may resolve to anything
        return False


# flag, its type, and help; the variable is PREFIX + the flag's name in capitals.
FLAGS: tuple[tuple[str, type, str], ...] = (
    ("host", str, "address to listen on; any but the loopback needs API keys"),
    ("port", int, "port to listen on"),
    ("triton-grpc", str, "Triton's gRPC endpoint, where photos are sent"),
    ("triton-http", str, "Triton's HTTP endpoint, for the deep health check of /readyz"),
    ("max-body-bytes", int, "largest request body; more is refused with 413"),
    ("max-header-bytes", int, "largest request line and headers; more is refused with 431"),
    ("max-in-flight", int, "photos accepted at once (at Triton or waiting their turn); more are refused with 429"),
    ("max-in-flight-per-key", int, "photos accepted at once for one API key; more are refused with 429"),
    (
        "max-in-flight-anonymous",
        int,
        "requests in flight at once without an API key (--anonymous-from); more are refused with 429",
    ),
    ("max-at-triton", int, "photos sent to Triton at once; the others wait their turn"),
    (
        "queue-timeout",
        float,
        "seconds a photo may wait for its turn at Triton, and again while Triton refuses it as busy; then 429",
    ),
    (
        "wait-for-place",
        float,
        "seconds a request over the places in flight waits for one, in its turn, before it is refused with 429",
    ),
    ("max-connections", int, "open connections; more are answered 503"),
    ("backlog", int, "connections queued by the kernel before they are accepted"),
    ("header-timeout", float, "seconds a request's headers may take to arrive; then 408"),
    ("body-timeout", float, "seconds a request's body may take to arrive after its headers; then 408"),
    ("inference-timeout", float, "seconds Triton may take for one photo; then 504"),
    ("health-interval", float, "seconds between deep health checks of Triton"),
    (
        "store",
        str,
        "remember each plate of a photo that names a camera_id in this store: a SQLite file or a postgresql:// URL; "
        "also serves the site's history at /history and /v1/history/",
    ),
    ("store-crops", str, "the folder of the store's crops, served at /v1/history/crops/ (plates watch writes them)"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    for flag, kind, text in FLAGS:
        variable = PREFIX + flag.upper().replace("-", "_")
        default = getattr(Settings, flag.replace("-", "_"))
        # argparse passes a string default through `type`, so a bad variable is reported as a bad flag would be.
        parser.add_argument(
            f"--{flag}", type=kind, default=os.environ.get(variable, default), help=f"{text} (${variable}; {default})"
        )
    parser.add_argument(
        "--keys-file",
        type=Path,
        default=os.environ.get(PREFIX + "KEYS_FILE"),
        help=f"a file of API keys, one per line, each optionally followed by its quota of photos a month, # comments "
        f"(${PREFIX}KEYS_FILE); also ${PREFIX}KEYS, comma-separated",
    )
    parser.add_argument(
        "--camera-roles",
        type=camera_roles,
        default=os.environ.get(PREFIX + "CAMERA_ROLES", ""),
        help=f"each camera's role for the store's visits, comma-separated: gate-in=entrance,gate-out=exit "
        f"(${PREFIX}CAMERA_ROLES; none)",
    )
    parser.add_argument(
        "--anonymous-from",
        type=networks,
        default=os.environ.get(PREFIX + "ANONYMOUS_FROM", ""),
        help=f"networks whose requests are served without an API key, comma-separated, such as 127.0.0.0/8,"
        f"10.0.0.0/8 (${PREFIX}ANONYMOUS_FROM; none)",
    )


def camera_roles(text: str) -> tuple[tuple[str, str], ...]:
    """`gate-in=entrance,gate-out=exit`."""
    roles = []
    for part in (part.strip() for part in text.split(",")):
        camera, _, role = part.partition("=")
        if not part:
            continue
        if role not in ("entrance", "exit", "none"):
            raise argparse.ArgumentTypeError(f"{part!r}: write CAMERA=entrance, CAMERA=exit or CAMERA=none")
        roles.append((camera.strip(), role))
    return tuple(roles)


def networks(text: str) -> tuple[Network, ...]:
    """`127.0.0.0/8,10.0.0.0/8` (an address alone is its own network)."""
    try:
        return tuple(ipaddress.ip_network(part.strip()) for part in text.split(",") if part.strip())
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of networks: {error}") from error


def settings_from(args: argparse.Namespace, environ: dict[str, str] | None = None) -> Settings:
    """The settings of parsed `args` (add_arguments), with the keys of the environment and the keys file."""
    environ = os.environ if environ is None else environ
    keys = [key.strip() for key in environ.get(PREFIX + "KEYS", "").split(",") if key.strip()]
    quotas: dict[str, int] = {}
    if args.keys_file is not None:
        quotas = read_keys(Path(args.keys_file))
        keys += list(quotas)
    values = {flag.replace("-", "_"): getattr(args, flag.replace("-", "_")) for flag, _, _ in FLAGS}
    return Settings(
        keys=tuple(dict.fromkeys(keys)),
        quotas=tuple((k, q) for k, q in quotas.items() if q),
        anonymous_from=args.anonymous_from,
        camera_roles=args.camera_roles,
        **values,
    )


def read_keys(path: Path) -> dict[str, int]:
    """The keys of a keys file, each with its quota of photos a month (0: none)."""
    try:
        lines = path.read_text().splitlines()
    except OSError as error:
        raise SettingsError(f"cannot read the keys file {path}: {error.strerror or error}") from error
    keys = {}
    for number, line in enumerate(lines, 1):
        fields = [] if line.strip().startswith("#") else line.split()
        if not fields:
            continue
        if len(fields) > 2 or (len(fields) == 2 and not fields[1].isdigit()):
            raise SettingsError(
                f"the keys file {path}, line {number}: write a key, optionally followed by its quota "
                "of photos a month (KEY 2500)"
            )
        keys[fields[0]] = int(fields[1]) if len(fields) == 2 else 0
    if not keys:
        # A mounted secret that came out empty must not turn authentication off.
        raise SettingsError(f"the keys file {path} holds no key")
    return keys
