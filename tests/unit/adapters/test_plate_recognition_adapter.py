import json
import re

import numpy as np
import pytest
import torch
from model_adapters import REPOSITORY, config_json

from plates.recognition.alphabet import ALPHABET, BLANK, NUM_CLASSES
from plates.recognition.crops import DEFAULT_VARIANTS


class Request:
    def __init__(self, inputs):
        self.inputs = inputs


def plate_logits(text: str) -> torch.Tensor:
    logits = torch.full((NUM_CLASSES, 18), -5.0)
    path = [ALPHABET.index(c) for c in text] + [BLANK] * (18 - len(text))
    logits[path, torch.arange(18)] = 5.0
    return logits


@pytest.fixture
def orchestrator(load_adapter, pb_utils, monkeypatch):
    # Its sub-models' stubs are alive: here there are none, no tritonserver being the parent of this process.
    monkeypatch.setattr("plates.inference.stubs.sibling_stubs", lambda model: [])
    model_dir = REPOSITORY / "plate_recognition"
    return load_adapter(model_dir / "1" / "model.py", model_dir / "config.pbtxt", model_dir)


def answer(pb_utils, name, tensors):
    return pb_utils.InferenceResponse(
        [pb_utils.Tensor.from_dlpack(n, torch.utils.dlpack.to_dlpack(t)) for n, t in tensors.items()]
    )


def image_request(pb_utils, image):
    return Request([pb_utils.Tensor("input__0", image)])


