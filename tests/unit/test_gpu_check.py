"""plates.gpu_check without a GPU: the rule that proves tensors stayed on the GPU, the answers' comparison, the
variants, and the bundle's pieces that need no download."""

import json
from pathlib import Path

import pytest

from plates.build.paths import PROJECT_ROOT
from plates.build.repository import copy_sources
from plates.exceptions import PlatesError
from plates.gpu_check import bundle
from plates.gpu_check.answers import compare
from plates.gpu_check.check import Variant, crossing_faults, photos_of, scale_instances
from plates.inference.model_config import read_config
from plates.inference.tensor_log import CPU, EMPTY, GPU, Crossing


def served_on_the_gpu() -> list[Crossing]:
    """The counts of a GPU run (scripts/gpu-check.sh on an H200, abridged): files and pixels from clients, a photo
    with no plate, and Triton's warm-up and the health probes calling stn and lprnet from the host."""
    rows = [
        ("plate_recognition", "received", "image_bytes", CPU),
        ("plate_recognition", "received", "input__0", CPU),
        ("plate_recognition", "to yolo", "image_bytes", CPU),
        ("plate_recognition", "to yolo", "input__0", CPU),
        ("plate_recognition", "from yolo", "output__0", GPU),
        ("plate_recognition", "from yolo", "output__0", EMPTY),
        ("plate_recognition", "to stn", "input__0", GPU),
        ("plate_recognition", "from stn", "output__0", GPU),
        ("plate_recognition", "to lprnet", "input__0", GPU),
        ("plate_recognition", "from lprnet", "output__0", GPU),
        ("yolo", "received", "image_bytes", CPU),
        ("yolo", "received", "input__0", CPU),
        ("yolo", "decoded", "image_bytes", GPU),
        ("yolo", "sent", "output__0", GPU),
        ("stn", "received", "input__0", GPU),
        ("stn", "received", "input__0", CPU),
        ("stn", "sent", "output__0", GPU),
        ("lprnet", "received", "input__0", GPU),
        ("lprnet", "received", "input__0", CPU),
        ("lprnet", "sent", "output__0", GPU),
    ]
    return [Crossing(*row, 10) for row in rows]


def replaced(crossings, model, way, tensor, **changes):
    return [
        Crossing(**{**vars(c), **changes}) if (c.model, c.way, c.tensor) == (model, way, tensor) else c
        for c in crossings
    ]


def test_a_run_whose_tensors_between_models_stayed_on_the_gpu_passes():
    assert crossing_faults(served_on_the_gpu()) == []


def test_a_tensor_between_models_in_host_memory_fails_the_check():
    crops_on_the_host = replaced(served_on_the_gpu(), "plate_recognition", "to stn", "input__0", memory=CPU)
    assert crossing_faults(crops_on_the_host) == [
        "plate_recognition: 10 × input__0 to stn in host memory",
        "plate_recognition: no tensor to stn was counted",
    ]
    decoded_on_the_host = replaced(served_on_the_gpu(), "yolo", "decoded", "image_bytes", memory=CPU)
    assert "yolo: 10 × image_bytes decoded in host memory" in crossing_faults(decoded_on_the_host)


def test_fewer_tensors_arriving_on_the_gpu_than_were_sent_there_fail_the_check():
    # The copy the Python backend makes where FORCE_CPU_ONLY_INPUT_TENSORS is left on: the receiver sees host memory.
    copied = replaced(served_on_the_gpu(), "stn", "received", "input__0", count=4)
    assert crossing_faults(copied) == ["stn: plate_recognition sent 10 tensors on the GPU, 4 arrived there"]


def test_a_run_that_never_made_a_crossing_proves_nothing_of_it():
    without = [c for c in served_on_the_gpu() if (c.model, c.way) != ("plate_recognition", "from lprnet")]
    assert crossing_faults(without) == ["plate_recognition: no tensor from lprnet was counted"]


def test_answers_are_compared_plate_by_plate_by_their_boxes():
    car = {"text": "B840CK197", "box": [95.0, 331.0, 133.0, 343.0], "score": 0.64, "text_score": 0.37}
    moved = {**car, "box": [95.5, 331.0, 133.0, 343.0], "score": 0.65, "text_score": 0.39}
    other = {"text": "A001AA77", "box": [10.0, 10.0, 60.0, 22.0], "score": 0.5, "text_score": 0.9}
    same = compare({"car.jpg": [car], "cat.jpeg": []}, {"car.jpg": [moved], "cat.jpeg": []})
    assert same.agrees and (same.photos, same.plates, same.matched, same.same_text) == (2, 1, 1, 1)
    assert same.max_box_px == pytest.approx(0.5) and same.max_text_score == pytest.approx(0.02)
    differs = compare({"car.jpg": [car, other]}, {"car.jpg": [{**car, "text": "B840CX197"}], "new.jpg": []})
    assert differs.differences == [
        "car.jpg: the plate at [95.0, 331.0, 133.0, 343.0] reads B840CK197 (0.37) and B840CX197 (0.37)",
        "car.jpg: A001AA77 at [10.0, 10.0, 60.0, 22.0] found on the first side only",
        "new.jpg: answered on one side only",
    ]


