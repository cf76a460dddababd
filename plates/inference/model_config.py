"""Reading a Triton model config (the JSON that `initialize` gets as `args["model_config"]`).

Every check raises ModelConfigError naming the model and the field, so a wrong config.pbtxt fails at load time
with a message that says what to fix.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from plates.exceptions import ModelConfigError

T = TypeVar("T")
_MISSING = object()


class ModelConfig:
    def __init__(self, config: dict[str, Any] | str) -> None:
        self.raw = json.loads(config) if isinstance(config, str) else config
        self.name = self.raw.get("name", "<unnamed>")

    def parameter(self, key: str, convert: Callable[[str], T], default: Any = _MISSING) -> T:
        """The `parameters { key: ... string_value: ... }` entry, converted; the default if absent."""
        entry = self.raw.get("parameters", {}).get(key)
        if entry is None:
            if default is _MISSING:
                raise ModelConfigError(f"model '{self.name}': parameter '{key}' is required")
            return default
        text = entry.get("string_value", "")
        try:
            return convert(text)
        except ValueError as error:
            raise ModelConfigError(
                f"model '{self.name}': parameter '{key}' = {text!r} is not a valid {convert.__name__}: {error}"
            ) from error

    def tensor(self, kind: str, name: str, data_type: str, dims: list[int]) -> None:
        """Check that input or output `name` exists with `data_type` (e.g. TYPE_FP32) and `dims`."""
        entries = {entry["name"]: entry for entry in self.raw.get(kind, [])}
        if name not in entries:
            raise ModelConfigError(f"model '{self.name}': {kind} '{name}' is missing (has {sorted(entries)})")
        entry = entries[name]
        if entry.get("data_type") != data_type:
            raise ModelConfigError(
                f"model '{self.name}': {kind} '{name}' must be {data_type}, config says {entry.get('data_type')}"
            )
        actual = [int(d) for d in entry.get("dims", [])]
        if actual != dims:
            raise ModelConfigError(f"model '{self.name}': {kind} '{name}' must have dims {dims}, config says {actual}")

    @property
    def max_batch_size(self) -> int:
        return int(self.raw.get("max_batch_size", 0))


def read_config(path: Path) -> ModelConfig:
    """A config.pbtxt as Triton hands it to `initialize`: parsed by Triton's own schema, then as JSON."""
    # Imported here: model.py files never read a config.pbtxt, and the image's stubs need not load protobuf for it.
    from google.protobuf import json_format, text_format
    from tritonclient.grpc import model_config_pb2

    try:
        config = text_format.Parse(Path(path).read_text(), model_config_pb2.ModelConfig())
    except text_format.ParseError as error:
        raise ModelConfigError(f"{path}: {error}") from error
    return ModelConfig(json_format.MessageToDict(config, preserving_proto_field_name=True))


def positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError("must be > 0")
    return value


def positive_int_list(text: str) -> list[int]:
    """Space-separated positive integers, at least one."""
    return _each(positive_int, text)


def nonnegative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError("must be 0 or more")
    return value


def nonnegative_int_list(text: str) -> list[int]:
    """Space-separated integers from 0, none or more."""
    return [nonnegative_int(v) for v in text.split()]


def unit_float_list(text: str) -> list[float]:
    """Space-separated numbers between 0 and 1, at least one."""
    return _each(unit_float, text)


def float_list(text: str) -> list[float]:
    """Space-separated numbers, at least one."""
    return _each(float, text)


def _each(convert: Callable[[str], T], text: str) -> list[T]:
    values = [convert(v) for v in text.split()]
    if not values:
        raise ValueError("must list at least one number")
    return values


def unit_float(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise ValueError("must be between 0 and 1")
    return value


def nonnegative_float(text: str) -> float:
    value = float(text)
    if not value >= 0.0:  # NaN too
        raise ValueError("must be a number, 0 or more")
    return value


def yes_no(text: str) -> bool:
    """ "yes" or "no", as Triton's own parameters say it (FORCE_CPU_ONLY_INPUT_TENSORS)."""
    if text not in ("yes", "no"):
        raise ValueError('must be "yes" or "no"')
    return text == "yes"
