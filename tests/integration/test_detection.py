import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from plates.detection.detector import DetectorSettings, add_new, merge, postprocess

# car.jpg's plate, as the served detector boxes it.
CAR_PLATE = (94.6, 330.4, 132.5, 343.4)


def test_merge_keeps_one_box_per_plate_across_passes():
    first = (np.array([[10, 10, 50, 20], [100, 100, 140, 110]], np.float32), np.array([0.3, 0.25], np.float32))
    second = (np.array([[11, 10, 51, 21], [200, 10, 240, 20]], np.float32), np.array([0.7, 0.6], np.float32))
    boxes, scores, lines = merge([first[0], second[0]], [first[1], second[1]], [[1, 1], [2, 1]], iou=0.5)
    np.testing.assert_array_equal(scores, np.array([0.7, 0.6, 0.25], np.float32))
    np.testing.assert_array_equal(boxes, [[11, 10, 51, 21], [200, 10, 240, 20], [100, 100, 140, 110]])
    # Across classes too: the plate the first pass saw as one-line and the second as two-line is one plate.
    np.testing.assert_array_equal(lines, [2, 1, 1])


def test_merge_of_empty_passes_is_empty():
    boxes, scores, lines = merge([np.zeros((0, 4))] * 2, [np.zeros(0)] * 2, [np.zeros(0)] * 2, iou=0.5)
    assert boxes.shape == (0, 4) and scores.shape == (0,) and lines.shape == (0,)


def test_settings_need_one_threshold_per_size():
    with pytest.raises(ValueError, match="'conf' needs one value per 'imgsz'"):
        DetectorSettings(imgsz=(480, 800), conf=(0.2,))


def test_a_second_look_needs_some_of_its_frame_filled():
    with pytest.raises(ValueError, match="'second_look_fill' = 0 must be above 0 and at most 1"):
        DetectorSettings(second_look_fill=0)


@pytest.mark.parametrize(
    "boxes, expected",
    [
        (np.zeros((0, 4)), True),  # no plate found
        ([[10, 10, 160, 40], [500, 300, 540, 310]], False),  # 150 px: 0.15 of the longer side
        ([[10, 10, 40, 20], [500, 200, 760, 260]], True),  # 260 px: 0.26
    ],
    ids=["none", "small", "one large"],
)
def test_a_second_look_goes_to_photos_with_no_plate_or_a_large_one(boxes, expected):
    settings = DetectorSettings(second_look_imgsz=256, second_look_width=0.2, second_look_hint=0)
    assert settings.wants_second_look(np.asarray(boxes, np.float32), width=1000, height=600) is expected
    assert not DetectorSettings(second_look_imgsz=0).wants_second_look(np.zeros((0, 4)), width=1000, height=600)


@pytest.mark.parametrize(
    "boxes, hints, expected",
    [
        (np.zeros((0, 4)), np.zeros((0, 4)), False),  # nothing at all: a photo with no plate
        (np.zeros((0, 4)), [[10, 10, 200, 40]], False),  # a doubtful box 190 px wide: 0.19 of the longer side
        (np.zeros((0, 4)), [[10, 10, 200, 40], [0, 100, 700, 500]], True),  # one 700 px wide: a plate filling it
        ([[10, 10, 40, 20]], [[0, 100, 700, 500]], False),  # a plate found: the wide doubt is something else
        ([[0, 100, 700, 500]], np.zeros((0, 4)), False),  # a large plate found
    ],
    ids=["nothing", "narrow hint", "wide hint", "found and wide hint", "found large"],
)
def test_a_hinted_second_look_goes_only_to_photos_with_no_plate_and_a_wide_doubtful_box(boxes, hints, expected):
    settings = DetectorSettings(second_look_imgsz=608, second_look_width=0.3, second_look_hint=0.05)
    wants = settings.wants_second_look(np.asarray(boxes, np.float32), 1000, 600, np.asarray(hints, np.float32))
    assert wants is expected


