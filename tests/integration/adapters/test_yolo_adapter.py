import json
import shutil

import cv2
import numpy as np
import pytest
from model_adapters import REPOSITORY, config_json

from plates.build.repository import export_detector
from plates.build.weights import find_weights
from plates.detection.detector import INT8_FILE, Detections, DetectorSettings
from plates.evaluation.scoring import same_boxes
from plates.inference.model_config import float_list, positive_int_list, unit_float_list, yes_no
from plates.recognition.crops import SERVED_VARIANTS, variants


class Request:
    def __init__(self, inputs):
        self.inputs = inputs


@pytest.fixture(scope="module")
def yolo_repository(tmp_path_factory):
    """A copy of the yolo model folder with the project's detector in it, as PyTorch and as its ONNX export."""
    folder = tmp_path_factory.mktemp("yolo")
    (folder / "1").mkdir()
    shutil.copyfile(find_weights("plate_detector.pt"), folder / "1" / "plate_detector.pt")
    export_detector(folder / "1" / "plate_detector.pt")
    shutil.copyfile(find_weights(INT8_FILE), folder / "1" / INT8_FILE)
    return folder


def load_yolo(load_adapter, folder, config=None, instance_kind="CPU"):
    config_path = REPOSITORY / "yolo" / "config.pbtxt"
    return load_adapter(
        REPOSITORY / "yolo" / "1" / "model.py", config_path, folder, config_override=config, instance_kind=instance_kind
    )


def with_format(format, precision="auto"):  # the served precision, which the GPU build keeps with torch
    config = json.loads(config_json(REPOSITORY / "yolo" / "config.pbtxt"))
    config["parameters"]["format"] = {"string_value": format}
    config["parameters"]["precision"] = {"string_value": precision}
    return json.dumps(config)


def outputs_of(response):
    return {t.name(): t.numpy() for t in response.output_tensors}


@pytest.mark.parametrize("format", ["openvino", "onnx", "torch"])
def test_yolo_answers_crops_boxes_and_scores_that_agree(load_adapter, pb_utils, yolo_repository, samples, format):
    import cv2

    model = load_yolo(load_adapter, yolo_repository, with_format(format))
    photos = [cv2.imread(str(samples / name)) for name in ("car.jpg", "cat.jpeg")]
    responses = model.execute([Request([pb_utils.Tensor("input__0", photo)]) for photo in photos])
    car, cat = (outputs_of(r) for r in responses)
    assert len(car["output__1"]) >= 1 and len(cat["output__1"]) == 0
    for outputs in (car, cat):
        # One of each for every way to read a plate: each plate as one row, and a box of a square shape as two rows
        # too, right after.
        plate_of, rows = outputs["output__4"], outputs["output__3"]
        ways = len(plate_of)
        assert outputs["output__1"].shape == (ways, 4) and outputs["output__2"].shape == (ways,)
        firsts = np.diff(plate_of, prepend=-1) > 0
        assert plate_of[firsts].tolist() == list(range(firsts.sum())) and rows[firsts].tolist() == [1] * firsts.sum()
        width = 94 * int(rows.max(initial=1))
        assert outputs["output__0"].shape == (len(SERVED_VARIANTS) * ways, 3, 24, width)
    # car.jpg's one-line plate, one way: the committed detector's class says how many rows a plate has, and the
    # served two_line_aspect reads no box as two rows besides.
    assert car["output__3"].tolist() == [1] and car["output__4"].tolist() == [0]


def test_served_crop_variants_are_the_measured_defaults():
    # The accuracy figures in docs/recognizer.md and the README are measured with SERVED_VARIANTS.
    parameters = json.loads(config_json(REPOSITORY / "yolo" / "config.pbtxt"))["parameters"]
    pads, margins = (
        float_list(parameters[key]["string_value"]) for key in ("crop_vertical_pads", "crop_horizontal_margins")
    )
    assert variants(pads, margins) == SERVED_VARIANTS


def test_served_detector_settings_are_the_measured_defaults():
    # The detection figures in plates.detection.detector and the README are measured with DetectorSettings' defaults.
    parameters = json.loads(config_json(REPOSITORY / "yolo" / "config.pbtxt"))["parameters"]
    defaults = DetectorSettings()
    assert tuple(positive_int_list(parameters["imgsz"]["string_value"])) == defaults.imgsz
    assert tuple(unit_float_list(parameters["conf"]["string_value"])) == defaults.conf
    assert int(parameters["second_look_imgsz"]["string_value"]) == defaults.second_look_imgsz
    assert float(parameters["second_look_conf"]["string_value"]) == defaults.second_look_conf
    assert float(parameters["second_look_width"]["string_value"]) == defaults.second_look_width
    assert float(parameters["second_look_fill"]["string_value"]) == defaults.second_look_fill
    assert float(parameters["second_look_hint"]["string_value"]) == defaults.second_look_hint
    assert int(parameters["close_look_imgsz"]["string_value"]) == defaults.close_look_imgsz
    assert float(parameters["close_look_conf"]["string_value"]) == defaults.close_look_conf
    assert float(parameters["close_look_hint"]["string_value"]) == defaults.close_look_hint
    assert float(parameters["close_look_window"]["string_value"]) == defaults.close_look_window
    assert int(parameters["close_look_doubts"]["string_value"]) == defaults.close_look_doubts
    assert yes_no(parameters["whole_plates"]["string_value"]) == defaults.whole_plates


