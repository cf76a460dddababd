"""The MQTT topics of plates watch."""

STATUS = "plates/status"  # retained: ONLINE while connected, OFFLINE as the client's last will or on a clean exit
ONLINE, OFFLINE = "online", "offline"


def camera_topic(camera_id: str, kind: str) -> str:
    """`plates/<camera_id>/event` for every event, `plates/<camera_id>/alert` for a watched plate's,
    `plates/<camera_id>/overstay` for a visit that entered through this camera and is inside too long."""
    return f"plates/{camera_id}/{kind}"