def test_a_two_line_plate_filling_the_photo_is_found_by_a_look_that_shrinks_it(samples):
    """5719KB42 (labels/, a test plate): a 480 px square photo the plate fills edge to edge, which the first pass
    scores 0.1 and the second, the photo shrunk to 0.6 of its frame, finds; so does a close look at that doubt, whose
    window, three times the doubt's width, shrinks it to a third."""
    import cv2

    from plates.build.paths import DEFAULT_REPOSITORY
    from plates.detection.detector import PlateDetector, detector_file

    photo = samples.parent / "rfplates/scenes/images/10-12-10-Cam2_jpg.rf.a5e636c98734928aa72b9473180397fe.jpg"
    image = cv2.imread(str(photo))
    truth = np.array([8.96, 92.61, 476.46, 417.88], np.float32)
    served = DEFAULT_REPOSITORY / "yolo" / "1" / detector_file("openvino", "int8")

    def detector(settings: DetectorSettings) -> PlateDetector:
        return PlateDetector(served, settings=settings, runtime="openvino", precision="int8")

    assert len(detector(DetectorSettings(second_look_imgsz=0, close_look_imgsz=0)).detect(image)) == 0
    closely = DetectorSettings(second_look_imgsz=0, close_look_hint=0.05)  # its doubt is under the served hint
    for settings in (DetectorSettings(), DetectorSettings(close_look_imgsz=0), closely):
        found = detector(settings).detect(image)
        assert len(found) == 1 and iou(found.boxes[0], truth) > 0.8 and found.lines[0] == 2


def test_the_close_look_goes_to_the_likeliest_doubts_over_its_hint():
    settings = DetectorSettings(close_look_hint=0.05, close_look_doubts=2)
    hints = np.array([[0, 0, 10, 5], [20, 0, 30, 5], [40, 0, 50, 5], [60, 0, 70, 5]], np.float32)
    doubts = settings.doubts(hints, np.array([0.03, 0.12, 0.06, 0.18]))
    np.testing.assert_array_equal(doubts, hints[[3, 1]])
    assert len(settings.doubts(None, None)) == 0 and len(settings.doubts(hints[:1], np.array([0.03]))) == 0
    assert len(DetectorSettings(close_look_imgsz=0).doubts(hints, np.array([0.1, 0.1, 0.1, 0.1]))) == 0
    with pytest.raises(ValueError, match="'close_look_window' = 0.5 must be at least 1"):
        DetectorSettings(close_look_window=0.5)


def test_the_looks_that_take_hints_ask_the_first_passes_for_the_lowest_of_theirs():
    assert DetectorSettings(second_look_hint=0.08, close_look_hint=0.05).hint_floor == 0.05
    assert DetectorSettings(second_look_hint=0.08, close_look_imgsz=0).hint_floor == 0.08
    assert DetectorSettings(second_look_imgsz=0, close_look_imgsz=0).hint_floor == 0.0
    # A second look that takes hints counts only those over its own.
    settings = DetectorSettings(second_look_width=0.3, second_look_hint=0.08, close_look_hint=0.05)
    wide = np.array([[0, 100, 700, 500]], np.float32)
    assert not settings.wants_second_look(np.zeros((0, 4)), 1000, 600, wide, np.array([0.06]))
    assert settings.wants_second_look(np.zeros((0, 4)), 1000, 600, wide, np.array([0.09]))


def test_the_close_look_adds_only_plates_no_box_found_overlaps():
    found = (np.array([[10, 10, 50, 20]], np.float32), np.array([0.6], np.float32), np.array([1]))
    # The same plate scored higher and boxed a little apart, and another plate the first passes missed.
    more = (np.array([[12, 10, 52, 21], [300, 200, 340, 212]], np.float32), np.array([0.9, 0.7]), np.array([1, 2]))
    boxes, scores, lines = add_new(found, more, iou=0.5)
    np.testing.assert_array_equal(boxes, [[300, 200, 340, 212], [10, 10, 50, 20]])
    np.testing.assert_allclose(scores, [0.7, 0.6])
    np.testing.assert_array_equal(lines, [2, 1])
    nothing = (np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros(0, np.int64))
    assert len(add_new(nothing, more, iou=0.5)[0]) == 2 and len(add_new(found, nothing, iou=0.5)[0]) == 1


def test_a_dim_plate_the_first_pass_doubts_is_found_by_the_close_look_alone(samples):
    """C565CY77 (labels/, a test plate): 70 px wide at dusk in a 1280 px photo, which the first pass at 608 scores
    0.18, under its conf; the close look's window around that doubt finds it, boxed where the photo holds it."""
    import cv2

    from plates.build.paths import DEFAULT_REPOSITORY
    from plates.detection.detector import PlateDetector, detector_file

    photo = samples.parent / "rfplates/scenes/images/test_43_jpg.rf.753b63889fcd30d3e3b20d7810036cd5.jpg"
    image = cv2.imread(str(photo))
    truth = np.array([1036.0, 473.0, 1105.0, 488.0], np.float32)
    served = DEFAULT_REPOSITORY / "yolo" / "1" / detector_file("openvino", "int8")

    def found(settings: DetectorSettings) -> list[float]:
        detections = PlateDetector(served, settings=settings, runtime="openvino", precision="int8").detect(image)
        return [iou(box, truth) for box in detections.boxes]

    assert max(found(DetectorSettings(close_look_imgsz=0)), default=0.0) < 0.5
    assert max(found(DetectorSettings())) > 0.7


