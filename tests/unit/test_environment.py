"""Pins that keep the served models correct, checked where model.py runs."""

import numpy as np
import torch


def test_numpy_is_below_2():
    # Triton 2.51's Python backend silently returns empty or mis-sized tensors with numpy 2.
    assert int(np.__version__.split(".")[0]) < 2, f"numpy {np.__version__}: Triton 2.51 needs numpy<2"


def test_torch_matches_the_serving_image_libtorch():
    # TorchScript is not forward compatible: trace with the minor version of NGC 24.10's PyTorch backend (2.5).
    assert torch.__version__.startswith("2.5."), f"torch {torch.__version__}: model.pt must be traced with 2.5"
