"""LPRNet (Zherzdev & Gruzdev, 2018) as trained for Russian plates: 3x24x94 crop in, [N, classes, T] logits out.

Module names and order follow the pretrained checkpoint (`backbone.<i>`, `container`), so its state dict loads as is.
T is 18 as the reference has it, or 39 for a `wide` LPRNet: the same layers and weights, its last pool not halving
the width. 18 frames leave a 3-digit region code (a fifth of the crop) about 4 frames, where CTC needs 5 for `777`
(a blank between repeated digits): the wide one gives it twice as many.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

# Backbone layers whose outputs feed the global context (after the first conv, the two early blocks and the
# class-count conv), as in the checkpoint.
FEATURE_LAYERS = (2, 6, 13, 22)
# Average pools (kernel, stride) that bring the first three feature maps (22x92, 20x90, 18x44) to the last one's
# 4 x T grid: T = 18, or 39 when wide.
CONTEXT_POOLS = {
    False: (((5, 5), (5, 5)), ((5, 5), (5, 5)), ((4, 10), (4, 2))),
    True: (((5, 16), (5, 2)), ((5, 14), (5, 2)), ((4, 6), (4, 1))),
}


class ChannelStridedMaxPool(nn.Module):
    """The reference's `nn.MaxPool3d(kernel_size=(1, 3, 3), stride=(c, h, w))` on [N, C, H, W], value for value.

    Given a 4-D tensor, MaxPool3d takes the channels for depth: a depth kernel of 1 with stride c keeps every c-th
    channel, and the rest is a 3x3 max pool. Done that way with the channels last, it runs 4 times faster on CPU
    (36 ms to 8 ms for the first pool of a 15-crop batch), where MaxPool3d was half of LPRNet's time. Its output
    stays channels last, as the network's convolutions take it (LPRNet.forward).
    """

    def __init__(self, stride: tuple[int, int, int]) -> None:
        super().__init__()
        self.channel_stride, *self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x[:, :: self.channel_stride].contiguous(memory_format=torch.channels_last)
        return F.max_pool2d(x, kernel_size=3, stride=self.stride)


class SmallBasicBlock(nn.Module):
    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        mid = out_channels // 4
        self.block = nn.Sequential(
            nn.Conv2d(in_channels, mid, kernel_size=1),
            nn.ReLU(),
            nn.Conv2d(mid, mid, kernel_size=(3, 1), padding=(1, 0)),
            nn.ReLU(),
            nn.Conv2d(mid, mid, kernel_size=(1, 3), padding=(0, 1)),
            nn.ReLU(),
            nn.Conv2d(mid, out_channels, kernel_size=1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block(x)


class LPRNet(nn.Module):
    def __init__(self, num_classes: int = 23, dropout: float = 0.1, wide: bool = False) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.architecture = {"wide": wide}  # what a checkpoint records to build the network again
        self.context_pools = CONTEXT_POOLS[wide]
        # The max pools with a channel stride (2 and 4) halve and quarter the channel count: that is why the
        # block after the second pool takes 64 channels, not 128, and the (1, 4) conv takes 64, not 256.
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=3),
            nn.BatchNorm2d(64),
            nn.ReLU(),
            ChannelStridedMaxPool(stride=(1, 1, 1)),
            SmallBasicBlock(64, 128),
            nn.BatchNorm2d(128),
            nn.ReLU(),
            ChannelStridedMaxPool(stride=(2, 1, 2)),
            SmallBasicBlock(64, 256),
            nn.BatchNorm2d(256),
            nn.ReLU(),
            SmallBasicBlock(256, 256),
            nn.BatchNorm2d(256),
            nn.ReLU(),
            ChannelStridedMaxPool(stride=(4, 1, 1 if wide else 2)),
            nn.Dropout(dropout),
            nn.Conv2d(64, 256, kernel_size=(1, 4)),
            nn.BatchNorm2d(256),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Conv2d(256, num_classes, kernel_size=(13, 1)),
            nn.BatchNorm2d(num_classes),
            nn.ReLU(),
        )
        context_channels = 64 + 128 + 256 + num_classes
        self.container = nn.Conv2d(context_channels, num_classes, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Channels last from the first convolution to the last: on CPU (oneDNN) the served network ran in 0.78 to
        # 0.87 of the time it took with the channels first between its pools (docs/performance.md, Latency), where
        # every pool turned them back and the next convolution again. Its weights are channels last too where the
        # build traces it (plates.build.repository.trace_checked).
        x = x.contiguous(memory_format=torch.channels_last)
        features = []
        for index, layer in enumerate(self.backbone):
            x = layer(x)
            if index in FEATURE_LAYERS:
                features.append(x)
        # Pool every feature map to the 4x18 grid of the last one, and scale each by its mean energy so that no
        # map dominates the concatenation. The reference takes that mean over the whole batch, which makes a plate's
        # reading depend on the plates batched with it (and Triton's dynamic batching mixes requests): here it is
        # taken per plate, which is the reference exactly at batch size 1.
        pooled = [F.avg_pool2d(f, kernel, stride) for f, (kernel, stride) in zip(features, self.context_pools)]
        pooled.append(features[3])
        context = torch.cat([f / torch.mean(torch.pow(f, 2), dim=(1, 2, 3), keepdim=True) for f in pooled], dim=1)
        return torch.mean(self.container(context), dim=2).contiguous()
