"""The recognizer's training script: where a run starts from and what --two-line-only trains on (no training is run)."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch

from plates.build.repository import TWO_LINE_RECOGNIZER, load_network
from plates.build.weights import find_weights
from plates.nets import LPRNet
from plates.training import synthetic


@pytest.fixture
def script(convert_script):
    return convert_script("train_recognizer")


def test_two_line_only_without_scenes_is_refused_naming_what_it_needs(capsys, script):
    with pytest.raises(SystemExit):
        script.main(["train", "--two-line-only"])
    assert "--two-line-only needs --scenes" in capsys.readouterr().err


def test_a_run_can_start_from_the_committed_two_line_weights(script):
    _, lprnet = script.starting_networks("rows")
    committed = load_network(LPRNet, find_weights(TWO_LINE_RECOGNIZER["lprnet"]))
    for name, tensor in committed.state_dict().items():
        assert torch.equal(lprnet.state_dict()[name], tensor), name


def scene_set(root: Path) -> Path:
    """A set of two pasted scenes, one a split, each a rendered two-line plate on a grey photo."""
    records = []
    for number, split in enumerate(["train", "val"]):
        rng = np.random.default_rng(number)
        text = synthetic.random_text("square", rng)
        plate = cv2.resize(synthetic.render_plate(text, "square", rng), (120, 70))
        photo = np.full((300, 400, 3), 110, np.uint8)
        photo[100:170, 140:260] = plate
        image = f"images/{split}/pasted_{number:06d}.jpg"
        (root / image).parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(root / image), photo)
        records.append(
            {
                "image": image,
                "kind": "pasted",
                "source": "grey",
                "plates": [{"box": [140, 100, 260, 170], "class": 1, "text": text, "style": "square"}],
            }
        )
    (root / "scenes.json").write_text(json.dumps(records))
    return root


@pytest.mark.skipif(not synthetic.FONT_PATH.is_file(), reason="needs the shared fonts/")
def test_two_line_only_trains_and_validates_on_two_line_plates_alone(tmp_path, script):
    if not (script.SHARED / "detect").is_dir():
        pytest.skip(f"needs {script.SHARED}: the labels' photos and the background photos")
    parser_args = [
        "train",
        "--out",
        str(tmp_path / "run"),
        "--scenes",
        str(scene_set(tmp_path / "scenes")),
        "--two-line",
        "rows",
        "--two-line-only",
        "--synthetic",
        "6",
        "--synthetic-val",
        "4",
        "--scene-cuts",
        "2",
    ]
    args = script.build_parser().parse_args(parser_args)
    real, synthetic_crops, validations = script.datasets(args)
    # The real plates read by eye are nearly all one-line: of them, only the two-line ones are kept.
    assert set(real.lines.tolist()) == {2} and set(synthetic_crops.lines.tolist()) == {2}
    assert set(validations) == {"two-line-val", "two-line-val-40px", "synthetic-val"}
    assert set(validations["synthetic-val"].lines.tolist()) == {2}
