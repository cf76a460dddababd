"""A Snapshot request's `config` and `mmc`: honoured where they apply, refused by name where they cannot be served."""

from __future__ import annotations

import pytest

from plates.client.service import Plate
from plates.gateway.errors import Refusal
from plates.gateway.snapshot.options import Options, options_of
from plates.gateway.snapshot.serving import is_read

MOSCOW = Plate("B840CK197", [0, 0, 10, 5], 0.63, 0.71)
NO_REGION = Plate("A001AA88", [0, 0, 10, 5], 0.9, 0.8)  # 88: withdrawn, in no region's list


@pytest.mark.parametrize(
    "config, mmc, expected",
    [
        (None, None, Options()),
        ("", "False", Options()),  # Home Assistant's integration sends mmc as Python writes False
        ("{}", "false", Options()),
        ('{"threshold_d": 0.2, "threshold_o": 0.5}', "0", Options(0.2, 0.5)),
        ('{"region": "strict", "detection_rule": "strict", "mode": "fast"}', None, Options(region_strict=True)),
        ('{"detection_mode": "plate", "text_formats": ["[a-z]+"], "unknown": 1}', None, Options()),
        ('{"threshold_d": null, "detection_mode": null, "region": null}', None, Options()),
        ('{"detection_mode": "", "region": false, "detection_rule": "none", "mode": "regular"}', None, Options()),
    ],
)
def test_what_applies_is_honoured_and_what_changes_nothing_is_accepted(config, mmc, expected):
    assert options_of(config, mmc) == expected


@pytest.mark.parametrize(
    "config, mmc, code, named",
    [
        (None, "true", "unsupported_option", "mmc=true"),
        (None, "True", "unsupported_option", "mmc=true"),
        ('{"detection_mode": "vehicle"}', None, "unsupported_option", "detection_mode 'vehicle'"),
        (None, "maybe", "invalid_config", "mmc must be true or false"),
        ("{not json", None, "invalid_config", "config is not JSON"),
        ("[1, 2]", None, "invalid_config", "config must be a JSON object"),
        ('{"threshold_d": 2}', None, "invalid_config", "threshold_d must be a number from 0 to 1"),
        ('{"threshold_o": "high"}', None, "invalid_config", "threshold_o must be a number from 0 to 1"),
        ('{"threshold_o": true}', None, "invalid_config", "threshold_o"),
        ('{"region": "loose"}', None, "invalid_config", "region must be strict"),
        # As JSON compares them, and the schema's enums with them: 0 is not false, nor 1 true.
        ('{"region": 0}', None, "invalid_config", "region must be strict"),
        ('{"mode": 1}', None, "invalid_config", "mode must be fast or regular"),
        ('{"detection_mode": 0}', None, "unsupported_option", "detection_mode '0'"),
        ("{" + " " * 5000 + "}", None, "invalid_config", "longer than"),
    ],
)
def test_what_cannot_be_served_or_read_is_a_400_naming_it(config, mmc, code, named):
    with pytest.raises(Refusal) as refused:
        options_of(config, mmc)
    assert (refused.value.status, refused.value.code) == (400, code)
    assert named in refused.value.message


def test_threshold_o_and_region_strict_answer_a_plate_as_not_read():
    assert is_read(MOSCOW, Options()) and is_read(NO_REGION, Options())
    assert not is_read(MOSCOW, Options(threshold_o=0.8)) and is_read(NO_REGION, Options(threshold_o=0.8))
    assert is_read(MOSCOW, Options(region_strict=True)) and not is_read(NO_REGION, Options(region_strict=True))
    assert not is_read(Plate(None, [0, 0, 1, 1], 0.9, 0.0), Options())
