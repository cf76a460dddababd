"""Which crops hold light characters on a dark plate: blue (police), black (military) and red (diplomatic) plates, whose
crops the orchestrator reads again negated (plates.inference.pipeline.read_ways).

Otsu's threshold splits a crop's core into its characters and their background; characters take under half of a
plate's face, so where the light side is the smaller, the characters are light. On the rendered dev scenes the 60
dark plates that read right negated had a light side of 0.18 to 0.47 of their core; on the real dev photos, whose
plates are all dark on light, 35 of the 152 crops the negated reading had tried (none of which read so) have a light
side under a half (docs/performance.md, Latency).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from plates.recognition.crops import CROP_WIDTH

LIGHT_CHARACTERS_BELOW = 0.5  # a crop whose core is lighter than its threshold on less than this share is light on dark
# The core: a crop's rows but their top and bottom fifth (the cut's pads, the plate's rim), its width but the ends'.
CORE_ROWS = (0.2, 0.8)
CORE_MARGIN = 0.05
LEVELS = 256


def light_share(crops: torch.Tensor, lines: Sequence[int]) -> torch.Tensor:
    """[N] the share of each crop's core on the light side of Otsu's threshold over its grey levels: [N, C, H, W]
    crops scaled to [-1, 1], each of `lines` rows of CROP_WIDTH laid left to right (plates.recognition.rows)."""
    shares = crops.new_empty(crops.shape[0])
    height = crops.shape[2]
    top, bottom = int(height * CORE_ROWS[0]), int(height * CORE_ROWS[1])
    for rows in set(lines):
        chosen = torch.tensor([n for n, count in enumerate(lines) if count == rows], device=crops.device)
        width = CROP_WIDTH * rows
        margin = int(width * CORE_MARGIN)
        grey = crops[chosen, :, top:bottom, margin : width - margin].mean(1).flatten(1)
        shares[chosen] = _otsu_light_share(grey)
    return shares


def _otsu_light_share(grey: torch.Tensor) -> torch.Tensor:
    """[N] the share of each row of [N, P] grey values in [-1, 1] above Otsu's threshold over LEVELS levels (as
    OpenCV's THRESH_OTSU picks it on the same 8-bit levels)."""
    levels = ((grey + 1) * ((LEVELS - 1) / 2)).round().clamp(0, LEVELS - 1).long()
    counts = torch.zeros(grey.shape[0], LEVELS, dtype=torch.float64, device=grey.device)
    counts.scatter_add_(1, levels, torch.ones_like(levels, dtype=torch.float64))
    share = counts / grey.shape[1]
    at_or_below = share.cumsum(1)
    level_sums = (share * torch.arange(LEVELS, dtype=torch.float64, device=grey.device)).cumsum(1)
    mean = level_sums[:, -1:]
    # Between-class variance at each threshold; none where one side is empty.
    spread = at_or_below * (1 - at_or_below)
    between = torch.where(
        spread > 0, (mean * at_or_below - level_sums) ** 2 / spread.clamp_min(1e-12), torch.zeros_like(spread)
    )
    threshold = between.argmax(1, keepdim=True)
    return (1 - at_or_below.gather(1, threshold)).squeeze(1).to(grey.dtype)
