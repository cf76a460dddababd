"""Time the CPU decoders plates.decoding chose between, and see what each does with a truncated photo.

poetry run python docs/compare_decoders.py   (README, "Photos as files"; figures, not assertions)
"""

import io
import os
import time
from pathlib import Path

import cv2
import numpy as np
import torch
from PIL import Image
from torchvision.io import ImageReadMode, decode_image

from plates import decoding
from plates.weights import PROJECT_ROOT

SAMPLES = Path(os.environ.get("PLATES_SHARED_DIR", PROJECT_ROOT.parent / "shared")) / "data" / "samples"
torch.set_num_threads(1)
photo = cv2.imread(str(SAMPLES / "car.jpg"))
FILES = {
    "car.jpg": (SAMPLES / "car.jpg").read_bytes(),
    "1920x1080 JPEG": cv2.imencode(
        ".jpg", cv2.resize(photo, (1920, 1080), interpolation=cv2.INTER_CUBIC), [cv2.IMWRITE_JPEG_QUALITY, 90]
    )[1].tobytes(),
    "car.jpg as PNG": cv2.imencode(".png", photo)[1].tobytes(),
}


def torchvision(data: bytes) -> torch.Tensor:
    """CHW RGB, as torchvision gives it."""
    return decode_image(torch.frombuffer(bytearray(data), dtype=torch.uint8), mode=ImageReadMode.RGB)


DECODERS = {
    "torchvision": torchvision,
    # HWC BGR as the service takes it, the channels swapped by torch (plates.decoding until issue 15's last lever)
    "+ torch flip": lambda b: torchvision(b).flip(0).permute(1, 2, 0).contiguous(),
    # HWC BGR: the service's decode_image, header and end-of-image check included, the channels swapped by OpenCV
    "decode_image": lambda b: decoding.decode_image(b, torch.device("cpu")),
    "cv2.imdecode": lambda b: cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_COLOR),
    "PIL": lambda b: np.asarray(Image.open(io.BytesIO(b)).convert("RGB")),
}
for name, data in FILES.items():
    print(f"{name}: {len(data):,} bytes")
    for decoder, decode in DECODERS.items():
        decode(data)
        runs = 30 if len(data) < 400_000 else 20
        start = time.perf_counter()
        for _ in range(runs):
            decode(data)
        ms = (time.perf_counter() - start) / runs * 1000
        try:
            result = decode(data[: len(data) * 3 // 10])
            verdict = "returns None" if result is None else f"decodes it silently as {tuple(result.shape)}"
        except Exception as error:
            verdict = f"raises {type(error).__name__}: {str(error)[:60]}"
        print(f"  {decoder:<13} {ms:6.2f} ms; its first 30%: {verdict}")