def test_variants_are_parsed_named_and_applied_to_a_copy_of_the_repository(tmp_path):
    assert Variant.parse("graphs") == Variant(True, 1) and Variant.parse("eager,4") == Variant(False, 4)
    assert Variant.parse("4").name == "4 instances" and Variant.parse("graphs").name == "CUDA graphs, 1 instance"
    for text in ("", "fast", "graphs,eager", "2,4"):
        with pytest.raises(ValueError, match="a variant is"):
            Variant.parse(text)
    repository = copy_sources(tmp_path / "repository")
    Variant.parse("eager,4").apply(repository)
    configs = {
        model: read_config(repository / model / "config.pbtxt").raw
        for model in ("plate_recognition", "yolo", "stn", "lprnet")
    }
    assert configs["yolo"]["parameters"]["cuda_graphs"]["string_value"] == "no"
    counts = {model: config["instance_group"][0]["count"] for model, config in configs.items()}
    queues = {
        model: config["dynamic_batching"]["default_queue_policy"]["max_queue_size"] for model, config in configs.items()
    }
    assert counts == {"plate_recognition": 4, "yolo": 4, "stn": 1, "lprnet": 1}
    assert configs["yolo"]["model_warmup"][0]["count"] == 3  # its warm-up's count is no instance count
    assert queues == {"plate_recognition": 128, "yolo": 4, "stn": 4, "lprnet": 4}


def test_scaling_a_repository_to_one_instance_leaves_its_configs_as_committed(tmp_path):
    # plate_recognition's queue of 2 is twice its one instance; the others' 1 is theirs.
    repository = copy_sources(tmp_path / "repository")
    before = {path: path.read_text() for path in repository.glob("*/config.pbtxt")}
    scale_instances(repository, 1)
    assert [path.parent.name for path, text in before.items() if path.read_text() != text] == []


def test_the_photos_are_the_samples_and_every_photo_e2e_json_lists(tmp_path):
    (tmp_path / "e2e.json").write_text(
        json.dumps([{"image": "detect/b.jpg"}, {"image": "detect/a.jpg"}, {"image": "detect/a.jpg"}])
    )
    assert photos_of(tmp_path) == ["samples/car.jpg", "samples/cat.jpeg", "detect/a.jpg", "detect/b.jpg"]


def test_the_site_takes_the_locked_version_of_each_package_with_every_file_hash_the_lock_names():
    lines = bundle.locked(["numpy", "tritonclient"])
    lock = (PROJECT_ROOT / "poetry.lock").read_text()
    assert lines[0].startswith("numpy==1.26.4 --hash=sha256:") and lines[1].startswith("tritonclient==2.52.0 --hash=")
    assert all(entry.removeprefix("--hash=") in lock for line in lines for entry in line.split()[1:])
    with pytest.raises(PlatesError, match="not-a-package is not in poetry.lock"):
        bundle.locked(["not-a-package"])


def test_the_closure_follows_needed_libraries_through_each_other_and_leaves_the_machines_out(tmp_path, monkeypatch):
    for name in ("liba.so", "libb.so", "libc.so"):
        (tmp_path / name).write_bytes(b"")
    needs = {"server": ["liba.so", "libstdc++.so.6"], "liba.so": ["libb.so", "libc.so.6"], "libb.so": ["liba.so"]}
    monkeypatch.setattr(bundle, "needed", lambda path: needs.get(Path(path).name, []))
    assert bundle.library_closure([tmp_path / "server"], tmp_path) == [tmp_path / "liba.so", tmp_path / "libb.so"]


def test_icu_is_replaced_by_the_stub_built_under_its_name_and_version(tmp_path):
    for name in ("libicuuc-4683f362.so.70.1", "libicudata-c1404396.so.70.1", "libxml2.so"):
        (tmp_path / name).write_bytes(b"x" * 1000)
    stub = bundle.write_icu_stub(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["libicuuc-4683f362.so.70.1", "libxml2.so"]
    assert stub.read_bytes().startswith(bundle.ELF_MAGIC)
    assert b"ucnv_open_70" in stub.read_bytes() and b"UCNV_TO_U_CALLBACK_STOP_70" in stub.read_bytes()
    (tmp_path / "none").mkdir()
    assert bundle.write_icu_stub(tmp_path / "none") is None


def test_a_bundle_over_the_device_tools_limit_is_refused_naming_its_parts(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "photo.jpg").write_bytes(b"x" * 1000)
    (tmp_path / "site.tar.xz").write_bytes(b"x" * 500)
    monkeypatch.setattr(bundle, "travelling_bytes", lambda checkout: 2000)
    assert bundle.check_size(tmp_path) == {"data": 1000, "site.tar.xz": 500, "checkout": 2000, "travel": 3500}
    monkeypatch.setattr(bundle, "TRAVEL_LIMIT_BYTES", 3000)
    with pytest.raises(PlatesError, match=r"come to 0.0 MiB, over the device tool's 0 MiB: data 0.0 MiB"):
        bundle.check_size(tmp_path)
