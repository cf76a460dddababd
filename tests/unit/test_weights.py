import pytest

from plates.build.paths import PROJECT_ROOT, shared_dir
from plates.build.quantization import QUANTIZED_FROM
from plates.build.weights import WEIGHT_FILES, find_weights, search_path
from plates.detection.detector import INT8_FILE
from plates.detection.onnx_detector import onnx_metadata
from plates.exceptions import WeightsError


def test_search_path_puts_the_environment_first(monkeypatch, tmp_path):
    monkeypatch.delenv("PLATES_SHARED_DIR", raising=False)
    monkeypatch.setenv("PLATES_WEIGHTS_DIR", str(tmp_path))
    places = search_path()
    assert places == [tmp_path, PROJECT_ROOT / "weights", PROJECT_ROOT.parent / "shared" / "weights"]


def test_search_path_looks_in_the_shared_folder_the_environment_names(monkeypatch, tmp_path):
    """A checkout that is not beside shared/ finds its weights (and its typeface and data: shared_dir) there."""
    monkeypatch.delenv("PLATES_WEIGHTS_DIR", raising=False)
    monkeypatch.setenv("PLATES_SHARED_DIR", str(tmp_path))
    assert shared_dir() == tmp_path
    assert search_path() == [PROJECT_ROOT / "weights", tmp_path / "weights"]


def test_find_weights_names_file_places_and_download_address(monkeypatch, tmp_path):
    with pytest.raises(WeightsError) as error:
        find_weights("lprnet.pth", tmp_path)
    message = str(error.value)
    assert "lprnet.pth not found" in message and str(tmp_path) in message
    assert WEIGHT_FILES["lprnet.pth"].source in message


def test_find_weights_rejects_a_file_with_the_wrong_checksum(tmp_path):
    (tmp_path / "stn.pth").write_bytes(b"not the checkpoint")
    with pytest.raises(WeightsError, match=r"stn.pth has SHA-256 [0-9a-f]{64}, expected 4b42329b"):
        find_weights("stn.pth", tmp_path)


def test_find_weights_accepts_the_shared_checkpoints(samples):
    shared_weights = samples.parent.parent / "weights"
    assert find_weights("stn.pth", shared_weights) == shared_weights / "stn.pth"


def test_weights_readme_gives_every_recorded_checksum():
    readme = (PROJECT_ROOT / "weights" / "README.md").read_text()
    for weight in WEIGHT_FILES.values():
        assert weight.sha256 in readme, weight.name


def test_the_committed_int8_detector_is_made_from_the_committed_detector():
    # A new plate_detector.pt needs plate_detector.int8.onnx made again (convert/quantize_detector.py), or the service
    # would run the old detector's INT8 copy, the one its config serves on the CPU.
    made_from = onnx_metadata(find_weights(INT8_FILE))[QUANTIZED_FROM]
    assert made_from == WEIGHT_FILES["plate_detector.pt"].sha256, "run convert/quantize_detector.py"
