"""The model repository's `model.py` adapters loaded against the fake pb_utils (fake_pb_utils), initialised from the
committed config.pbtxt files: the fixtures of tests/unit/adapters and tests/integration/adapters."""

from __future__ import annotations

import importlib.util
import json
import sys

import fake_pb_utils
import pytest

from plates.build.paths import DEFAULT_REPOSITORY, PROJECT_ROOT
from plates.inference.model_config import read_config

REPOSITORY = DEFAULT_REPOSITORY
STAND_IN = PROJECT_ROOT / "backends" / "pytorch" / "model.py"


def config_json(path) -> str:
    return json.dumps(read_config(path).raw)


@pytest.fixture
def pb_utils(monkeypatch):
    monkeypatch.setitem(sys.modules, "triton_python_backend_utils", fake_pb_utils)
    fake_pb_utils.MODELS.clear()
    fake_pb_utils.CALLS.clear()
    fake_pb_utils.Logger.messages.clear()
    return fake_pb_utils


@pytest.fixture
def load_adapter(pb_utils):
    """load_adapter(model.py path, config.pbtxt path, repository dir) -> an initialised TritonPythonModel."""

    def load(model_py, config_pbtxt, repository, config_override=None, instance_kind="CPU"):
        spec = importlib.util.spec_from_file_location(f"adapter_{model_py.parent.parent.name}", model_py)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        model = module.TritonPythonModel()
        config = config_override if config_override is not None else config_json(config_pbtxt)
        model.initialize(
            {
                "model_config": config,
                "model_repository": str(repository),
                "model_version": "1",
                "model_instance_kind": instance_kind,
                "model_instance_device_id": "0",
            }
        )
        return model

    return load
