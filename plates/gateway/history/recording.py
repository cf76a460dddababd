"""What the gateway remembers of a photo: where it has a store and the request names a camera (Snapshot's
`camera_id`, as Plate Recognizer's clients send it to feed ParkPow), each plate read as a read of that camera, in
its role (`--camera-roles`) for the site's visits."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from plates.client.service import Plate
from plates.store.sightings import Sighting, direction
from plates.watch.site import CAMERA_ID

if TYPE_CHECKING:
    from plates.store.writer import StoreWriter

log = logging.getLogger(__name__)


class History:
    def __init__(self, writer: StoreWriter, roles: dict[str, str]) -> None:
        self.writer, self.roles = writer, roles
        self._refused: set[str] = set()

    def remember(self, camera_id: str | None, timestamp: str, plates: list[Plate], photo: bytes) -> None:
        """Queue the read plates of `photo`; the writer's thread cuts their crops (where it keeps crops) and writes
        them."""
        if not camera_id:
            return
        if not CAMERA_ID.fullmatch(camera_id):
            if len(self._refused) < 100 and camera_id not in self._refused:
                self._refused.add(camera_id)
                log.warning("camera_id %r is not stored: 1 to 64 letters, digits, '_' or '-'", camera_id[:80])
            return
        try:
            seen_at = datetime.fromisoformat(timestamp.replace("Z", "+00:00")).astimezone(timezone.utc)
        except (ValueError, OverflowError):  # a time with an offset that UTC cannot hold (year 0): kept out
            return
        heading = direction(self.roles.get(camera_id, "none"), None)
        for plate in plates:
            if plate.text is None:
                continue
            self.writer.write(
                Sighting(
                    camera_id=camera_id,
                    seen_at=seen_at,
                    last_seen_at=seen_at,
                    text=plate.text,
                    text_score=plate.text_score,
                    candidates=list(plate.candidates) or [(plate.text, plate.text_score)],
                    box=list(plate.box),
                    source="gateway",
                    direction=heading,
                    photo=photo if self.writer.crops is not None else None,
                )
            )

    def close(self) -> None:
        self.writer.close()
