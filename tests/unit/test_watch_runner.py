import signal
import threading
import time

import numpy as np
import pytest

from plates.client.service import Plate
from plates.exceptions import InvalidInputError
from plates.watch.runner import Site, ctrl_c_held_back
from plates.watch.site import CameraSettings, SiteSettings
from plates.watch.source import Frame
from plates.watch.watchlist import WatchedPlate, Watchlist


class Collect:
    def __init__(self) -> None:
        self.events, self.lock = [], threading.Lock()

    def emit(self, event, crop) -> None:
        with self.lock:
            self.events.append(event)

    def close(self) -> None:
        pass


class FakeSource:
    """`count` frames of pixel `value`; `stall` makes it hang after its first frame until set."""

    def __init__(self, count: int, live: bool = False, stall: threading.Event | None = None, value: int = 0) -> None:
        self.count, self.live, self.stall, self.total, self.closed = count, live, stall, count, False
        self.image = np.full((120, 200, 3), value, np.uint8)

    def frames(self, stop=None):
        for i in range(self.count):
            if i == 1 and self.stall is not None:
                self.stall.wait(30)
            yield Frame(i, i / 5, time.time(), self.image)

    def close(self) -> None:
        self.closed = True


def plate_at(image) -> list[Plate]:
    return [Plate("B840CK197", [30.0, 50.0, 68.0, 62.0], 0.6, 0.3, [("B840CK197", 0.3), ("B84OCK197", 0.1)])]


def site(*cameras: CameraSettings, total: int = 4) -> SiteSettings:
    return SiteSettings(list(cameras), max_in_flight_total=total)


def test_every_camera_runs_and_every_event_carries_its_camera_id():
    sources = {"a.mp4": FakeSource(10), "b.mp4": FakeSource(10)}
    sink = Collect()
    runs = Site(
        site(CameraSettings("gate", "a.mp4"), CameraSettings("yard", "b.mp4")),
        lambda live: plate_at,
        [sink],
        open_source=lambda spec, fps: sources[spec],
    ).run()
    assert sorted(e.camera_id for e in sink.events) == ["gate", "yard"]
    assert [run.summary.frames for run in runs] == [10, 10] and all(s.closed for s in sources.values())


def test_a_stalled_camera_holds_up_none_of_the_others():
    stall = threading.Event()
    sources = {"stuck": FakeSource(3, live=True, stall=stall), "ok.mp4": FakeSource(10)}
    sink = Collect()
    runner = Site(
        site(CameraSettings("stuck", "stuck"), CameraSettings("ok", "ok.mp4")),
        lambda live: plate_at,
        [sink],
        open_source=lambda spec, fps: sources[spec],
    )
    thread = threading.Thread(target=runner.run)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not any(e.camera_id == "ok" for e in sink.events) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [e.camera_id for e in sink.events] == ["ok"]
    finally:
        stall.set()
        thread.join(30)


def test_requests_in_flight_stay_within_the_sites_total_across_cameras():
    out, most, lock = [0], [0], threading.Lock()

    def slow(image):
        with lock:
            out[0] += 1
            most[0] = max(most[0], out[0])
        time.sleep(0.02)
        with lock:
            out[0] -= 1
        return []

    cameras = [CameraSettings(f"c{i}", f"{i}.mp4", max_in_flight=2) for i in range(4)]
    Site(site(*cameras, total=3), lambda live: slow, [], open_source=lambda spec, fps: FakeSource(15)).run()
    assert most[0] == 3  # 4 cameras of 2 would put 8 out at once


def test_watched_plates_are_marked_by_the_sites_watchlist():
    sink = Collect()
    watchlist = Watchlist([WatchedPlate("B84OCK197", "boss")], max_distance=0)
    Site(
        site(CameraSettings("gate", "a.mp4")),
        lambda live: plate_at,
        [sink],
        watchlist,
        open_source=lambda spec, fps: FakeSource(10),
    ).run()
    # The exact match is the event's second candidate, not its text.
    assert [(e.text, e.watched.to_dict()) for e in sink.events] == [
        ("B840CK197", {"plate": "B84OCK197", "label": "boss", "distance": 0.0})
    ]


