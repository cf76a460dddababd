import json

import pytest

from plates.build.paths import DEFAULT_REPOSITORY
from plates.exceptions import ModelConfigError
from plates.inference.model_config import (
    ModelConfig,
    float_list,
    nonnegative_int,
    nonnegative_int_list,
    positive_int,
    positive_int_list,
    read_config,
    unit_float,
    unit_float_list,
)
from plates.inference.pipeline import RecognitionSettings

CONFIG = {
    "name": "yolo",
    "input": [{"name": "input__0", "data_type": "TYPE_UINT8", "dims": ["-1", "-1", "3"]}],
    "parameters": {"imgsz": {"string_value": "640"}, "conf": {"string_value": "1.5"}},
}


def test_parameter_converts_and_defaults():
    config = ModelConfig(json.dumps(CONFIG))
    assert config.parameter("imgsz", positive_int) == 640
    assert config.parameter("iou", unit_float, 0.5) == 0.5


def test_parameter_errors_name_model_and_field():
    config = ModelConfig(CONFIG)
    with pytest.raises(ModelConfigError, match=r"model 'yolo': parameter 'conf' = '1.5' is not a valid unit_float"):
        config.parameter("conf", unit_float)
    with pytest.raises(ModelConfigError, match=r"model 'yolo': parameter 'weights' is required"):
        config.parameter("weights", str)


def test_tensor_accepts_matching_and_names_mismatches():
    config = ModelConfig(CONFIG)
    config.tensor("input", "input__0", "TYPE_UINT8", [-1, -1, 3])
    with pytest.raises(ModelConfigError, match=r"input 'input__0' must be TYPE_FP32, config says TYPE_UINT8"):
        config.tensor("input", "input__0", "TYPE_FP32", [-1, -1, 3])
    with pytest.raises(ModelConfigError, match=r"must have dims \[3, -1, -1\]"):
        config.tensor("input", "input__0", "TYPE_UINT8", [3, -1, -1])
    with pytest.raises(ModelConfigError, match=r"output 'output__0' is missing"):
        config.tensor("output", "output__0", "TYPE_FP32", [-1])


def test_float_list_reads_space_separated_numbers_and_refuses_none():
    assert float_list("0.1 0.2  0.3") == [0.1, 0.2, 0.3]
    with pytest.raises(ValueError, match="at least one"):
        float_list("  ")


def test_int_and_unit_lists_check_every_value():
    assert positive_int_list("480 800") == [480, 800]
    assert unit_float_list("0.2 0.5") == [0.2, 0.5]
    for convert, text in ((positive_int_list, "480 0"), (unit_float_list, "0.2 1.5"), (positive_int_list, " ")):
        with pytest.raises(ValueError):
            convert(text)


def test_nonnegative_ints_take_zero_and_refuse_negatives():
    assert nonnegative_int("0") == 0 and nonnegative_int_list("2 8") == [2, 8] and nonnegative_int_list("") == []
    with pytest.raises(ValueError, match="must be 0 or more"):
        nonnegative_int_list("2 -1")


def test_read_config_gives_a_config_pbtxt_as_triton_hands_it_to_initialize():
    config = read_config(DEFAULT_REPOSITORY / "plate_recognition" / "config.pbtxt")
    assert config.name == "plate_recognition"
    config.tensor("input", "image_bytes", "TYPE_STRING", [1])
    assert config.parameter("candidates", positive_int) == 3


def test_read_config_names_the_file_and_the_line_it_cannot_parse(tmp_path):
    bad = tmp_path / "config.pbtxt"
    bad.write_text('name: "yolo"\nmax_batch_size: "many"\n')
    with pytest.raises(ModelConfigError, match=r"config.pbtxt: 2:"):
        read_config(bad)


def test_recognition_settings_read_the_first_look_and_read_every_cut_without_one():
    config = read_config(DEFAULT_REPOSITORY / "plate_recognition" / "config.pbtxt")
    settings = RecognitionSettings.from_config(config)
    assert settings.first_look is not None and settings.first_look.cuts and 0 < settings.first_look.min_score < 1
    config.raw["parameters"]["first_look_cuts"] = {"string_value": ""}
    assert RecognitionSettings.from_config(config).first_look is None
