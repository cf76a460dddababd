"""Triton's answers as the client's: its errors mapped by their meaning, its messages in the client's terms."""

from __future__ import annotations

import pytest
from tritonclient.utils import InferenceServerException

from plates.exceptions import not_serving
from plates.gateway.app import nullable_as_30
from plates.gateway.recognizer import in_client_terms, triton_refusal


@pytest.mark.parametrize(
    "status, message, expected",
    [
        ("StatusCode.INVALID_ARGUMENT", "plate_recognition: image_bytes is empty", (400, "invalid_image", None)),
        ("StatusCode.UNAVAILABLE", "Exceeds maximum queue size", (429, "triton_busy", 1)),
        ("StatusCode.UNAVAILABLE", "model 'yolo' is overloaded: Request timeout expired", (429, "triton_busy", 1)),
        ("StatusCode.UNAVAILABLE", "failed to connect to all addresses", (503, "triton_unavailable", 5)),
        # A dead sub-model, answered by the orchestrator (its queue's words inside): reloading, not busy.
        (
            "StatusCode.UNAVAILABLE",
            "the service is reloading model 'stn' (Exceeds maximum queue size)",
            (503, "triton_reloading", 2),
        ),
        # plate_recognition itself not loaded, and no supervisor that says it reloads it.
        (
            "StatusCode.NOT_FOUND",
            "Request for unknown model: 'plate_recognition' has no available versions",
            (503, "triton_unavailable", 5),
        ),
        ("StatusCode.DEADLINE_EXCEEDED", "Deadline Exceeded", (504, "triton_timeout", None)),
        ("StatusCode.INTERNAL", "model 'stn' failed", (502, "triton_failed", None)),
    ],
)
def test_triton_refusal_keeps_the_meaning_of_tritons_error(status, message, expected):
    refusal = triton_refusal(InferenceServerException(message, status=status), timeout=30)
    assert (refusal.status, refusal.code, refusal.retry_after) == expected


@pytest.mark.parametrize(
    "status, message",
    [
        ("StatusCode.NOT_FOUND", "Request for unknown model: 'plate_recognition' has no available versions"),
        ("StatusCode.INTERNAL", "Stub process 'plate_recognition_0_0' is not healthy."),
    ],
)
def test_plate_recognition_not_loaded_while_the_supervisor_reloads_it_is_reloading(status, message):
    asked = []
    error = InferenceServerException(message, status=status)
    refusal = triton_refusal(error, timeout=30, reloading=lambda: asked.append(1) or ["plate_recognition"])
    assert (refusal.status, refusal.code, refusal.retry_after) == (503, "triton_reloading", 2)
    assert refusal.message == f"the service is reloading model 'plate_recognition' ({message})"
    assert asked == [1]
    # Other errors never ask: the supervisor's verdict is read only for this one.
    triton_refusal(
        InferenceServerException("Exceeds maximum queue size", status="StatusCode.UNAVAILABLE"),
        30,
        reloading=lambda: asked.append(2) or [],
    )
    assert asked == [1]


def test_not_serving_reads_tritons_own_words_for_that_model_only():
    assert not_serving(
        "yolo",
        "Model yolo - Error when running inference: Failed for execute the inference request. "
        "Model 'yolo' is not ready.",
    )
    assert not_serving("plate_recognition", "Request for unknown model: 'plate_recognition' has no available versions")
    assert not_serving("yolo", "Stub process 'yolo_0_0' is not healthy.")
    # The orchestrator's own answer about a sub-model, or another model's instance, is not about this model.
    said = "plate_recognition: the service is reloading model 'yolo' (Model 'yolo' is not ready.)"
    assert not not_serving("plate_recognition", said)
    assert not not_serving(
        "plate_recognition", "plate_recognition: model 'yolo' failed: Stub process 'yolo_0_0' is not healthy."
    )
    assert not not_serving("yolo", "Exceeds maximum queue size")


def test_in_client_terms_names_the_form_field():
    assert in_client_terms("plate_recognition: image_bytes is a truncated PNG") == "upload is a truncated PNG"
    assert in_client_terms("plate_recognition: something else") == "something else"


def test_nullable_as_30_writes_openapi_30s_nullable():
    schema = {
        "a": {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "A"},
        "b": {"anyOf": [{"$ref": "#/S"}, {"type": "null"}]},
        "c": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    }
    assert nullable_as_30(schema) == {
        "a": {"type": "string", "title": "A", "nullable": True},
        "b": {"allOf": [{"$ref": "#/S"}], "nullable": True},
        "c": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    }