def test_a_camera_that_fails_stops_alone_and_its_error_is_kept():
    def recognize(image):
        if image[0, 0, 0] == 1:
            raise RuntimeError("server gone")
        return plate_at(image)

    sources = {"bad.mp4": FakeSource(10, value=1), "good.mp4": FakeSource(10)}
    sink = Collect()
    runs = Site(
        site(CameraSettings("bad", "bad.mp4"), CameraSettings("good", "good.mp4")),
        lambda live: recognize,
        [sink],
        open_source=lambda spec, fps: sources[spec],
    ).run()
    assert [str(run.error) if run.error else None for run in runs] == ["server gone", None]
    assert [e.camera_id for e in sink.events] == ["good"]


def test_a_source_that_cannot_be_opened_stops_the_site_before_any_camera_starts():
    opened = []

    def open_source(spec, fps):
        if spec == "missing.mp4":
            raise InvalidInputError("missing.mp4: no such file or folder")
        opened.append(FakeSource(10))
        return opened[-1]

    with pytest.raises(InvalidInputError, match="missing.mp4"):
        Site(
            site(CameraSettings("a", "a.mp4"), CameraSettings("b", "missing.mp4")),
            lambda live: plate_at,
            [],
            open_source=open_source,
        ).run()
    assert opened[0].closed


class EndlessLive(FakeSource):
    def __init__(self) -> None:
        super().__init__(0, live=True)
        self.read_a_frame = threading.Event()

    def frames(self, stop=None):
        for i in range(100_000):
            if i == 1:  # the camera asks for its second frame: it has read its first
                self.read_a_frame.set()
            time.sleep(0.01)
            yield Frame(i, i / 100, time.time(), self.image)


def test_ctrl_c_ends_every_camera_with_its_summary(ctrl_c_raises):
    # SIGINT to this (the main) thread while the site waits for its cameras, as a Ctrl-C on the terminal, once each
    # camera has read a frame (a fixed delay was too short for a first test to start its cameras on a busy machine).
    sources: list[EndlessLive] = []

    def open_source(spec, fps):
        sources.append(EndlessLive())
        return sources[-1]

    def ctrl_c_once_both_read(main=threading.main_thread().ident, deadline=time.monotonic() + 60):
        while len(sources) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        for source in sources:
            source.read_a_frame.wait(max(0.0, deadline - time.monotonic()))
        signal.pthread_kill(main, signal.SIGINT)

    threading.Thread(target=ctrl_c_once_both_read, daemon=True).start()
    runs = Site(
        site(CameraSettings("a", "a"), CameraSettings("b", "b")),
        lambda live: plate_at,
        [Collect()],
        open_source=open_source,
    ).run()
    assert [run.summary.interrupted for run in runs] == [True, True] and all(run.summary.frames for run in runs)


def test_ctrl_c_while_cameras_start_is_taken_once_they_all_have(ctrl_c_raises):
    main = threading.main_thread().ident
    reached_the_end = False
    with pytest.raises(KeyboardInterrupt):
        with ctrl_c_held_back():
            signal.pthread_kill(main, signal.SIGINT)
            time.sleep(0.2)  # the interrupt would be raised here, between two cameras' starts
            reached_the_end = True
    assert reached_the_end


def test_events_name_a_stream_without_its_password():
    sink = Collect()
    Site(
        site(CameraSettings("gate", "rtsp://admin:s3cret@cam/1")),
        lambda live: plate_at,
        [sink],
        open_source=lambda spec, fps: FakeSource(10),
    ).run()
    assert [e.source for e in sink.events] == ["rtsp://admin:***@cam/1"]
