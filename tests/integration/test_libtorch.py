"""The exported stn, lprnet and lprnet_rows load in the production libtorch's stand-in (torch 2.13.0,
scripts/libtorch-venv.sh) and compute there what they compute in the torch 2.5.1 that wrote them, on real plate
crops."""

from __future__ import annotations

import os
import subprocess

import cv2
import numpy as np
import pytest
import torch

from plates.build.paths import DEFAULT_REPOSITORY, PROJECT_ROOT
from plates.build.repository import is_built, model_files
from plates.recognition.crops import DEFAULT_VARIANTS, prepare_crops

PYTHON = PROJECT_ROOT / ".venv-libtorch" / "bin" / "python"
RUNNER = PROJECT_ROOT / "convert" / "run_torchscript.py"
TOLERANCE = 1e-3  # of the logits (tens in size): other kernels and thread counts sum in other orders (seen: 1.9e-4)


@pytest.mark.skipif(not PYTHON.is_file(), reason="no .venv-libtorch: scripts/libtorch-venv.sh makes it")
@pytest.mark.parametrize("chain", [("stn", "lprnet"), ("rows",)], ids=["stn-then-lprnet", "lprnet_rows"])
def test_the_recognizers_compute_the_same_in_torch_2_13(tmp_path, samples, chain):
    if not is_built(DEFAULT_REPOSITORY):
        pytest.skip("no model repository: convert/build_model_repository.py builds it")
    models = [getattr(model_files(DEFAULT_REPOSITORY), name) for name in chain]
    image = cv2.imread(str(samples / "car.jpg"))
    crops = prepare_crops(image, np.array([[95, 330, 132, 343], [551, 263, 577, 270]], np.float32), DEFAULT_VARIANTS)
    noise = np.random.default_rng(0).uniform(-1, 1, (4, 3, 24, 94)).astype(np.float32)
    inputs = torch.from_numpy(np.concatenate([crops, noise]))
    torch.save(inputs, tmp_path / "inputs.pt")
    expected, x = [], inputs
    with torch.inference_mode():
        for model in models:
            x = torch.jit.load(str(model))(x)
            expected.append(x)
    # Nothing of this process's environment that would point the other interpreter at torch 2.5.1's libraries.
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "LD_LIBRARY_PATH", "LD_PRELOAD")
    }
    run = subprocess.run(
        [str(PYTHON), str(RUNNER), str(tmp_path / "inputs.pt"), str(tmp_path / "outputs.pt"), *map(str, models)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.startswith("torch 2.13.0"), run.stdout
    actual = torch.load(tmp_path / "outputs.pt", weights_only=True)
    for model, want, got in zip(models, expected, actual):
        name = model.parent.parent.name
        assert got.shape == want.shape, name
        difference = (got - want).abs().max().item()
        assert difference <= TOLERANCE, f"{name} differs by {difference:.3g} in torch 2.13"
    assert actual[-1].argmax(1).equal(expected[-1].argmax(1))  # every frame's likeliest class, so the same texts
