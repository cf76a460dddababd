import json

import pytest
import torch

from plates.build import repository as export
from plates.build.paths import PROJECT_ROOT
from plates.build.repository import (
    BUILD_RECORD,
    TRACES,
    build_model_repository,
    generated_files,
    is_built,
    model_files,
    out_of_date,
    rebuild,
    set_detector_format,
    set_instance_kind,
    trace_checked,
    write_warmup_files,
)
from plates.build.warmup import PHOTO, bytes_element
from plates.build.weights import WEIGHT_FILES
from plates.exceptions import PlatesError, WeightsError
from plates.inference.model_config import read_config


def copy_sources(tmp_path):
    return export.copy_sources(tmp_path / "model_repository")


def test_set_instance_kind_pins_every_model(tmp_path):
    repository = copy_sources(tmp_path)
    set_instance_kind(repository, "gpu")
    configs = sorted(repository.glob("*/config.pbtxt"))
    assert len(configs) == 5
    for config in configs:
        text = config.read_text()
        assert "kind: KIND_GPU" in text and "kind: KIND_AUTO" not in text


def test_set_detector_format_switches_the_yolo_model_and_nothing_else(tmp_path):
    # PyTorch runs the float weights: the int8 file is the CPU runtimes' (a torch yolo refuses precision int8).
    repository = copy_sources(tmp_path)
    before = (repository / "yolo" / "config.pbtxt").read_text()
    set_detector_format(repository, "torch")
    after = (repository / "yolo" / "config.pbtxt").read_text()
    assert 'key: "format", value: { string_value: "openvino" }' in before
    assert 'key: "precision", value: { string_value: "int8" }' in before
    assert after == before.replace('string_value: "openvino"', 'string_value: "torch"').replace(
        'string_value: "int8"', 'string_value: "auto"'
    )
    set_detector_format(repository, "onnx")
    assert (repository / "yolo" / "config.pbtxt").read_text() == after.replace(
        'string_value: "torch"', 'string_value: "onnx"'
    )
    with pytest.raises(ValueError, match="must be one of openvino, onnx, torch"):
        set_detector_format(repository, "engine")


def test_trace_checked_fails_when_the_trace_diverges():
    class Stochastic(torch.nn.Module):
        def forward(self, x):
            return x + torch.rand_like(x)  # a trace cannot reproduce this

    with pytest.raises(PlatesError, match=r"traced noisy differs from eager by"):
        trace_checked(Stochastic(), "noisy")


def test_build_stops_on_missing_weights_naming_the_file(tmp_path):
    with pytest.raises(WeightsError, match=r"weight file plates_stn.pt not found; looked in: .*empty"):
        build_model_repository(copy_sources(tmp_path), weights_dir=tmp_path / "empty")
    with pytest.raises(WeightsError, match=r"weight file stn.pth not found; looked in: .*empty"):
        build_model_repository(copy_sources(tmp_path / "b"), weights_dir=tmp_path / "empty", recognizer="pretrained")


def test_the_repositorys_own_weights_build_the_model_repository(tmp_path):
    # A fresh clone with no ../shared beside it builds and serves: weights/ holds every weight it serves.
    built = build_model_repository(copy_sources(tmp_path), weights_dir=PROJECT_ROOT / "weights")
    assert [path.name for path in built] == [
        "model.pt",
        "model.pt",
        "plate_detector.pt",
        "plate_detector.onnx",
        "model.pt",
        "plate_detector.int8.onnx",
        "photo",
        "photo",
        BUILD_RECORD,
    ]
    assert built == generated_files(tmp_path / "model_repository")
    assert all(path.is_file() for path in built)
    record = json.loads(built[-1].read_text())
    assert record["weights"] == {
        name: WEIGHT_FILES[name].sha256
        for name in (
            "plates_stn.pt",
            "plates_lprnet.pt",
            "plates_rows_stn.pt",
            "plates_rows_lprnet.pt",
            "plate_detector.pt",
            "plate_detector.int8.onnx",
        )
    }
    assert record["settings"] == {
        "weights_dir": str(PROJECT_ROOT / "weights"),
        "instance_kind": "auto",
        "recognizer": "plates",
        "cpu_exports": True,
    }
    assert out_of_date(tmp_path / "model_repository") is None