def test_yolo_refuses_a_config_with_a_threshold_per_size_missing(load_adapter, yolo_repository):
    config = json.loads(config_json(REPOSITORY / "yolo" / "config.pbtxt"))
    config["parameters"]["imgsz"] = {"string_value": "480 640 800"}
    config["parameters"]["conf"] = {"string_value": "0.2 0.5"}
    with pytest.raises(Exception, match=r"model 'yolo': parameter 'conf' needs one value per 'imgsz'"):
        load_yolo(load_adapter, yolo_repository, json.dumps(config))


def test_yolo_rejects_a_bad_image_as_invalid_arg_and_answers_the_rest(load_adapter, pb_utils, yolo_repository):
    model = load_yolo(load_adapter, yolo_repository)
    bad = Request([pb_utils.Tensor("input__0", np.zeros((10, 10, 3), np.float32))])
    good = Request([pb_utils.Tensor("input__0", np.zeros((10, 10, 3), np.uint8))])
    bad_response, good_response = model.execute([bad, good])
    assert bad_response.error().code() == pb_utils.TritonError.INVALID_ARG
    assert "yolo: input__0 must be UINT8, got float32" in bad_response.error().message()
    assert not good_response.has_error()


def test_yolo_reads_a_file_as_its_pixels_and_names_one_it_cannot_read(load_adapter, pb_utils, yolo_repository, samples):
    import cv2

    model = load_yolo(load_adapter, yolo_repository)
    data = (samples / "car.jpg").read_bytes()
    png = bytearray(cv2.imencode(".png", cv2.imread(str(samples / "car.jpg")))[1].tobytes())
    png[len(png) // 2 : len(png) // 2 + 200] = bytes(200)  # a header that reads, pixel data that does not
    as_file, as_pixels, corrupt = model.execute(
        [
            Request([pb_utils.Tensor("image_bytes", np.array([data], dtype=np.object_))]),
            Request([pb_utils.Tensor("input__0", cv2.imread(str(samples / "car.jpg")))]),
            Request([pb_utils.Tensor("image_bytes", np.array([bytes(png)], dtype=np.object_))]),
        ]
    )
    file_outputs, pixel_outputs = outputs_of(as_file), outputs_of(as_pixels)
    assert len(file_outputs["output__1"]) >= 1
    for name in file_outputs:
        np.testing.assert_array_equal(file_outputs[name], pixel_outputs[name])
    assert corrupt.error().code() == pb_utils.TritonError.INVALID_ARG
    assert "yolo: image_bytes is a corrupt or truncated PNG" in corrupt.error().message()


@pytest.mark.parametrize(
    "key, value, kind",
    [
        ("conf", "high", "unit_float_list"),
        ("second_look_imgsz", "-256", "nonnegative_int"),
        ("second_look_width", "1.5", "unit_float"),
        ("close_look_conf", "2", "unit_float"),
        ("whole_plates", "true", "yes_no"),
    ],
)
def test_yolo_refuses_a_config_with_an_invalid_setting(load_adapter, yolo_repository, key, value, kind):
    config = json.loads(config_json(REPOSITORY / "yolo" / "config.pbtxt"))
    config["parameters"][key] = {"string_value": value}
    with pytest.raises(Exception, match=rf"model 'yolo': parameter '{key}' = '{value}' is not a valid {kind}"):
        load_yolo(load_adapter, yolo_repository, json.dumps(config))


def test_yolo_refuses_a_second_look_at_nothing(load_adapter, yolo_repository):
    config = json.loads(config_json(REPOSITORY / "yolo" / "config.pbtxt"))
    config["parameters"]["second_look_fill"] = {"string_value": "0"}
    refusal = r"model 'yolo': parameter 'second_look_fill' = 0.0 must be above 0 and at most 1"
    with pytest.raises(Exception, match=refusal):
        load_yolo(load_adapter, yolo_repository, json.dumps(config))


def test_yolo_refuses_a_format_the_build_does_not_make(load_adapter, yolo_repository):
    refusal = r"model 'yolo': parameter 'format' = 'engine' is not a valid detector_format"
    with pytest.raises(Exception, match=refusal):
        load_yolo(load_adapter, yolo_repository, with_format("engine"))


@pytest.mark.parametrize("format", ["openvino", "onnx"])
def test_yolo_refuses_a_cpu_runtime_on_a_gpu_instance(load_adapter, yolo_repository, format):
    refusal = rf"model 'yolo': format '{format}' runs on the CPU only; set parameter 'format'"
    with pytest.raises(Exception, match=refusal):
        load_yolo(load_adapter, yolo_repository, with_format(format), instance_kind="GPU")


def test_yolo_refuses_a_precision_its_runtime_does_not_have(load_adapter, yolo_repository):
    refusal = r"model 'yolo': parameter 'precision' = 'f16' is not a valid inference_precision: must be one of f32"
    with pytest.raises(Exception, match=refusal):
        load_yolo(load_adapter, yolo_repository, with_format("openvino", "f16"))
    refusal = r"model 'yolo': precision 'bf16' is for format 'openvino' only; format 'onnx' runs f32"
    with pytest.raises(Exception, match=refusal):
        load_yolo(load_adapter, yolo_repository, with_format("onnx", "bf16"))
    refusal = r"model 'yolo': precision 'int8' is for format openvino or onnx; format 'torch' runs f32"
    with pytest.raises(Exception, match=refusal):
        load_yolo(load_adapter, yolo_repository, with_format("torch", "int8"))


@pytest.mark.parametrize("format", ["openvino", "onnx"])
def test_yolo_at_int8_runs_the_quantized_file_and_finds_the_plates_the_float_one_finds(
    load_adapter, pb_utils, yolo_repository, samples, format
):
    import cv2

    car = cv2.imread(str(samples / "car.jpg"))
    found = {}
    for precision in ("f32", "int8"):
        model = load_yolo(load_adapter, yolo_repository, with_format(format, precision))
        outputs = outputs_of(model.execute([Request([pb_utils.Tensor("input__0", car)])])[0])
        found[precision] = Detections(outputs["output__1"], outputs["output__2"])
    assert model.model.detector.precision == "int8"
    # car.jpg's 12 px tall plate: a pixel up or down is IoU 0.9 (docs/performance.md: INT8 reads every set as well)
    matched, in_f32, in_int8, _ = same_boxes(found["f32"], found["int8"], threshold=0.8)
    assert matched == in_f32 == in_int8 >= 1, found
    (yolo_repository / "1" / INT8_FILE).rename(yolo_repository / "gone")
    try:
        with pytest.raises(Exception, match=rf"model 'yolo': weights .*{INT8_FILE} not found"):
            load_yolo(load_adapter, yolo_repository, with_format(format, "int8"))
    finally:
        (yolo_repository / "gone").rename(yolo_repository / "1" / INT8_FILE)


def test_served_detector_runs_on_openvino_in_int8():
    # docs/performance.md's figures are measured with OpenVINO running the INT8 file; the GPU build sets torch, and
    # with it "auto" (plates.build.repository).
    parameters = json.loads(config_json(REPOSITORY / "yolo" / "config.pbtxt"))["parameters"]
    assert parameters["format"]["string_value"] == "openvino"
    assert parameters["precision"]["string_value"] == "int8"


def with_layout(layout, aspect="2.5", level_below="0"):
    config = json.loads(config_json(REPOSITORY / "yolo" / "config.pbtxt"))
    config["parameters"]["two_line_layout"] = {"string_value": layout}
    config["parameters"]["two_line_aspect"] = {"string_value": aspect}
    config["parameters"]["level_below"] = {"string_value": level_below}
    return json.dumps(config)


def test_yolo_refuses_a_two_line_layout_it_does_not_know(load_adapter, yolo_repository):
    refusal = r"model 'yolo': parameter 'two_line_layout' = 'stacked' is not a valid two_line_layout: must be one of"
    with pytest.raises(Exception, match=refusal):
        load_yolo(load_adapter, yolo_repository, with_layout("stacked"))


@pytest.mark.parametrize(("layout", "width", "rows"), [("side-by-side", 94, [1, 1]), ("rows", 188, [1, 2])])
def test_yolo_cuts_a_two_line_plate_in_the_layout_its_config_names(load_adapter, yolo_repository, layout, width, rows):
    from plates.detection.detector import Detections

    adapter = load_yolo(load_adapter, yolo_repository, with_layout(layout))
    pixels = np.random.default_rng(0).integers(0, 256, (300, 400, 3), dtype=np.uint8)
    boxes = np.array([[10, 10, 150, 50], [200, 100, 300, 170]], np.float32)
    found = Detections(boxes, np.array([0.9, 0.8], np.float32), np.array([1, 2]))
    outputs = adapter.model.cut(pixels, found)
    assert outputs["output__0"].shape == (2 * len(SERVED_VARIANTS), 3, 24, width)
    assert outputs["output__3"].tolist() == rows


@pytest.mark.parametrize(("aspect", "plate_of", "rows"), [("3", [0, 1, 1, 1], [1, 1, 2, 2]), ("0", [0, 1], [1, 1])])
def test_yolo_cuts_a_square_box_of_a_one_class_detector_both_ways(
    load_adapter, yolo_repository, aspect, plate_of, rows
):
    from plates.detection.detector import Detections

    adapter = load_yolo(load_adapter, yolo_repository, with_layout("rows", aspect))
    pixels = np.random.default_rng(0).integers(0, 256, (300, 400, 3), dtype=np.uint8)
    boxes = np.array([[10, 10, 150, 50], [200, 100, 300, 140]], np.float32)  # 3.5 and 2.5 times as wide as tall
    outputs = adapter.model.cut(pixels, Detections(boxes, np.array([0.9, 0.8], np.float32)))
    assert outputs["output__4"].tolist() == plate_of and outputs["output__3"].tolist() == rows
    assert outputs["output__2"].tolist() == pytest.approx([0.9, 0.8, 0.8, 0.8][: len(plate_of)])
    crops = outputs["output__0"].numpy()
    assert crops.shape[0] == len(SERVED_VARIANTS) * len(plate_of)
    if aspect != "0":  # the second box read as one row, and as two from it grown upward and downward
        assert outputs["output__1"][2:, [0, 2]].tolist() == [[200, 300]] * 2
        assert outputs["output__1"][2, 1] < 100 and outputs["output__1"][3, 3] > 140
        one, two = crops[len(SERVED_VARIANTS)], crops[2 * len(SERVED_VARIANTS)]
        assert np.any(one[..., :94] != two[..., :94]) and not np.any(one[..., 94:]) and np.any(two[..., 94:])


def test_yolo_cuts_a_box_of_a_tilted_plates_shape_upright_and_levelled(load_adapter, yolo_repository):
    from plates.detection.detector import Detections

    adapter = load_yolo(load_adapter, yolo_repository, with_layout("rows", "0", "3"))
    # A grey frame with a bright band climbing through the second box: a tilted plate for the tilt to find.
    pixels = np.full((300, 400, 3), 60, np.uint8)
    cv2.line(pixels, (205, 135), (295, 105), (230, 230, 230), 14)
    boxes = np.array([[10, 10, 150, 50], [200, 100, 300, 140]], np.float32)  # 3.5 and 2.5 times as wide as tall
    outputs = adapter.model.cut(pixels, Detections(boxes, np.array([0.9, 0.8], np.float32)))
    assert outputs["output__4"].tolist() == [0, 1, 1] and outputs["output__3"].tolist() == [1, 1, 1]
    assert outputs["output__1"][1].tolist() == outputs["output__1"][2].tolist() == boxes[1].tolist()
    crops = outputs["output__0"].numpy()
    assert not np.array_equal(crops[len(SERVED_VARIANTS)], crops[2 * len(SERVED_VARIANTS)])


def test_served_levelling_is_the_measured_one():
    # docs/recognizer.md's figures for levelling: boxes under 3 times as wide as tall, their levelled way read where
    # the upright one reads under 0.8.
    yolo = json.loads(config_json(REPOSITORY / "yolo" / "config.pbtxt"))["parameters"]
    reading = json.loads(config_json(REPOSITORY / "plate_recognition" / "config.pbtxt"))["parameters"]
    assert float(yolo["level_below"]["string_value"]) == 3.0
    assert float(reading["other_ways_below"]["string_value"]) == 0.8


def test_yolo_refuses_a_negative_two_line_aspect(load_adapter, yolo_repository):
    with pytest.raises(Exception, match=r"parameter 'two_line_aspect' = '-1'.*must be a number, 0 or more"):
        load_yolo(load_adapter, yolo_repository, with_layout("rows", "-1"))


def test_yolo_counts_where_its_tensors_lie_and_writes_the_counts_when_unloaded(
    load_adapter, pb_utils, yolo_repository, samples, tmp_path, monkeypatch
):
    from plates.inference.tensor_log import LOG_VARIABLE, Crossing, read_log

    monkeypatch.setenv(LOG_VARIABLE, str(tmp_path))
    model = load_yolo(load_adapter, yolo_repository, with_format("torch"))
    data = np.array([(samples / "car.jpg").read_bytes()], dtype=np.object_)
    model.execute([Request([pb_utils.Tensor("image_bytes", data)]), Request([pb_utils.Tensor("image_bytes", data)])])
    assert read_log(tmp_path) == []  # written at unload, not per request
    model.finalize()
    assert read_log(tmp_path) == [
        Crossing("yolo", "decoded", "image_bytes", "cpu", 2),
        Crossing("yolo", "received", "image_bytes", "cpu", 2),
        *(Crossing("yolo", "sent", f"output__{i}", "cpu", 2) for i in range(5)),
    ]
