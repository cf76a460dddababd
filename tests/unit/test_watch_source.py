import threading
import time

import cv2
import numpy as np
import pytest

from plates.exceptions import InvalidInputError, SourceUnavailableError
from plates.watch.source import VideoSource, open_source, without_password


def write_video(path, count: int = 20, fps: int = 10):
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (64, 48))
    for i in range(count):
        writer.write(np.full((48, 64, 3), i * 10, np.uint8))
    writer.release()
    return path


def test_video_file_is_sampled_at_fps_by_its_own_clock(tmp_path):
    source = open_source(str(write_video(tmp_path / "v.avi")), fps=2)
    frames = list(source.frames())
    assert [f.index for f in frames] == [0, 5, 10, 15]
    assert [f.media_time for f in frames] == [0.0, 0.5, 1.0, 1.5]
    assert not source.live and source.total == 4


def test_video_file_gives_every_frame_when_fps_exceeds_its_own(tmp_path):
    frames = list(open_source(str(write_video(tmp_path / "v.avi", count=5)), fps=30).frames())
    assert [f.index for f in frames] == [0, 1, 2, 3, 4]


def test_folder_gives_its_images_in_name_order_at_fps(tmp_path):
    for name in ("b.jpg", "a.png", "notes.txt"):
        if name.endswith("txt"):
            (tmp_path / name).write_text("not a frame")
        else:
            cv2.imwrite(str(tmp_path / name), np.zeros((8, 8, 3), np.uint8))
    frames = list(open_source(str(tmp_path), fps=4).frames())
    assert [(f.index, f.media_time) for f in frames] == [(0, 0.0), (1, 0.25)]


def test_folder_without_images_is_an_error(tmp_path):
    with pytest.raises(InvalidInputError, match="no images"):
        open_source(str(tmp_path), fps=1)


def test_missing_file_is_an_error_naming_it(tmp_path):
    with pytest.raises(InvalidInputError, match="nope.mp4: no such file"):
        open_source(str(tmp_path / "nope.mp4"), fps=1)


def test_file_that_is_no_video_is_an_error_naming_it(tmp_path):
    (tmp_path / "v.mp4").write_text("not a video")
    with pytest.raises(InvalidInputError, match="v.mp4: cannot open it as a video"):
        open_source(str(tmp_path / "v.mp4"), fps=1)


def test_stream_that_cannot_be_opened_is_unavailable():
    with pytest.raises(SourceUnavailableError, match="http://127.0.0.1:9/cam: cannot open"):
        open_source("http://127.0.0.1:9/cam", fps=1)


def test_fps_must_be_positive():
    with pytest.raises(InvalidInputError, match="--fps must be above 0"):
        open_source("0", fps=0)


class DeadCapture:
    """A capture that opened, then never gives a frame: a stream that dropped."""

    def isOpened(self) -> bool:
        return True

    def get(self, prop) -> float:
        return 0.0

    def grab(self) -> bool:
        return False

    def release(self) -> None:
        pass


def test_a_live_source_waiting_to_reopen_ends_when_stopped():
    source = VideoSource("rtsp://cam/gate", DeadCapture, fps=5, live=True)
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    started = time.monotonic()
    assert list(source.frames(stop)) == []
    assert time.monotonic() - started < 0.9  # the first reopen waits 1 s; a stop cuts it short


def test_a_stream_urls_password_is_starred_out_of_what_events_and_logs_show():
    assert without_password("rtsp://admin:s3cret@10.0.0.5:554/stream1") == "rtsp://admin:***@10.0.0.5:554/stream1"
    assert without_password("rtsp://10.0.0.5/stream1") == "rtsp://10.0.0.5/stream1"
    assert without_password("videos/gate.mp4") == "videos/gate.mp4"


def test_a_stream_that_cannot_be_opened_is_named_without_its_password():
    with pytest.raises(SourceUnavailableError, match=r"http://user:\*\*\*@127.0.0.1:9/cam: cannot open") as raised:
        open_source("http://user:s3cret@127.0.0.1:9/cam", fps=1)
    assert "s3cret" not in str(raised.value)
