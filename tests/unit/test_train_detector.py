"""The detector's training script: what it asks Ultralytics for (no training is run)."""

import pytest
import yaml


@pytest.fixture
def script(convert_script):
    return convert_script("train_detector")


def test_default_run_trains_from_scratch_offline_on_cpu_with_ultralytics_optimiser(tmp_path, script):
    arguments = script.train_arguments(script.parse_args(["--out", str(tmp_path)]), tmp_path / "data.yaml")
    assert arguments["pretrained"] is False
    assert (arguments["device"], arguments["amp"], arguments["plots"]) == ("cpu", False, False)
    assert arguments["degrees"] == 0.0
    assert not {"optimizer", "lr0", "warmup_epochs"} & arguments.keys()


def test_fixed_learning_rate_fine_tunes_without_warm_up(tmp_path, script):
    argv = ["--init", "best.pt", "--lr0", "0.0005", "--degrees", "10"]
    arguments = script.train_arguments(script.parse_args(argv), tmp_path / "data.yaml")
    assert arguments["pretrained"] is True
    assert (arguments["optimizer"], arguments["lr0"], arguments["warmup_epochs"]) == ("AdamW", 0.0005, 0)
    assert arguments["degrees"] == 10.0


def test_dataset_yaml_points_at_the_data_set_wherever_training_runs(tmp_path, script):
    data_dir = tmp_path / "detect"
    data_dir.mkdir()
    (data_dir / "data.yaml").write_text("path: .\ntrain: images/train\nval: images/val\nnames: {0: plate}\n")
    copy = script.dataset_yaml(data_dir, tmp_path / "run.yaml")
    spec = yaml.safe_load(copy.read_text())
    assert spec["path"] == str(data_dir.resolve())
    assert spec["train"] == "images/train"


def test_a_gpu_run_is_fitted_to_its_time_and_loads_with_more_workers(tmp_path, script):
    argv = ["--device", "0", "--workers", "14", "--time", "0.132"]
    arguments = script.train_arguments(script.parse_args(argv), tmp_path / "data.yaml")
    assert (arguments["device"], arguments["workers"], arguments["time"]) == ("0", 14, 0.132)
    assert "time" not in script.train_arguments(script.parse_args([]), tmp_path / "data.yaml")
