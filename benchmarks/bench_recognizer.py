"""Time STN + LPRNet as served against the reference form, in one process: the ratio is what to read.

The reference form is the checkpoints as shipped (with the STN's subnormal weights) and LPRNet's 3D max pools;
the served form zeroes the subnormals and pools in 2D with the channels last (plates/export.py,
plates/nets/lprnet.py). Both give the same outputs: each line says by how much they differ.

    poetry run python benchmarks/bench_recognizer.py [--batch 15] [--repeats 20]
"""

from __future__ import annotations

import argparse
import time

import torch

from plates.export import load_network
from plates.nets import LPRNet, SpatialTransformer
from plates.nets.lprnet import ChannelStridedMaxPool
from plates.weights import find_weights


def as_shipped(network: torch.nn.Module, name: str) -> torch.nn.Module:
    state = torch.load(find_weights(name), map_location="cpu", weights_only=True)["net_state_dict"]
    network.load_state_dict(state)
    for index, layer in enumerate(getattr(network, "backbone", [])):
        if isinstance(layer, ChannelStridedMaxPool):
            stride = (layer.channel_stride, *layer.stride)
            network.backbone[index] = torch.nn.MaxPool3d(kernel_size=(1, 3, 3), stride=stride)
    return network.eval()


def milliseconds(network: torch.nn.Module, batch: torch.Tensor, repeats: int) -> float:
    for _ in range(3):
        network(batch)
    start = time.perf_counter()
    for _ in range(repeats):
        network(batch)
    return (time.perf_counter() - start) / repeats * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=15, help="crops per call: one plate's 15 variants (default)")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    batch = torch.randn(args.batch, 3, 24, 94, generator=torch.Generator().manual_seed(0))
    print(f"batch {args.batch}, {torch.get_num_threads()} threads, mean of {args.repeats} calls")
    with torch.inference_mode():
        for network, name in ((SpatialTransformer, "stn.pth"), (LPRNet, "lprnet.pth")):
            served = load_network(network, find_weights(name))
            reference = as_shipped(network(), name)
            difference = (served(batch) - reference(batch)).abs().max().item()
            served_ms = milliseconds(served, batch, args.repeats)
            reference_ms = milliseconds(reference, batch, args.repeats)
            print(
                f"{name.split('.')[0]:<7} reference {reference_ms:6.1f} ms  served {served_ms:6.1f} ms  "
                f"speed-up {reference_ms / served_ms:4.1f}x  (outputs differ by {difference:.1g})"
            )


if __name__ == "__main__":
    main()