def car_close_up(samples, share: float = 0.45):
    """car.jpg cut to a 4:3 window the plate fills `share` of the width of, and the plate's box in it."""
    import cv2

    image = cv2.imread(str(samples / "car.jpg"))
    x1, y1, x2, y2 = CAR_PLATE
    width = (x2 - x1) / share
    left, top = round((x1 + x2 - width) / 2), round((y1 + y2 - width * 0.75) / 2)
    window = image[top : top + round(width * 0.75), left : left + round(width)]
    return window, np.array([x1 - left, y1 - top, x2 - left, y2 - top], np.float32)


def iou(a: np.ndarray, b: np.ndarray) -> float:
    inter = max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def test_a_close_up_is_found_at_608_and_the_second_look_boxes_it_once_in_the_photos_pixels(samples):
    from plates.build.paths import DEFAULT_REPOSITORY
    from plates.detection.detector import PlateDetector

    window, truth = car_close_up(samples)
    onnx = DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx"
    served = PlateDetector(onnx, settings=DetectorSettings()).detect(window)
    # Sent to the second look as a large plate found (no hint): boxed once, not twice.
    second = PlateDetector(onnx, settings=DetectorSettings(second_look_imgsz=256, second_look_hint=0)).detect(window)
    # The photo shrunk to half of a gray frame: its box comes back in the photo's pixels.
    settings = DetectorSettings(second_look_imgsz=320, second_look_fill=0.5, second_look_hint=0)
    shrunk = PlateDetector(onnx, settings=settings).detect(window)
    for detections in (served, second, shrunk):
        assert len(detections) == 1 and iou(detections.boxes[0], truth) > 0.7


def test_postprocess_clips_drops_tiny_boxes_and_sorts_by_score():
    boxes = np.array([[-5, 10, 50, 30], [10, 10, 11, 30], [60, 20, 120, 200]], np.float32)
    scores = np.array([0.4, 0.9, 0.8], np.float32)
    detections = postprocess(boxes, scores, width=100, height=100, lines=np.array([1, 1, 2]))
    np.testing.assert_array_equal(detections.boxes, [[60, 20, 100, 100], [0, 10, 50, 30]])
    np.testing.assert_array_equal(detections.scores, np.array([0.8, 0.4], np.float32))
    np.testing.assert_array_equal(detections.lines, [2, 1])


def test_postprocess_of_nothing_is_empty_with_the_right_shapes():
    detections = postprocess(np.zeros((0, 4)), np.zeros(0), width=10, height=10)
    assert detections.boxes.shape == (0, 4) and detections.scores.shape == (0,) and len(detections) == 0
    assert detections.lines.shape == (0,)


def test_detector_runs_where_ultralytics_runs_dir_is_not_writable(tmp_path, samples):
    # As in the image: the process's user cannot write the folder Ultralytics' settings name for its runs.
    # Without PYTEST_CURRENT_TEST: under pytest, Ultralytics puts its runs elsewhere, and the test would pass anyway.
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env["YOLO_CONFIG_DIR"] = str(tmp_path)
    subprocess.run([sys.executable, "-c", "import ultralytics"], env=env, check=True, capture_output=True)
    settings_file = tmp_path / "Ultralytics" / "settings.json"
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    settings = json.loads(settings_file.read_text())
    settings_file.write_text(json.dumps({**settings, "runs_dir": str(blocked / "runs")}))
    script = f"""
import cv2
from plates.detection.detector import PlateDetector
from plates.build.weights import find_weights
detector = PlateDetector(find_weights("plate_detector.pt"))
print(len(detector.detect(cv2.imread({str(samples / "car.jpg")!r}))))
"""
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) >= 1


