"""Time the CPU decoders plates.decoding chose between, and see what each does with a truncated or corrupt photo.

poetry run python benchmarks/compare_decoders.py   (docs/performance.md, Decoding; figures, not assertions)
"""

import io
import os
import time
from pathlib import Path

import cv2
import numpy as np
import simplejpeg
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
    # HWC BGR: the service's decode_image on the CPU, header and end-of-image check included (simplejpeg for JPEG)
    "decode_image": lambda b: decoding.decode_image(b, torch.device("cpu")),
    "cv2.imdecode": lambda b: cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_COLOR),
    "simplejpeg": lambda b: simplejpeg.decode_jpeg(b, colorspace="BGR", strict=True),
    "PIL": lambda b: np.asarray(Image.open(io.BytesIO(b)).convert("RGB")),
}

def damaged(data: bytes) -> dict[str, bytes]:
    """The first 30%; the same with an end-of-image marker appended; 2,000 random bytes written into the middle."""
    middle, noisy = len(data) // 2, bytearray(data)
    noisy[middle : middle + 2000] = np.random.default_rng(1).integers(0, 256, 2000, dtype=np.uint8).tobytes()
    cut = data[: len(data) * 3 // 10]
    return {"its first 30%": cut, "+ FF D9": cut + b"\xff\xd9", "random middle": bytes(noisy)}


for name, data in FILES.items():
    print(f"{name}: {len(data):,} bytes")
    for decoder, decode in DECODERS.items():
        if decoder == "simplejpeg" and "PNG" in name:
            continue
        decode(data)
        runs = 30 if len(data) < 400_000 else 20
        start = time.perf_counter()
        for _ in range(runs):
            decode(data)
        ms = (time.perf_counter() - start) / runs * 1000
        verdicts = []
        for damage, bad in damaged(data).items():
            try:
                result = decode(bad)
                verdicts.append(f"{damage}: " + ("None" if result is None else "decoded silently"))
            except Exception as error:
                verdicts.append(f"{damage}: raises {str(error).splitlines()[0][:50]}")
        print(f"  {decoder:<13} {ms:6.2f} ms; " + "; ".join(verdicts))
