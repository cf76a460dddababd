"""What a Snapshot request asks of the engine: its `config` (a JSON object, as a form field) and `mmc`.

What applies to Russian plates is honoured; what this service cannot serve is refused with a 400 naming it, never
answered in a shape the client did not ask for (their CLI's CSV writer reads a `detection_mode: vehicle` answer in
another shape); what changes nothing here, and keys it does not know, are accepted, as their API accepts them.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from plates.gateway.errors import Refusal

ON = ("true", "1", "yes", "on")
OFF = ("false", "0", "no", "off", "")
# What a config option's value may be, besides null, where the client leaves the option off (Home Assistant's
# integration sends null).
UNSET = ("", "none", False)
SERVED = {
    "detection_mode": ("plate",),
    "region": ("strict",),
    "detection_rule": ("strict",),
    "mode": ("fast", "regular"),
}
MAX_CONFIG_CHARS = 4096  # their options fit in a line; a larger field is not a config


@dataclass(frozen=True)
class Options:
    threshold_d: float = 0.0  # plates detected below it are not answered
    threshold_o: float = 0.0  # plates read below it are answered as not read (`unread`)
    region_strict: bool = False  # a plate whose region code is in no region's list is answered as not read


def invalid(message: str) -> Refusal:
    return Refusal(400, "invalid_config", message)


def options_of(config: str | None, mmc: str | None) -> Options:
    """The options of a request's `config` and `mmc` fields (either may be missing). Refusal 400 naming what
    cannot be served, or cannot be read."""
    if mmc is not None and mmc.strip().lower() not in OFF:
        if mmc.strip().lower() in ON:
            raise Refusal(
                400,
                "unsupported_option",
                "mmc=true is not served: this service reads plates and has no "
                "make, model, colour or orientation of vehicles; send mmc=false or leave it out",
            )
        raise invalid(f"mmc must be true or false, not {mmc[:40]!r}")
    if config is None or not config.strip():
        return Options()
    if len(config) > MAX_CONFIG_CHARS:
        raise invalid(f"config is longer than {MAX_CONFIG_CHARS} characters")
    try:
        values = json.loads(config)
    except ValueError as error:
        raise invalid(f'config is not JSON, such as {{"threshold_d": 0.2}}: {error}') from error
    if not isinstance(values, dict):
        raise invalid('config must be a JSON object, such as {"threshold_d": 0.2}')
    detection_mode = values.get("detection_mode")
    if not is_one_of(detection_mode, (*SERVED["detection_mode"], *UNSET, None)):
        raise Refusal(
            400,
            "unsupported_option",
            f"config detection_mode {str(detection_mode)[:40]!r} is not served: "
            "this service finds plates, not vehicles; send detection_mode plate or leave it out",
        )
    for name, served in SERVED.items():
        if not is_one_of(values.get(name), (*served, *UNSET, None)):
            raise invalid(f"config {name} must be {' or '.join(served)}, not {str(values[name])[:40]!r}")
    return Options(threshold("threshold_d", values), threshold("threshold_o", values), values.get("region") == "strict")


def is_one_of(value, choices: tuple) -> bool:
    """Whether `value` is one of `choices` as JSON compares them: false is not 0, nor 1.0 true."""
    return any(type(value) is type(choice) and value == choice for choice in choices)


def threshold(name: str, values: dict) -> float:
    value = values.get(name)
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1 or math.isnan(value):
        raise invalid(f"config {name} must be a number from 0 to 1, not {str(value)[:40]!r}")
    return float(value)