@pytest.fixture(scope="module")
def both_formats(tmp_path_factory, samples):
    """car.jpg and the first 5 val photos through the detector as PyTorch and as the build's ONNX export, and the
    requirements Ultralytics found unmet on the way (where it would pip-install them at run time)."""
    import shutil

    import cv2
    from ultralytics.engine import exporter
    from ultralytics.nn import autobackend
    from ultralytics.utils.checks import check_requirements

    from plates.build.repository import export_detector
    from plates.build.weights import find_weights
    from plates.detection.detector import PlateDetector
    from plates.evaluation.manifests import load_yolo

    unmet = []

    def check_without_installing(requirements, *args, **kwargs):
        met = check_requirements(requirements, *args, **{**kwargs, "install": False})
        if not met:
            unmet.append(requirements)
        return met

    weights = tmp_path_factory.mktemp("detector") / "plate_detector.pt"
    shutil.copyfile(find_weights("plate_detector.pt"), weights)
    photos = [samples / "car.jpg", *(p.image for p in load_yolo(samples.parent / "detect")[:5])]
    images = [cv2.imread(str(photo)) for photo in photos]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(exporter, "check_requirements", check_without_installing)
        patch.setattr(autobackend, "check_requirements", check_without_installing)
        onnx = PlateDetector(export_detector(weights))
        found = {"torch": [PlateDetector(weights).detect(i) for i in images], "onnx": [onnx.detect(i) for i in images]}
    return photos, found, unmet


def test_onnx_export_finds_the_boxes_pytorch_finds(both_formats):
    from plates.evaluation.scoring import same_boxes

    photos, found, _ = both_formats
    assert sum(map(len, found["torch"])) >= len(photos)  # the comparison is over plates, not over empty photos
    for photo, torch_found, onnx_found in zip(photos, found["torch"], found["onnx"]):
        matched, in_torch, in_onnx, _ = same_boxes(torch_found, onnx_found, threshold=0.9)
        assert matched == in_torch == in_onnx, f"{photo.name}: {matched} of {in_torch} torch, {in_onnx} onnx boxes"


def test_onnx_export_and_runtime_need_nothing_installed_at_run_time(both_formats):
    assert both_formats[2] == [], "Ultralytics would pip-install these: lock them in pyproject.toml"


def test_same_boxes_matches_one_to_one_at_the_threshold():
    from plates.detection.detector import Detections
    from plates.evaluation.scoring import same_boxes

    reference = Detections(np.array([[0, 0, 10, 10], [20, 0, 30, 10]], np.float32), np.array([0.9, 0.8], np.float32))
    shifted = Detections(np.array([[0, 0, 10, 11], [25, 0, 35, 10]], np.float32), np.array([0.9, 0.8], np.float32))
    assert same_boxes(reference, shifted, threshold=0.9) == (1, 2, 2, pytest.approx(10 / 11))
    assert same_boxes(reference, Detections(np.zeros((0, 4), np.float32), np.zeros(0, np.float32))) == (0, 2, 0, 1.0)


def test_detector_format_names_the_runtimes_the_build_makes():
    from plates.detection.detector import detector_format

    assert [detector_format(name) for name in ("openvino", "onnx", "torch")] == ["openvino", "onnx", "torch"]
    with pytest.raises(ValueError, match="must be one of openvino, onnx, torch"):
        detector_format("engine")


