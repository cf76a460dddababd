"""Run TorchScript files on saved inputs with whichever torch runs this script, and save their outputs.

    python convert/run_torchscript.py INPUTS.pt OUTPUTS.pt MODEL.pt [MODEL.pt ...]

INPUTS.pt holds one tensor; each model runs on it in turn (stn, then lprnet on stn's output), and OUTPUTS.pt holds
every model's output, in order. tests/integration/test_libtorch.py runs it with the production libtorch's stand-in
(scripts/libtorch-venv.sh) to prove the files torch 2.5.1 writes load and compute the same there. Only torch is
imported: that venv has nothing else.
"""

import sys

import torch


def main(inputs: str, outputs: str, *models: str) -> None:
    x = torch.load(inputs, weights_only=True)
    results = []
    with torch.inference_mode():
        for model in models:
            x = torch.jit.load(model, map_location="cpu").eval()(x)
            results.append(x.clone())
    torch.save(results, outputs)
    print(f"torch {torch.__version__}: ran {len(models)} models on {tuple(results[0].shape) if results else ()}")


if __name__ == "__main__":
    main(*sys.argv[1:])
