"""A test video made from the sample photos: cat.jpeg for 1 s, car.jpg panned for 3 s, cat.jpeg for 1 s, at 10 fps.

`python tests/integration/videos.py ../shared/data/samples OUT.avi` writes it (docs/performance.md, Tracking,
measures the trackers on it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2
import imageio_ffmpeg
import numpy as np

from plates.server.launcher import free_port

FPS = 10
SIZE = (768, 432)
PLATE_FRAMES = range(10, 40)  # the frames car.jpg is in


def write_plate_video(samples: Path, path: Path, passes: int = 1) -> Path:
    """The video; with `passes`, its 5 s again and again: the car passes that many times, 2 s of cat between."""
    car = cv2.imread(str(samples / "car.jpg"))
    cat = cv2.resize(cv2.imread(str(samples / "cat.jpeg")), SIZE)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, SIZE)
    writer.set(cv2.VIDEOWRITER_PROP_QUALITY, 95)
    steps = len(PLATE_FRAMES) - 1
    for _ in range(passes):
        for _ in range(PLATE_FRAMES.start):
            writer.write(cat)
        for i in range(len(PLATE_FRAMES)):
            # Whole-pixel shifts, no scaling: resampling car.jpg's 38-px plate tips its C to an O for the recognizer.
            shift = np.float32([[1, 0, round(45 * i / steps)], [0, 1, -round(6 * i / steps)]])
            writer.write(cv2.warpAffine(car, shift, SIZE, borderMode=cv2.BORDER_REPLICATE))
        for _ in range(PLATE_FRAMES.start):
            writer.write(cat)
    writer.release()
    return path


def checkpoint_car(samples: Path, plate: str | None = None) -> np.ndarray:
    """car.jpg at twice its size, each pixel doubled, so that its plate reads as in car.jpg (76x24 px); with `plate`,
    that plate drawn in the GOST typeface (plates.training.synthetic) over it at 160 px wide, as a checkpoint camera
    a few metres away sees one."""
    car = cv2.imread(str(samples / "car.jpg"))
    car = cv2.resize(car, (car.shape[1] * 2, car.shape[0] * 2), interpolation=cv2.INTER_NEAREST)
    if plate is not None:
        from plates.training.synthetic import render_plate

        flat = render_plate(plate, "private", np.random.default_rng(7))
        drawn = cv2.GaussianBlur(cv2.resize(flat, (160, 34), interpolation=cv2.INTER_AREA), (3, 3), 0.6)
        top, left = 674 - 17, 227 - 80  # centred on car.jpg's own plate
        car[top : top + 34, left : left + 160] = drawn
    return car


def write_driving_video(
    samples: Path, path: Path, towards: bool, seconds: float = 2.0, fps: int = 30, plate: str | None = None
) -> Path:
    """A checkpoint camera's view of one vehicle (checkpoint_car: car.jpg doubled, or with `plate` drawn on it)
    driving away (its plate travelling 300 px up a 1280x720 frame in `seconds`) or towards the camera (down), at
    `fps` frames a second, with 1 s of cat.jpeg before and after. Whole-pixel shifts: resampling the plate changes
    what the recognizer reads, and what these videos test is the track. Sampled at 5 frames a second, the plate
    moves 30 px between two frames, more than car.jpg's plate's height: its two boxes do not overlap."""
    size = (1280, 720)
    car = checkpoint_car(samples, plate)
    cat = cv2.resize(cv2.imread(str(samples / "cat.jpeg")), size)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, size)
    writer.set(cv2.VIDEOWRITER_PROP_QUALITY, 95)
    frames = round(seconds * fps)
    for _ in range(fps):
        writer.write(cat)
    for i in range(frames):
        progress = i / (frames - 1)
        if towards:
            progress = 1 - progress
        # The plate (near (226, 674) in car.jpg doubled) from (640, 620) of the frame up to (600, 320).
        shift = np.float32([[1, 0, round(640 - 40 * progress) - 226], [0, 1, round(620 - 300 * progress) - 674]])
        writer.write(cv2.warpAffine(car, shift, size, borderValue=(128, 128, 128)))
    for _ in range(fps):
        writer.write(cat)
    writer.release()
    return path


def serve_live(video: Path) -> tuple[str, subprocess.Popen]:
    """`video` looped at its own pace as a live MPEG-TS stream over HTTP on 127.0.0.1, as a camera would send it
    (ffmpeg from the imageio-ffmpeg wheel, a locked dev dependency); its URL and the server."""
    url = f"http://127.0.0.1:{free_port()}/live.ts"
    command = [imageio_ffmpeg.get_ffmpeg_exe(), "-nostdin", "-loglevel", "error", "-re", "-stream_loop", "-1"]
    command += ["-i", str(video), "-c:v", "mpeg2video", "-q:v", "2", "-f", "mpegts", "-listen", "1", url]
    return url, subprocess.Popen(command)


if __name__ == "__main__":
    print(write_plate_video(Path(sys.argv[1]), Path(sys.argv[2])))