def test_the_onnx_detector_runs_on_the_threads_asked_which_sleep_when_idle():
    from plates.build.paths import DEFAULT_REPOSITORY
    from plates.detection.detector import PlateDetector

    detector = PlateDetector(DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx", threads=1)
    options = detector.network.session.session.get_session_options()
    assert options.intra_op_num_threads == 1
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


@pytest.fixture(scope="module")
def onnx_and_openvino(samples):
    """ONNX Runtime's boxes and OpenVINO's, f32 and bf16, on car.jpg and the first 10 val photos."""
    import cv2

    from plates.build.paths import DEFAULT_REPOSITORY
    from plates.detection.detector import PlateDetector
    from plates.evaluation.manifests import load_yolo

    onnx = DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx"
    photos = [samples / "car.jpg", *(p.image for p in load_yolo(samples.parent / "detect")[:10])]
    images = [cv2.imread(str(photo)) for photo in photos]
    detectors = {
        "onnx": PlateDetector(onnx),
        "f32": PlateDetector(onnx, runtime="openvino"),
        "bf16": PlateDetector(onnx, runtime="openvino", precision="bf16"),
    }
    return photos, {name: [detector.detect(image) for image in images] for name, detector in detectors.items()}


def test_openvino_in_f32_finds_onnx_runtimes_boxes_and_scores(onnx_and_openvino):
    photos, found = onnx_and_openvino
    assert sum(map(len, found["onnx"])) >= len(photos)
    for photo, reference, openvino in zip(photos, found["onnx"], found["f32"]):
        assert len(reference) == len(openvino), photo.name
        np.testing.assert_allclose(openvino.boxes, reference.boxes, atol=0.01, err_msg=photo.name)
        np.testing.assert_allclose(openvino.scores, reference.scores, atol=1e-4, err_msg=photo.name)


def test_openvino_in_bf16_finds_the_same_plates(onnx_and_openvino):
    from plates.evaluation.scoring import same_boxes

    photos, found = onnx_and_openvino
    for photo, reference, bf16 in zip(photos, found["onnx"], found["bf16"]):
        matched, in_reference, in_bf16, _ = same_boxes(reference, bf16, threshold=0.9)
        assert matched == in_reference == in_bf16, f"{photo.name}: {matched} of {in_reference}, {in_bf16} in bf16"


def test_the_openvino_detector_runs_at_the_precision_and_on_the_threads_asked():
    from plates.build.paths import DEFAULT_REPOSITORY
    from plates.detection.detector import PlateDetector

    onnx = DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx"
    flags = set(Path("/proc/cpuinfo").read_text().split())
    # bf16 as asked where the CPU has bfloat16 instructions; without AVX-512 OpenVINO has no bf16 kernels and runs
    # f32 (an AMD EPYC with AVX2 alone does); on AVX-512 without them it may emulate bf16, so either stands there.
    ran_as = {
        "f32": {"f32"},
        "bf16": {"bf16"}
        if flags & {"avx512_bf16", "amx_bf16"}
        else {"f32"}
        if "avx512f" not in flags
        else {"f32", "bf16"},
    }
    for precision, expected in ran_as.items():
        detector = PlateDetector(onnx, threads=1, runtime="openvino", precision=precision)
        compiled = detector.network.session.compiled
        assert compiled.get_property("INFERENCE_NUM_THREADS") == 1
        assert compiled.get_property("INFERENCE_PRECISION_HINT").to_string() in expected
        assert detector.precision in expected
    with pytest.raises(ValueError, match="precision 'bf16' is for format 'openvino' only"):
        PlateDetector(onnx, runtime="onnx", precision="bf16")


def test_openvino_compiles_a_shape_of_its_own_on_its_third_photo_for_a_few_shapes_and_runs_the_rest_on_any_shape(
    monkeypatch,
):
    from plates.build.paths import DEFAULT_REPOSITORY
    from plates.detection import openvino_session

    monkeypatch.setattr(openvino_session, "FIXED_SHAPES", 2)
    session = openvino_session.OpenVINOSession(DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx", threads=1)
    any_shape = session.compiled.create_infer_request()
    seen = []
    for height in (64, 96, 64, 64, 96, 96, 128, 128, 128, 64):
        pixels = np.random.default_rng(height).integers(0, 256, (1, height, 160, 3), dtype=np.uint8)
        output = session.infer(pixels)
        session.wait_compiled()
        seen.append(sorted(shape[1] for shape in session.fixed))
        np.testing.assert_allclose(output, any_shape.infer([pixels])[0], atol=1e-3)
    # 64 on its third photo, 96 on its third; 128 never, FIXED_SHAPES being 2; 64 from its own model since.
    assert seen == [[], [], [], [64], [64], [64, 96], [64, 96], [64, 96], [64, 96], [64, 96]]
    for request in session.fixed.values():  # compiled as the session was asked
        assert request.get_compiled_model().get_property("INFERENCE_NUM_THREADS") == 1
        assert request.get_compiled_model().get_property("INFERENCE_PRECISION_HINT").to_string() == "f32"


def test_a_reserved_shape_is_compiled_at_once_beside_the_photo_shapes(monkeypatch):
    from plates.build.paths import DEFAULT_REPOSITORY
    from plates.detection import openvino_session

    monkeypatch.setattr(openvino_session, "FIXED_SHAPES", 1)
    session = openvino_session.OpenVINOSession(DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx", threads=1)
    session.reserve((1, 64, 64, 3))
    session.wait_compiled()
    assert list(session.fixed) == [(1, 64, 64, 3)]  # before any photo of it
    for _ in range(openvino_session.FIXED_ON_SIGHTING):
        session.infer(np.zeros((1, 96, 160, 3), np.uint8))
    session.wait_compiled()
    assert sorted(session.fixed) == [(1, 64, 64, 3), (1, 96, 160, 3)]  # the one photo shape FIXED_SHAPES allows


def test_the_detector_reserves_the_shapes_of_its_close_and_second_looks():
    from plates.build.paths import DEFAULT_REPOSITORY
    from plates.detection.detector import DetectorSettings, PlateDetector

    onnx = DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx"
    detector = PlateDetector(onnx, runtime="openvino", settings=DetectorSettings())
    detector.network.session.wait_compiled()
    assert sorted(detector.network.session.fixed) == [(1, 256, 256, 3), (1, 608, 608, 3)]
    # A second look that letterboxes the photo as it is (fill 1) takes the photo's shape: nothing to reserve.
    assert DetectorSettings(second_look_fill=1.0).one_shape_looks() == (256,)
    assert DetectorSettings(close_look_imgsz=0, second_look_imgsz=0).one_shape_looks() == ()


def test_a_shape_is_compiled_off_the_request_path_and_its_photos_run_meanwhile(monkeypatch):
    # The photo that starts a shape's compiling, and those after it until it is done, are answered at once by the
    # model for any shape: no request waits for a compile (a second in INT8).
    import threading

    from plates.build.paths import DEFAULT_REPOSITORY
    from plates.detection import openvino_session

    session = openvino_session.OpenVINOSession(DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx", threads=1)
    compile_shape, release = session._compile, threading.Event()
    monkeypatch.setattr(session, "_compile", lambda shape: (release.wait(60), compile_shape(shape)))
    pixels = np.random.default_rng(0).integers(0, 256, (1, 64, 160, 3), dtype=np.uint8)
    for _ in range(openvino_session.FIXED_ON_SIGHTING + 2):
        session.infer(pixels)  # returns while the compile waits for `release`
    assert session.fixed == {} and list(session._compiling) == [pixels.shape]
    release.set()
    session.wait_compiled()
    assert list(session.fixed) == [pixels.shape] and session._compiling == {}
    np.testing.assert_allclose(
        session.infer(pixels), session.compiled.create_infer_request().infer([pixels])[0], atol=1e-3
    )


def test_auto_runs_the_detector_in_bf16_where_the_cpu_has_bfloat16_instructions_and_in_f32_elsewhere():
    from plates.build.paths import DEFAULT_REPOSITORY
    from plates.detection.detector import PlateDetector

    flags = set(Path("/proc/cpuinfo").read_text().split())
    native = bool(flags & {"avx512_bf16", "amx_bf16"})
    detector = PlateDetector(
        DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx", runtime="openvino", precision="auto"
    )
    assert detector.precision == ("bf16" if native else "f32")
    assert PlateDetector(DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx").precision == "f32"


def test_openvino_runs_the_detector_without_its_telemetry():
    # OpenVINO's package sends usage data when imported unless the user opted out (plates.detection.openvino_session). A
    # fresh process, in which any use of the telemetry client is recorded; where it is kept from being imported, the
    # client that is recorded is never used.
    script = """
import numpy as np
import openvino_telemetry
import sys
used = []
openvino_telemetry.Telemetry.__init__ = lambda self, *args, **kwargs: used.append(args or kwargs)
del sys.modules["openvino_telemetry"]
from plates.detection.detector import PlateDetector
from plates.build.paths import DEFAULT_REPOSITORY
detector = PlateDetector(DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx", runtime="openvino")
detector.detect(np.zeros((64, 64, 3), np.uint8))
print("telemetry used:", used)
"""
    result = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True, timeout=300)
    assert result.stdout.strip().splitlines()[-1] == "telemetry used: []"


def test_a_process_that_ran_openvino_detectors_survives_ctrl_c(ctrl_c_raises):
    # Two OpenVINO Cores, once freed, left the process to crash on its next SIGINT
    # (plates.detection.openvino_session._core).
    script = """
import gc, signal, threading
import numpy as np
from plates.build.paths import DEFAULT_REPOSITORY
from plates.detection.openvino_session import OpenVINOSession
sessions = [OpenVINOSession(DEFAULT_REPOSITORY / "yolo" / "1" / "plate_detector.onnx", threads=1) for _ in range(2)]
for session in sessions:
    for _ in range(3):  # its third photo of a shape compiles a model for it
        session.infer(np.zeros((1, 64, 64, 3), np.uint8))
    session.wait_compiled()
    assert session.fixed
del sessions, session
gc.collect()
threading.Timer(0.3, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT)).start()
try:
    while not threading.Event().wait(0.5):
        pass
except KeyboardInterrupt:
    print("interrupted")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert (result.returncode, result.stdout.strip()) == (0, "interrupted"), result.stderr[-2000:]
