"""Spatial transformer that straightens a 3x24x94 plate crop before LPRNet reads it."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class SpatialTransformer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.localization = nn.Sequential(
            nn.Conv2d(3, 32, kernel_size=3),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.ReLU(),
            nn.Conv2d(32, 32, kernel_size=5),
            nn.MaxPool2d(kernel_size=3, stride=3),
            nn.ReLU(),
        )
        # 32 channels of 2x14 are what the localisation net leaves of a 24x94 crop.
        self.fc_loc = nn.Sequential(nn.Linear(32 * 14 * 2, 32), nn.ReLU(), nn.Linear(32, 6))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        theta = self.fc_loc(self.localization(x).flatten(1)).view(-1, 2, 3)
        grid = F.affine_grid(theta, list(x.size()), align_corners=True)
        return F.grid_sample(x, grid, align_corners=True)
