import json

import torch
from model_adapters import STAND_IN, config_json

from plates.build.paths import DEFAULT_REPOSITORY


class Request:
    def __init__(self, inputs):
        self.inputs = inputs


def test_stand_in_runs_torchscript_over_dynamically_batched_requests(load_adapter, pb_utils, tmp_path):
    version = tmp_path / "1"
    version.mkdir()
    torch.jit.trace(torch.nn.Flatten(), torch.zeros(1, 3, 24, 94)).save(str(version / "model.pt"))
    model = load_adapter(STAND_IN, DEFAULT_REPOSITORY / "stn" / "config.pbtxt", tmp_path)
    batches = [torch.randn(2, 3, 24, 94), torch.randn(3, 3, 24, 94)]
    requests = [Request([pb_utils.Tensor.from_dlpack("input__0", torch.utils.dlpack.to_dlpack(b))]) for b in batches]
    responses = model.execute(requests)
    assert [r.has_error() for r in responses] == [False, False]
    for batch, response in zip(batches, responses):
        [output] = response.output_tensors
        assert output.name() == "output__0"
        torch.testing.assert_close(torch.utils.dlpack.from_dlpack(output.to_dlpack()), batch.flatten(1))


def test_stand_in_answers_every_request_with_an_error_when_the_model_fails(load_adapter, pb_utils, tmp_path):
    version = tmp_path / "1"
    version.mkdir()
    torch.jit.trace(torch.nn.Linear(94, 2), torch.zeros(1, 3, 24, 94)).save(str(version / "model.pt"))
    model = load_adapter(STAND_IN, DEFAULT_REPOSITORY / "lprnet" / "config.pbtxt", tmp_path)
    bad = Request([pb_utils.Tensor.from_dlpack("input__0", torch.utils.dlpack.to_dlpack(torch.zeros(1, 3, 24, 95)))])
    responses = model.execute([bad, bad])
    assert all(r.has_error() for r in responses)
    assert responses[0].error().code() == pb_utils.TritonError.INTERNAL
    assert responses[0].error().message().startswith("lprnet: internal error: RuntimeError")


def test_stand_in_runs_on_the_intra_op_threads_its_config_asks(load_adapter, pb_utils, tmp_path):
    version = tmp_path / "1"
    version.mkdir()
    torch.jit.trace(torch.nn.Flatten(), torch.zeros(1, 3, 24, 94)).save(str(version / "model.pt"))
    config = json.loads(config_json(DEFAULT_REPOSITORY / "stn" / "config.pbtxt"))
    config.setdefault("parameters", {})["INTRA_OP_THREAD_COUNT"] = {"string_value": "1"}
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        load_adapter(STAND_IN, None, tmp_path, config_override=json.dumps(config))
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(threads)


def test_stand_in_counts_each_request_input_and_response_output(load_adapter, pb_utils, tmp_path, monkeypatch):
    from plates.inference.tensor_log import LOG_VARIABLE, Crossing, read_log

    version = tmp_path / "1"
    version.mkdir()
    torch.jit.trace(torch.nn.Flatten(), torch.zeros(1, 3, 24, 94)).save(str(version / "model.pt"))
    monkeypatch.setenv(LOG_VARIABLE, str(tmp_path))
    model = load_adapter(STAND_IN, DEFAULT_REPOSITORY / "stn" / "config.pbtxt", tmp_path)
    crops = pb_utils.Tensor.from_dlpack("input__0", torch.utils.dlpack.to_dlpack(torch.zeros(2, 3, 24, 94)))
    model.execute([Request([crops]), Request([crops])])
    model.finalize()
    assert read_log(tmp_path) == [
        Crossing("stn", "received", "input__0", "cpu", 2),
        Crossing("stn", "sent", "output__0", "cpu", 2),
    ]
