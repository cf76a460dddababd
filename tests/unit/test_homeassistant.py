import json
from pathlib import Path

import jinja2
import jsonschema
import pytest

from plates.comms.homeassistant import discovery_configs

SCHEMAS = json.loads((Path(__file__).parent / "data" / "homeassistant_mqtt_discovery.schema.json").read_text())
EVENT = {
    "camera_id": "gate",
    "track": 3,
    "text": "B840CK197",
    "watched": {"plate": "B84OCK197", "label": "boss", "distance": 0.5},
}


def schema_of(component: str) -> dict:
    platform = SCHEMAS[component]
    return {
        "$defs": SCHEMAS["$defs"],
        "type": "object",
        "properties": {**SCHEMAS["$defs"]["common"], **platform["properties"]},
        "required": platform["required"],
        "additionalProperties": False,
    }


def render(template: str, payload: dict) -> str:
    """As Home Assistant renders a value template: the payload as `value_json`, its `to_json` filter."""
    environment = jinja2.Environment()
    environment.filters["to_json"] = json.dumps
    return environment.from_string(template).render(value_json=payload)


def test_each_camera_gets_a_last_plate_sensor_and_a_watched_plate_event_under_the_prefix():
    topics = [topic for topic, _ in discovery_configs(["gate", "yard"], "ha")]
    assert topics == [
        "ha/sensor/plates_gate/last_plate/config",
        "ha/event/plates_gate/watched_plate/config",
        "ha/sensor/plates_yard/last_plate/config",
        "ha/event/plates_yard/watched_plate/config",
    ]


@pytest.mark.parametrize("camera_id", ["gate", "yard-2"])
def test_discovery_configs_meet_home_assistants_documented_schema(camera_id):
    for topic, config in discovery_configs([camera_id], "homeassistant"):
        component = topic.split("/")[1]
        jsonschema.validate(config, schema_of(component))
        assert config["device"]["identifiers"] == [f"plates_{camera_id}"]
        assert config["availability_topic"] == "plates/status"


def test_the_schema_refuses_what_home_assistant_would():
    topic, config = discovery_configs(["gate"], "homeassistant")[1]
    for broken in (
        {**config, "event_type": ["watched"]},
        {k: v for k, v in config.items() if k != "event_types"},
        {**config, "device": {"name": "no identifiers"}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema_of("event"))


def test_unique_ids_are_stable_and_distinct_across_cameras():
    configs = discovery_configs(["gate", "yard"], "homeassistant")
    ids = [config["unique_id"] for _, config in configs]
    assert len(set(ids)) == 4 and ids == [c["unique_id"] for _, c in discovery_configs(["gate", "yard"], "x")]


def test_the_sensors_state_is_the_plates_text():
    sensor = discovery_configs(["gate"], "homeassistant")[0][1]
    assert sensor["state_topic"] == sensor["json_attributes_topic"] == "plates/gate/event"
    assert render(sensor["value_template"], EVENT) == "B840CK197"
    assert render(sensor["value_template"], {**EVENT, "text": None}) == "unread"


def test_the_alert_renders_as_the_json_event_home_assistant_wants():
    event = discovery_configs(["gate"], "homeassistant")[1][1]
    assert event["state_topic"] == "plates/gate/alert"
    rendered = json.loads(render(event["value_template"], EVENT))
    assert rendered == {
        "event_type": "watched",
        "plate": "B84OCK197",
        "label": "boss",
        "distance": 0.5,
        "text": "B840CK197",
        "track": 3,
    }
    assert rendered["event_type"] in event["event_types"]
