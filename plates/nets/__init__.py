"""Network definitions of the recognizer, matching the pretrained checkpoints' state dicts."""

from plates.nets.lprnet import LPRNet
from plates.nets.stn import SpatialTransformer

__all__ = ["LPRNet", "SpatialTransformer"]
