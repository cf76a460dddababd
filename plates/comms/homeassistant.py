"""Home Assistant's MQTT discovery: the retained configs that make each camera a device with two entities.

- `sensor.<camera>_last_plate`: the text of the camera's last plate, the whole event as its attributes;
- `event.<camera>_watched_plate`: fires `watched` when a watched plate passes, with the plate, label and distance.

As in Zigbee2MQTT's extension, each config sits at `<prefix>/<component>/plates_<camera>/<object>/config`, carries a
stable `unique_id` and a `device` block, and takes its availability from the client's last will (`plates/status`), so
Home Assistant shows the entities unavailable when `plates watch` dies. Options as documented at
https://www.home-assistant.io/integrations/mqtt/ (discovery), /integrations/sensor.mqtt/ and /integrations/event.mqtt/.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from plates.comms.topics import OFFLINE, ONLINE, STATUS, camera_topic

# The alert is the event as plates.watch writes it; Home Assistant's event entity wants a JSON object whose
# `event_type` is one of `event_types`, its other keys the event's attributes.
ALERT_TEMPLATE = (
    "{{ {'event_type': 'watched', 'plate': value_json.watched.plate, 'label': value_json.watched.label, "
    "'distance': value_json.watched.distance, 'text': value_json.text, 'track': value_json.track} | to_json }}"
)


def _version() -> str:
    try:
        return version("plates")
    except PackageNotFoundError:
        return "unknown"


def discovery_configs(camera_ids: list[str], prefix: str) -> list[tuple[str, dict]]:
    """(topic, config) for every entity of every camera."""
    configs = []
    for camera_id in camera_ids:
        node = f"plates_{camera_id}"
        common = {
            "availability_topic": STATUS,
            "payload_available": ONLINE,
            "payload_not_available": OFFLINE,
            "qos": 1,
            "device": {
                "identifiers": [node],
                "name": f"plates {camera_id}",
                "manufacturer": "plates",
                "model": "plates watch camera",
                "sw_version": _version(),
            },
            "origin": {"name": "plates", "sw_version": _version()},
        }
        configs.append(
            (
                f"{prefix}/sensor/{node}/last_plate/config",
                {
                    "name": "Last plate",
                    "unique_id": f"{node}_last_plate",
                    "state_topic": camera_topic(camera_id, "event"),
                    "value_template": "{{ value_json.text or 'unread' }}",
                    "json_attributes_topic": camera_topic(camera_id, "event"),
                    "icon": "mdi:car",
                    **common,
                },
            )
        )
        configs.append(
            (
                f"{prefix}/event/{node}/watched_plate/config",
                {
                    "name": "Watched plate",
                    "unique_id": f"{node}_watched_plate",
                    "state_topic": camera_topic(camera_id, "alert"),
                    "event_types": ["watched"],
                    "value_template": ALERT_TEMPLATE,
                    "icon": "mdi:car-search",
                    **common,
                },
            )
        )
    return configs