def test_a_build_without_the_cpu_exports_runs_the_detector_in_pytorch_and_writes_no_onnx(tmp_path):
    # What a GPU machine without Ultralytics' exporter builds (scripts/gpu-check.sh): no ONNX, no INT8 file.
    repository = copy_sources(tmp_path)
    built = build_model_repository(
        repository, weights_dir=PROJECT_ROOT / "weights", instance_kind="cpu", cpu_exports=False
    )
    assert [path.name for path in built] == [
        "model.pt",
        "model.pt",
        "plate_detector.pt",
        "model.pt",
        "photo",
        "photo",
        BUILD_RECORD,
    ]
    assert not list(repository.rglob("*.onnx"))
    config = read_config(repository / "yolo" / "config.pbtxt")
    assert config.parameter("format", str) == "torch" and config.parameter("precision", str) == "auto"
    assert config.raw["instance_group"][0]["kind"] == "KIND_CPU"
    assert "plate_detector.int8.onnx" not in json.loads(built[-1].read_text())["weights"]
    # plates serve runs the CPU's detector, so it builds such a repository again
    assert out_of_date(repository) == f"{model_files(repository).onnx} is missing"


def built_as_if(repository, weights: dict[str, str], settings: dict | None = None):
    """A repository whose generated files are all there, recorded as built from `weights`."""
    for path in generated_files(repository):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    record = {"weights": weights, **({"settings": settings} if settings else {}), "traces": TRACES}
    (repository / BUILD_RECORD).write_text(json.dumps(record))
    return repository


def test_a_repository_built_from_weights_the_project_no_longer_names_is_out_of_date(tmp_path):
    # As a checkout is after `git pull` brings new weights: its repository still holds the old ones' traces.
    now = {name: WEIGHT_FILES[name].sha256 for name in ("plates_stn.pt", "plates_rows_lprnet.pt")}
    assert is_built(built_as_if(tmp_path / "now", now))
    older = built_as_if(tmp_path / "older", {**now, "plates_rows_lprnet.pt": "0" * 64})
    assert out_of_date(older) == "plates_rows_lprnet.pt changed since it was built"
    assert not is_built(older)
    assert out_of_date(built_as_if(tmp_path / "gone", {"retired.pt": "0" * 64})) == (
        "retired.pt changed since it was built"
    )


def test_a_repository_traced_as_an_older_build_traced_is_out_of_date(tmp_path):
    # Its recognizers read the same plates, slower: `plates serve` builds it again.
    now = {"plates_stn.pt": WEIGHT_FILES["plates_stn.pt"].sha256}
    repository = built_as_if(tmp_path / "a", now)
    (repository / BUILD_RECORD).write_text(json.dumps({"weights": now}))
    assert out_of_date(repository) == f"its recognizers were traced as an older build traced them, not {TRACES}"


def test_a_repository_with_a_file_missing_or_no_readable_record_is_out_of_date(tmp_path):
    now = {"plates_stn.pt": WEIGHT_FILES["plates_stn.pt"].sha256}
    repository = built_as_if(tmp_path / "a", now)
    model_files(repository).rows.unlink()
    assert out_of_date(repository) == f"{model_files(repository).rows} is missing"
    for text in ("not json", "[]", '{"weights": {}}', '{"weights": ["plates_stn.pt"]}'):
        repository = built_as_if(tmp_path / "b", now)
        (repository / BUILD_RECORD).write_text(text)
        assert out_of_date(repository) == f"{repository / BUILD_RECORD} names no weights", text


def test_rebuild_builds_with_the_settings_recorded(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(
        "plates.build.repository.build_model_repository", lambda repository, **settings: calls.append(settings)
    )
    settings = {"weights_dir": "weights", "instance_kind": "gpu", "recognizer": "pretrained"}
    rebuild(built_as_if(tmp_path / "a", {"stn.pth": "0" * 64}, settings))
    rebuild(tmp_path / "never-built")
    assert calls == [settings, {}]


def test_every_warm_up_reads_a_file_the_build_writes_and_runs_at_least_one_request(tmp_path):
    from google.protobuf import json_format
    from tritonclient.grpc import model_config_pb2

    from plates.server.repository import RELOAD_WARMUP

    repository = copy_sources(tmp_path)
    for path in write_warmup_files(repository):
        assert path.read_bytes() == bytes_element(PHOTO.read_bytes())
    warmups = {
        name: read_config(repository / name / "config.pbtxt").raw.get("model_warmup", [])
        for name in ("yolo", "stn", "lprnet", "plate_recognition")
    }
    # plate_recognition's warm-up comes with its reload: Triton refuses its calls until every model has loaded.
    assert warmups.pop("plate_recognition") == []
    for name, samples in RELOAD_WARMUP.items():
        config = json_format.ParseDict({"name": name, "model_warmup": samples}, model_config_pb2.ModelConfig())
        warmups[name] = json_format.MessageToDict(config, preserving_proto_field_name=True)["model_warmup"]
    for name, samples in warmups.items():
        assert samples, f"{name} has no warm-up"
        for sample in samples:
            # Triton 2.51 skips a sample of batch size 0 without a word, also for models that do not batch.
            assert int(sample["batch_size"]) >= 1 and int(sample["count"]) >= 1, (name, sample)
            for tensor in sample["inputs"].values():
                assert tensor.get("zero_data") or (repository / name / "warmup" / tensor["input_data_file"]).is_file()
