"""What `plates watch` runs: a site's cameras and what they share, from a site file (`--config site.yaml`) or from the
command line (one camera).

Every setting is checked here, before any camera starts, and a bad one is an error that names the file, the camera
and the option.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from plates.exceptions import SettingsError
from plates.store.sightings import MOTIONS, ROLES
from plates.watch.tracking import TRACKERS
from plates.watch.watchlist import WatchedPlate, parse_entry

# Topic levels and Home Assistant's discovery ids allow these only.
CAMERA_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
DEFAULT_CAMERA_ID = "camera"
DEFAULT_DISCOVERY_PREFIX = "homeassistant"


@dataclass(frozen=True)
class CameraSettings:
    camera_id: str
    source: str
    fps: float = 5.0
    max_in_flight: int = 2  # requests of this camera out at once
    lost_after: float = 1.0
    max_delay: float | None = None
    tracker: str = "bytetrack"
    csv: Path | None = None
    webhook: str | None = None
    save_crops: Path | None = None
    role: str = "none"  # for the site's visits: entrance, exit, both (the track's motion tells which) or none
    entry_motion: str = "towards"  # where role is both: how a car coming in moves for this camera
    start: str | None = None  # a file's wall-clock start (ISO 8601), so that a recording makes visits as live

    def start_time(self) -> float | None:
        """`start` as Unix time."""
        if self.start is None:
            return None
        moment = datetime.fromisoformat(self.start.replace("Z", "+00:00"))
        return (moment if moment.tzinfo else moment.astimezone()).timestamp()

    def check(self, where: str) -> None:
        if not CAMERA_ID.fullmatch(self.camera_id):
            raise SettingsError(
                f"{where}: camera_id {self.camera_id!r} must be 1 to 64 letters, digits, '_' or '-' "
                "(it is an MQTT topic level and part of Home Assistant's ids)"
            )
        if not self.fps > 0 or not self.lost_after > 0 or (self.max_delay is not None and not self.max_delay > 0):
            raise SettingsError(
                f"{where}: fps ({self.fps}), lost_after ({self.lost_after}) and max_delay ({self.max_delay}) "
                "must be above 0"
            )
        if self.max_in_flight < 1:
            raise SettingsError(f"{where}: max_in_flight must be at least 1, got {self.max_in_flight}")
        if self.tracker not in TRACKERS:
            raise SettingsError(f"{where}: tracker must be one of {', '.join(TRACKERS)}, got {self.tracker!r}")
        if self.role not in ROLES:
            raise SettingsError(f"{where}: role must be one of {', '.join(ROLES)}, got {self.role!r}")
        if self.entry_motion not in MOTIONS:
            raise SettingsError(f"{where}: entry_motion must be one of {', '.join(MOTIONS)}, got {self.entry_motion!r}")
        if self.start is not None:
            try:
                self.start_time()
            except ValueError:
                raise SettingsError(
                    f"{where}: start {self.start!r} is no ISO 8601 time (2026-11-28T08:00:00Z)"
                ) from None


@dataclass(frozen=True)
class SiteSettings:
    cameras: list[CameraSettings]
    max_in_flight_total: int  # requests out at once across every camera: what the service's queue sees
    watchlist: list[WatchedPlate] = field(default_factory=list)
    watchlist_file: Path | None = None
    max_distance: float = 0.0
    mqtt: str | None = None
    discovery_prefix: str = DEFAULT_DISCOVERY_PREFIX
    store: str | None = None  # a SQLite file or a postgresql:// URL (plates.store)
    store_crops: Path | None = None  # where the store keeps each read's best crop
    absent_after: float = 1440.0  # minutes after which a visit not closed at an exit closes as absent
    overstay_after: float | None = None  # minutes inside after which a visit is alerted once
    visit_distance: float = 1.0  # how far an exit read may be from the plate whose visit it closes
    keep_reads_days: float = 30.0  # reads and their crops older than this are purged (plates are personal data)
    keep_visits_days: float = 365.0  # closed visits older than this are purged

    def check(self, where: str) -> None:
        for index, camera in enumerate(self.cameras):
            camera.check(f"{where}: camera {camera.camera_id or index + 1}")
        ids = [camera.camera_id for camera in self.cameras]
        if duplicates := sorted({i for i in ids if ids.count(i) > 1}):
            raise SettingsError(f"{where}: camera_id {', '.join(duplicates)} is given to more than one camera")
        if self.max_in_flight_total < 1:
            raise SettingsError(f"{where}: max_in_flight_total must be at least 1, got {self.max_in_flight_total}")
        if self.max_distance < 0:
            raise SettingsError(f"{where}: max_distance must be 0 or more, got {self.max_distance}")
        if self.watchlist and self.watchlist_file:
            raise SettingsError(f"{where}: a watchlist in the site file and a watchlist file: give one")
        if not re.fullmatch(r"[A-Za-z0-9_/-]+", self.discovery_prefix) or self.discovery_prefix.endswith("/"):
            raise SettingsError(f"{where}: discovery_prefix {self.discovery_prefix!r} is no MQTT topic prefix")
        if not self.absent_after > 0 or (self.overstay_after is not None and not self.overstay_after > 0):
            raise SettingsError(f"{where}: absent_after and overstay_after must be above 0 minutes")
        if not self.keep_reads_days > 0 or not self.keep_visits_days > 0:
            raise SettingsError(f"{where}: keep_reads_days and keep_visits_days must be above 0")
        if self.visit_distance < 0:
            raise SettingsError(f"{where}: visit_distance must be 0 or more, got {self.visit_distance}")
        if not self.store and any(camera.role != "none" for camera in self.cameras):
            raise SettingsError(f"{where}: a camera has a role, for visits, but no store keeps them: give store")


CAMERA_OPTIONS = tuple(f.name for f in fields(CameraSettings))
SITE_OPTIONS = (
    "cameras",
    "max_in_flight_total",
    "watchlist",
    "watchlist_file",
    "max_distance",
    "mqtt",
    "discovery_prefix",
    "store",
    "store_crops",
    "absent_after",
    "overstay_after",
    "visit_distance",
    "keep_reads_days",
    "keep_visits_days",
)


def _number(value: Any, where: str, kind: type) -> float | int:
    # YAML's bools are ints to Python: `fps: yes` must not pass as 1.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and isinstance(value, float)):
        raise SettingsError(f"{where}: must be {'a whole number' if kind is int else 'a number'}, got {value!r}")
    return kind(value)


def _optional_number(value: Any, where: str) -> float | None:
    return None if value is None else _number(value, where, float)


def _store(value: Any, base: Path, where: str) -> str | None:
    """A SQLite file relative to the site file, or a database URL as it is."""
    if value in (None, ""):
        return None
    text = _string(value, where)
    return text if "://" in text else str(base / text)


def _string(value: Any, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise SettingsError(f"{where}: must be a string, got {value!r}")
    return str(value)


def _camera(raw: Any, where: str, base: Path) -> CameraSettings:
    if not isinstance(raw, dict):
        raise SettingsError(f"{where}: must be a mapping of options (camera_id, source, fps, ...)")
    if unknown := sorted(set(map(str, raw)) - set(CAMERA_OPTIONS)):
        raise SettingsError(f"{where}: unknown option {', '.join(unknown)} (known: {', '.join(CAMERA_OPTIONS)})")
    for required in ("camera_id", "source"):
        if raw.get(required) in (None, ""):
            raise SettingsError(f"{where}: {required} is missing")
    options: dict[str, Any] = {}
    for name, value in raw.items():
        at = f"{where}: {name}"
        if name in ("fps", "lost_after") or (name == "max_delay" and value is not None):
            options[name] = _number(value, at, float)
        elif name == "max_in_flight":
            options[name] = _number(value, at, int)
        elif name in ("csv", "save_crops"):
            options[name] = base / _string(value, at)
        else:
            options[name] = value if value is None else _string(value, at)
    return CameraSettings(**options)


def _watchlist(raw: Any, where: str) -> list[WatchedPlate]:
    if not isinstance(raw, list):
        raise SettingsError(f"{where}: must be a list of `PLATE label` strings or {{plate, label}} mappings")
    entries = []
    for index, item in enumerate(raw, start=1):
        at = f"{where}, item {index}"
        if isinstance(item, dict) and set(item) <= {"plate", "label"} and "plate" in item:
            entries.append(parse_entry(_string(item["plate"], at), _string(item.get("label", ""), at), at))
        elif isinstance(item, str) and item.strip():
            plate, _, label = item.strip().partition(" ")
            entries.append(parse_entry(plate, label, at))
        else:
            raise SettingsError(f"{at}: must be `PLATE label` or {{plate: PLATE, label: LABEL}}, got {item!r}")
    return entries


def load_site(path: Path) -> SiteSettings:
    """The site file at `path` (YAML), checked; its relative paths are relative to the file."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SettingsError(f"--config {path}: cannot read it: {error.strerror}") from error
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise SettingsError(f"--config {path}: not valid YAML: {error}") from error
    where = str(path)
    if not isinstance(raw, dict):
        raise SettingsError(f"{where}: must be a mapping with a `cameras` list")
    if unknown := sorted(set(map(str, raw)) - set(SITE_OPTIONS)):
        raise SettingsError(f"{where}: unknown option {', '.join(unknown)} (known: {', '.join(SITE_OPTIONS)})")
    cameras = raw.get("cameras")
    if not isinstance(cameras, list) or not cameras:
        raise SettingsError(f"{where}: cameras must be a list of one camera or more")
    base = path.parent
    camera_settings = [_camera(c, f"{where}: cameras, item {i}", base) for i, c in enumerate(cameras, start=1)]
    site = SiteSettings(
        cameras=camera_settings,
        max_in_flight_total=_number(raw.get("max_in_flight_total", 4), f"{where}: max_in_flight_total", int),
        watchlist=_watchlist(raw.get("watchlist") or [], f"{where}: watchlist"),
        watchlist_file=base / _string(raw["watchlist_file"], where) if raw.get("watchlist_file") else None,
        max_distance=_number(raw.get("max_distance", 0), f"{where}: max_distance", float),
        mqtt=_string(raw["mqtt"], f"{where}: mqtt") if raw.get("mqtt") else None,
        discovery_prefix=_string(raw.get("discovery_prefix", DEFAULT_DISCOVERY_PREFIX), f"{where}: discovery_prefix"),
        store=_store(raw.get("store"), base, f"{where}: store"),
        store_crops=base / _string(raw["store_crops"], f"{where}: store_crops") if raw.get("store_crops") else None,
        absent_after=_number(raw.get("absent_after", 1440), f"{where}: absent_after", float),
        overstay_after=_optional_number(raw.get("overstay_after"), f"{where}: overstay_after"),
        visit_distance=_number(raw.get("visit_distance", 1.0), f"{where}: visit_distance", float),
        keep_reads_days=_number(raw.get("keep_reads_days", 30), f"{where}: keep_reads_days", float),
        keep_visits_days=_number(raw.get("keep_visits_days", 365), f"{where}: keep_visits_days", float),
    )
    site.check(where)
    return site
