"""What the writers hand the store: one plate as a camera's track or a photo gave it, and where it was going."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from plates.exceptions import SettingsError

ROLES = ("none", "entrance", "exit", "both")
MOTIONS = ("towards", "away")


@dataclass(frozen=True)
class Sighting:
    camera_id: str
    seen_at: datetime  # aware, the first frame the plate was read in
    last_seen_at: datetime
    text: str | None  # None where no frame gave a valid plate
    text_score: float = 0.0
    candidates: list[tuple[str, float]] = field(default_factory=list)  # best first; `text` among them
    box: list[float] = field(default_factory=list)
    source: str = ""
    track: int | None = None
    readings: int = 1
    motion: str | None = None  # "towards" or "away" from the camera, where the track showed it
    direction: str | None = None  # "in" or "out" of the site, from the camera's role (direction())
    crop_jpeg: bytes | None = None  # the best crop, JPEG
    # The photo `box` is in, where there is no crop yet (the gateway's): the writer cuts the crop in its own thread,
    # off the request's path.
    photo: bytes | None = field(default=None, repr=False)


def direction(role: str, motion: str | None, entry_motion: str = "towards") -> str | None:
    """Whether a plate read by a camera of `role` came in ("in"), went out ("out"), or neither (None).

    A camera that watches both ways at one gate ("both") tells them apart by the track's motion: `entry_motion` is
    how a car coming in moves for it ("towards" where it faces the road outside, "away" where it faces the site).
    """
    if role not in ROLES:
        raise SettingsError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    if entry_motion not in MOTIONS:
        raise SettingsError(f"entry_motion must be one of {', '.join(MOTIONS)}, got {entry_motion!r}")
    if role == "entrance":
        return "in"
    if role == "exit":
        return "out"
    if role == "both" and motion in MOTIONS:
        return "in" if motion == entry_motion else "out"
    return None
