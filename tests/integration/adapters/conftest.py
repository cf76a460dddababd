"""The adapters' fixtures (tests/model_adapters.py)."""

from model_adapters import load_adapter, pb_utils  # noqa: F401 (fixtures)