def fake_recognizer(pb_utils, boxes, texts):
    """yolo cuts each plate as the served config does; crop i holds the number i, so lprnet reads crop i as the
    text of its plate wherever the orchestrator sends it."""
    n, cuts = len(texts), len(DEFAULT_VARIANTS)
    pb_utils.MODELS["yolo"] = lambda inputs: answer(
        pb_utils,
        "yolo",
        {
            "output__0": torch.arange(n * cuts, dtype=torch.float32).view(-1, 1, 1, 1).expand(-1, 3, 24, 94).clone(),
            "output__1": torch.tensor(boxes, dtype=torch.float32).reshape(n, 4),
            "output__2": torch.full((n,), 0.8),
            "output__3": torch.ones(n, dtype=torch.int64),
            "output__4": torch.arange(n),
        },
    )
    pb_utils.MODELS["stn"] = lambda inputs: answer(pb_utils, "stn", {"output__0": crops_of(inputs)})
    pb_utils.MODELS["lprnet"] = lambda inputs: answer(
        pb_utils,
        "lprnet",
        {"output__0": torch.stack([plate_logits(texts[int(i) // cuts]) for i in crops_of(inputs)[:, 0, 0, 0]])},
    )


def crops_of(inputs):
    return torch.utils.dlpack.from_dlpack(inputs["input__0"].to_dlpack())


def test_orchestrator_answers_boxes_texts_and_scores(orchestrator, pb_utils):
    fake_recognizer(pb_utils, [[1, 2, 3, 4], [5, 6, 7, 8]], ["B840CK197", "A12"])
    [response] = orchestrator.execute([image_request(pb_utils, np.zeros((20, 30, 3), np.uint8))])
    assert not response.has_error()
    outputs = {t.name(): t.as_numpy() for t in response.output_tensors}
    np.testing.assert_array_equal(outputs["coordinates"], [[1, 2, 3, 4], [5, 6, 7, 8]])
    assert outputs["texts"].tolist() == [b"B840CK197", b""]
    np.testing.assert_allclose(outputs["scores"], [0.8, 0.8])
    # The first look settles B840CK197 and gives up A12, which no cut reads as a plate: one stn and lprnet call. A12
    # reads under inverted_below, but its crops are one grey, no light characters: not read again in negative.
    assert pb_utils.CALLS == ["yolo", "stn", "lprnet"]


def test_orchestrator_answers_k_candidates_per_plate_as_bytes_and_scores(orchestrator, pb_utils):
    fake_recognizer(pb_utils, [[1, 2, 3, 4], [5, 6, 7, 8]], ["B840CK197", "A12"])
    [response] = orchestrator.execute([image_request(pb_utils, np.zeros((20, 30, 3), np.uint8))])
    outputs = {t.name(): t.as_numpy() for t in response.output_tensors}
    k = orchestrator.settings.candidates
    assert outputs["candidates"].shape == outputs["candidate_scores"].shape == (2, k)
    assert outputs["candidates"][0, 0] == b"B840CK197" and outputs["candidates"][1].tolist() == [b""] * k
    assert outputs["candidate_scores"].dtype == np.float32
    assert outputs["candidate_scores"][0, 0] == outputs["text_scores"][0] and outputs["candidate_scores"][1].sum() == 0


def test_orchestrator_reads_candidates_and_min_text_score_from_its_config(orchestrator):
    assert orchestrator.settings.candidates == 3 and 0 < orchestrator.settings.min_text_score < 0.1
    assert 0 < orchestrator.settings.inverted_light_below < 1


def test_orchestrator_exits_early_without_plates(orchestrator, pb_utils):
    fake_recognizer(pb_utils, [], [])
    [response] = orchestrator.execute([image_request(pb_utils, np.zeros((20, 30, 3), np.uint8))])
    outputs = {t.name(): t.as_numpy() for t in response.output_tensors}
    assert outputs["coordinates"].shape == (0, 4) and outputs["texts"].shape == (0,)
    assert outputs["scores"].shape == (0,) and outputs["candidates"].shape == (0, 3)
    assert pb_utils.CALLS == ["yolo"]


def test_orchestrator_passes_a_sub_model_error_on_naming_the_model(orchestrator, pb_utils):
    pb_utils.MODELS["yolo"] = lambda inputs: pb_utils.InferenceResponse(
        error=pb_utils.TritonError("CUDA out of memory", pb_utils.TritonError.INTERNAL)
    )
    good = image_request(pb_utils, np.zeros((20, 30, 3), np.uint8))
    responses = orchestrator.execute([good, good])
    assert len(responses) == 2
    for response in responses:
        assert response.has_error()
        assert response.error().code() == pb_utils.TritonError.INTERNAL
        assert "model 'yolo' failed: CUDA out of memory" in response.error().message()


@pytest.mark.parametrize(
    "refusal", ["[request id: <id_unknown>] Exceeds maximum queue size", "Request timeout expired"]
)
def test_orchestrator_answers_a_sub_model_refusal_as_unavailable(orchestrator, pb_utils, refusal):
    # Triton 2.51 hands a BLS caller the sub-model's refusal with code INTERNAL; only its message says what it is.
    fake_recognizer(pb_utils, [[1, 2, 3, 4]], ["A123BC77"])
    message = f"Model stn - Error when running inference: {refusal}"
    pb_utils.MODELS["stn"] = lambda inputs: pb_utils.InferenceResponse(
        error=pb_utils.TritonError(message, pb_utils.TritonError.INTERNAL)
    )
    [response] = orchestrator.execute([image_request(pb_utils, np.zeros((20, 30, 3), np.uint8))])
    assert response.error().code() == pb_utils.TritonError.UNAVAILABLE
    assert f"model 'stn' is overloaded: {message}" in response.error().message()


@pytest.mark.parametrize(
    "failure", ["[request id: <id_unknown>] Exceeds maximum queue size", "Stub process 'stn_0_0' is not healthy."]
)
def test_orchestrator_answers_a_dead_sub_models_refusal_or_failure_as_reloading(
    orchestrator, pb_utils, monkeypatch, failure
):
    # A dead stub's queue fills while Triton waits on it, and refuses as a busy one's does: only its process tells.
    dead = set()
    monkeypatch.setattr("plates.inference.stubs.sibling_stubs", lambda model: [f"stub of {model}"])
    monkeypatch.setattr("plates.inference.stubs.exited", lambda stub: stub in dead)
    fake_recognizer(pb_utils, [[1, 2, 3, 4]], ["A123BC77"])
    photo = image_request(pb_utils, np.zeros((20, 30, 3), np.uint8))
    [read] = orchestrator.execute([photo])
    assert not read.has_error()  # stn answered from a stub of its own
    dead.add("stub of stn")
    pb_utils.MODELS["stn"] = lambda inputs: pb_utils.InferenceResponse(
        error=pb_utils.TritonError(failure, pb_utils.TritonError.INTERNAL)
    )
    [response] = orchestrator.execute([photo])
    assert response.error().code() == pb_utils.TritonError.UNAVAILABLE
    assert response.error().message() == (f"plate_recognition: the service is reloading model 'stn' ({failure})")


@pytest.mark.parametrize(
    "message",
    [
        # Triton's answer to a BLS call while the supervisor unloads and loads stn again.
        "Model stn - Error when running inference: Failed for execute the inference request. Model 'stn' is not ready.",
        # The request stn held when its stub died, answered once the supervisor has started its next stub.
        "Stub process 'stn_0_0' is not healthy.",
    ],
)
def test_orchestrator_answers_a_sub_model_that_cannot_serve_as_reloading_whatever_its_stubs(
    orchestrator, pb_utils, monkeypatch, message
):
    fake_recognizer(pb_utils, [[1, 2, 3, 4]], ["A123BC77"])
    pb_utils.MODELS["stn"] = lambda inputs: pb_utils.InferenceResponse(
        error=pb_utils.TritonError(message, pb_utils.TritonError.INTERNAL)
    )
    [response] = orchestrator.execute([image_request(pb_utils, np.zeros((20, 30, 3), np.uint8))])
    assert response.error().code() == pb_utils.TritonError.UNAVAILABLE
    assert response.error().message() == f"plate_recognition: the service is reloading model 'stn' ({message})"


def test_orchestrator_answers_a_refusal_of_a_model_served_without_a_stub_as_overloaded(
    orchestrator, pb_utils, monkeypatch
):
    # The real PyTorch backend runs stn inside tritonserver: no stub of it is ever seen (the fixture's), so none has
    # died.
    fake_recognizer(pb_utils, [[1, 2, 3, 4]], ["A123BC77"])
    photo = image_request(pb_utils, np.zeros((20, 30, 3), np.uint8))
    orchestrator.execute([photo])
    pb_utils.MODELS["stn"] = lambda inputs: pb_utils.InferenceResponse(
        error=pb_utils.TritonError("Exceeds maximum queue size", pb_utils.TritonError.INTERNAL)
    )
    [response] = orchestrator.execute([photo])
    assert "model 'stn' is overloaded" in response.error().message()


def test_orchestrator_answers_a_sub_models_own_error_without_looking_at_its_process(
    orchestrator, pb_utils, monkeypatch
):
    monkeypatch.setattr("plates.inference.stubs.exited", lambda stub: pytest.fail("looked"))
    pb_utils.MODELS["yolo"] = lambda inputs: pb_utils.InferenceResponse(
        error=pb_utils.TritonError("yolo: image_bytes is not a JPEG or PNG file", pb_utils.TritonError.INVALID_ARG)
    )
    [response] = orchestrator.execute([image_request(pb_utils, np.zeros((20, 30, 3), np.uint8))])
    assert response.error().code() == pb_utils.TritonError.INTERNAL


def test_orchestrator_rejects_a_bad_image_itself_as_invalid_arg(orchestrator, pb_utils):
    [response] = orchestrator.execute([image_request(pb_utils, np.zeros((0, 30, 3), np.uint8))])
    assert response.error().code() == pb_utils.TritonError.INVALID_ARG
    assert "input__0 must have sides between 1 and" in response.error().message()
    assert pb_utils.CALLS == []


def test_orchestrator_refuses_a_config_with_a_wrong_output_type(load_adapter):
    model_dir = REPOSITORY / "plate_recognition"
    config = json.loads(config_json(model_dir / "config.pbtxt"))
    config["output"][1]["data_type"] = "TYPE_FP32"
    with pytest.raises(Exception, match=r"model 'plate_recognition': output 'texts' must be TYPE_STRING"):
        load_adapter(model_dir / "1" / "model.py", None, model_dir, config_override=json.dumps(config))


def test_orchestrator_refuses_a_min_text_score_outside_0_to_1(load_adapter):
    model_dir = REPOSITORY / "plate_recognition"
    config = json.loads(config_json(model_dir / "config.pbtxt"))
    config["parameters"]["min_text_score"] = {"string_value": "2"}
    with pytest.raises(Exception, match=r"parameter 'min_text_score' = '2' is not a valid unit_float"):
        load_adapter(model_dir / "1" / "model.py", None, model_dir, config_override=json.dumps(config))


def bytes_request(pb_utils, data):
    return Request([pb_utils.Tensor("image_bytes", np.array([data], dtype=np.object_))])


def inputs_seen_by(pb_utils, model):
    """The inputs (by name) of each call the orchestrator makes to `model`, from now on."""
    seen, answer_model = [], pb_utils.MODELS[model]
    pb_utils.MODELS[model] = lambda inputs: seen.append(inputs) or answer_model(inputs)
    return seen


def test_orchestrator_passes_image_bytes_on_to_yolo_as_the_tensor_it_came_in(orchestrator, pb_utils, samples):
    fake_recognizer(pb_utils, [], [])
    seen = inputs_seen_by(pb_utils, "yolo")
    data = (samples / "car.jpg").read_bytes()
    request = bytes_request(pb_utils, data)
    [response] = orchestrator.execute([request])
    assert not response.has_error()
    assert list(seen[0]) == ["image_bytes"] and seen[0]["image_bytes"].as_numpy().tolist() == [data]
    assert seen[0]["image_bytes"] is request.inputs[0]


def test_orchestrator_passes_pixels_on_to_yolo_as_the_tensor_they_came_in(orchestrator, pb_utils):
    # Not a copy: the tensor a request brings already lies in the memory the stub shares with the server.
    fake_recognizer(pb_utils, [[1, 2, 3, 4]], ["B840CK197"])
    to_yolo, to_stn = inputs_seen_by(pb_utils, "yolo"), inputs_seen_by(pb_utils, "stn")
    request = image_request(pb_utils, np.zeros((20, 30, 3), np.uint8))
    [response] = orchestrator.execute([request])
    assert not response.has_error()
    assert list(to_yolo[0]) == ["input__0"] and to_yolo[0]["input__0"] is request.inputs[0]
    # stn's input has the photo's name, input__0, but holds the crops: a tensor of its own.
    assert to_stn[0]["input__0"] is not request.inputs[0] and to_stn[0]["input__0"].numpy().shape[1:] == (3, 24, 94)


def test_orchestrator_answers_a_file_yolo_could_not_decode_as_invalid_arg(orchestrator, pb_utils, samples):
    # As Triton 2.51 hands it to a BLS caller: code INTERNAL, yolo's message.
    message = "yolo: image_bytes is a corrupt or truncated PNG: Internal error."
    pb_utils.MODELS["yolo"] = lambda inputs: pb_utils.InferenceResponse(
        error=pb_utils.TritonError(message, pb_utils.TritonError.INTERNAL)
    )
    [response] = orchestrator.execute([bytes_request(pb_utils, (samples / "car.jpg").read_bytes())])
    assert response.error().code() == pb_utils.TritonError.INVALID_ARG
    assert response.error().message() == "plate_recognition: image_bytes is a corrupt or truncated PNG: Internal error."


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ([], "send exactly one of input__0 .* and image_bytes .*, got neither"),
        (["input__0", "image_bytes"], "send exactly one of input__0 .* and image_bytes .*, got both"),
    ],
)
def test_orchestrator_wants_exactly_one_of_its_inputs(orchestrator, pb_utils, inputs, message):
    tensors = {
        "input__0": pb_utils.Tensor("input__0", np.zeros((20, 30, 3), np.uint8)),
        "image_bytes": pb_utils.Tensor("image_bytes", np.array([b"\xff\xd8"], dtype=np.object_)),
    }
    [response] = orchestrator.execute([Request([tensors[name] for name in inputs])])
    assert response.error().code() == pb_utils.TritonError.INVALID_ARG
    assert re.search(message, response.error().message()), response.error().message()
    assert pb_utils.CALLS == []


def test_orchestrator_rejects_a_truncated_photo_and_answers_the_next(orchestrator, pb_utils, samples):
    fake_recognizer(pb_utils, [[1, 2, 3, 4]], ["B840CK197"])
    data = (samples / "car.jpg").read_bytes()
    cut = bytes_request(pb_utils, data[: len(data) * 3 // 10])
    truncated, whole = orchestrator.execute([cut, bytes_request(pb_utils, data)])
    assert truncated.error().code() == pb_utils.TritonError.INVALID_ARG
    assert "plate_recognition: image_bytes is a truncated JPEG" in truncated.error().message()
    assert not whole.has_error()


def test_orchestrator_wants_one_photo_in_image_bytes(orchestrator, pb_utils):
    request = Request([pb_utils.Tensor("image_bytes", np.array([b"a", b"b"], dtype=np.object_))])
    [response] = orchestrator.execute([request])
    assert response.error().code() == pb_utils.TritonError.INVALID_ARG
    assert "image_bytes must hold one encoded photo, got 2" in response.error().message()


def test_orchestrator_counts_each_tensor_it_sends_and_gets_back_per_model(
    orchestrator, pb_utils, tmp_path, monkeypatch
):
    from plates.inference.tensor_log import TensorLog, read_log

    # A text with no character twice in a row: plate_logits puts no blank between them, and CTC would collapse them
    # into no plate, which would be read once more in negative.
    fake_recognizer(pb_utils, [[10, 10, 60, 22]], ["A012BC78"])
    orchestrator.log = TensorLog(tmp_path, "plate_recognition")
    orchestrator.execute([image_request(pb_utils, np.zeros((40, 80, 3), np.uint8))])
    orchestrator.finalize()
    counted = {(c.way, c.tensor): c.count for c in read_log(tmp_path)}
    assert counted == {
        ("received", "input__0"): 1,
        ("to yolo", "input__0"): 1,
        ("to stn", "input__0"): 1,
        ("from stn", "output__0"): 1,
        ("to lprnet", "input__0"): 1,
        ("from lprnet", "output__0"): 1,
        **{("from yolo", f"output__{i}"): 1 for i in range(5)},
    }
