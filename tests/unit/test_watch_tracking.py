import threading
import time

import numpy as np
import pytest

from plates.client.service import Plate
from plates.exceptions import OverloadedError
from plates.watch.sinks import Sink
from plates.watch.source import Frame
from plates.watch.tracking import PlateTracker
from plates.watch.watcher import Watcher

IMAGE = np.zeros((120, 200, 3), np.uint8)


def plate(x: float, text: str | None = "B840CK197", text_score: float = 0.3, y: float = 50.0) -> Plate:
    return Plate(text, [x, y, x + 38, y + 12], 0.6, text_score)


class Collect(Sink):
    def __init__(self) -> None:
        self.events = []

    def emit(self, event, crop) -> None:
        self.events.append((event, crop))

    def close(self) -> None:
        pass


def frames(count: int, fps: float = 5.0):
    return [Frame(i, i / fps, 1_700_000_000 + i / fps, IMAGE) for i in range(count)]


def watch(plates_by_frame: dict[int, list[Plate]], count: int):
    """The events of `count` frames whose recognitions are `plates_by_frame` (each frame's index is its pixel)."""
    sink = Collect()
    video = [Frame(i, i / 5, 1_700_000_000 + i / 5, np.full((1, 1, 3), i, np.uint8)) for i in range(count)]
    recognize = lambda image: plates_by_frame.get(int(image[0, 0, 0]), [])  # noqa: E731
    summary = Watcher("test", recognize, PlateTracker(fps=5.0, lost_after=1.0), [sink]).run(video, live=False)
    return [event for event, _ in sink.events], summary, sink


def test_tracker_follows_a_moving_plate_as_one_track():
    tracker = PlateTracker(fps=5.0, lost_after=1.0)
    steps = [tracker.step([plate(20 + 8 * i)]) for i in range(6)]
    ids = {track_id for step in steps for track_id in step.matched}
    assert len(ids) == 1 and ids <= steps[-1].confirmed


def test_tracker_keeps_two_plates_apart():
    tracker = PlateTracker(fps=5.0, lost_after=1.0)
    steps = [tracker.step([plate(10 + 5 * i), plate(150 - 5 * i, y=90)]) for i in range(4)]
    assert len(steps[-1].matched) == 2 and len(steps[-1].confirmed) == 2


def test_tracker_lets_a_plate_go_after_it_is_unseen_for_lost_after():
    tracker = PlateTracker(fps=5.0, lost_after=1.0)
    for i in range(3):
        tracker.step([plate(20 + 4 * i)])
    followed = [tracker.step([]).followed for _ in range(7)]
    assert followed[0] and not followed[-1]


def test_tracker_counts_skipped_frames_toward_lost_after():
    # Seen in sampled frames 0 to 2, then the service read only every fourth frame: the track ends once 1 s (5
    # sampled frames) passed since its last sighting, not after 5 frames read.
    tracker = PlateTracker(fps=5.0, lost_after=1.0)
    for i in range(3):
        tracker.step([plate(20 + 4 * i)], sampled=i)
    assert tracker.step([], sampled=6).followed
    assert not tracker.step([], sampled=10).followed


def test_tracker_matches_a_low_scoring_plate_on_its_overlap_alone():
    # 16 px a sampled frame, a score of 0.5: the boxes overlap 0.41, which the score would have halved below the match.
    tracker = PlateTracker(fps=2.0, lost_after=1.0)
    steps = [tracker.step([Plate("B840CK197", [20 + 16 * i, 50, 58 + 16 * i, 62], 0.5, 0.3)]) for i in range(6)]
    assert {track_id for step in steps for track_id in step.matched} == {1}


def test_tracker_confirms_a_plate_on_its_second_frame_even_at_the_start():
    tracker = PlateTracker(fps=5.0, lost_after=1.0)
    assert tracker.step([plate(20)]).confirmed == set()
    assert tracker.step([plate(24)]).confirmed == {1}


def test_tracker_numbers_its_tracks_from_1_and_forgets_the_ended_ones():
    tracker = PlateTracker(fps=5.0, lost_after=0.4)
    ids = []
    for _ in range(20):  # 20 cars, each seen in 3 frames, 5 empty frames between
        ids += [track_id for i in range(3) for track_id in tracker.step([plate(20 + 4 * i)]).matched]
        followed = [tracker.step([]).followed for _ in range(5)][-1]
        assert not followed
    assert sorted(set(ids)) == list(range(1, 21)) and tracker._ids == {}


def test_tracker_rejects_an_unknown_kind_naming_the_one_it_has():
    with pytest.raises(ValueError, match="tracker must be one of bytetrack, got 'botsort'"):
        PlateTracker("botsort")


def test_a_plate_across_frames_is_one_event_with_the_voted_text():
    readings = {i: [plate(20 + 6 * i, "B840OK197" if i == 4 else "B840CK197")] for i in range(3, 9)}
    events, summary, sink = watch(readings, 15)
    assert [(e.text, e.readings, e.first_seen, e.last_seen) for e in events] == [("B840CK197", 6, 0.6, 1.6)]
    assert summary.frames == 15 and summary.skipped == 0


def test_a_detection_in_a_single_frame_makes_no_event():
    events, _, _ = watch({5: [plate(40)]}, 10)
    assert events == []


def test_two_plates_make_two_events():
    readings = {i: [plate(10 + 5 * i), plate(150 - 5 * i, "A123BC77", y=90)] for i in range(1, 6)}
    events, _, _ = watch(readings, 8)
    assert sorted(e.text for e in events) == ["A123BC77", "B840CK197"]


def test_open_tracks_end_as_events_when_stopped():
    stop = threading.Event()

    def stopped():
        for frame in frames(6):
            if frame.index == 5:
                stop.set()  # as the site does on Ctrl-C
            yield frame

    sink = Collect()
    watcher = Watcher("test", lambda image: [plate(30)], PlateTracker(fps=5.0), [sink], stop=stop)
    summary = watcher.run(stopped(), live=True)
    assert summary.interrupted and summary.frames == 5 and [e.text for e, _ in sink.events] == ["B840CK197"]


def test_live_source_skips_frames_while_the_service_is_busy():
    def slow(image):
        time.sleep(0.05)
        return []

    def live_frames():
        for frame in frames(20):
            time.sleep(0.01)
            yield frame

    summary = Watcher("test", slow, PlateTracker(), [Collect()], max_in_flight=1).run(live_frames(), live=True)
    assert summary.skipped > 0 and summary.frames + summary.skipped == 20


def test_file_source_reads_every_frame_however_slow_the_service():
    def slow(image):
        time.sleep(0.01)
        return []

    summary = Watcher("test", slow, PlateTracker(), [Collect()], max_in_flight=1).run(frames(10), live=False)
    assert (summary.frames, summary.skipped) == (10, 0)


def refusing_every_other_frame(calls: list | None = None):
    calls = [] if calls is None else calls

    def recognize(image):
        calls.append(1)
        if len(calls) % 2 == 0:
            raise OverloadedError("server at http://localhost:8000 is overloaded")
        return []

    return recognize


def test_live_source_skips_a_frame_the_service_refused_and_goes_on():
    calls = []
    summary = Watcher("test", refusing_every_other_frame(calls), PlateTracker(), [Collect()]).run(frames(10), live=True)
    refused = len(calls) // 2
    assert refused >= 1 and summary.frames == len(calls) - refused
    # Every frame is either read or skipped: refused, or come while the requests in flight were full.
    assert summary.frames + summary.skipped == 10


def test_file_source_stops_on_a_refusal_its_retries_did_not_get_past():
    with pytest.raises(OverloadedError):
        Watcher("test", refusing_every_other_frame(), PlateTracker(), [Collect()]).run(frames(10), live=False)


def test_max_delay_reports_a_long_track_once_before_it_ends():
    sink = Collect()

    def live_frames():
        for frame in frames(12):
            time.sleep(0.02)
            yield Frame(frame.index, frame.media_time, time.time(), frame.image)

    watcher = Watcher("test", lambda image: [plate(30)], PlateTracker(), [sink], max_delay=0.1)
    watcher.run(live_frames(), live=True)
    events = [e for e, _ in sink.events]
    assert len(events) == 1 and events[0].readings < 12


def test_crops_are_kept_only_when_asked():
    readings = {i: [plate(20 + 4 * i)] for i in range(4)}
    sink = Collect()
    watcher = Watcher("t", lambda image: readings[0], PlateTracker(), [sink], keep_crops=True)
    watcher.run(frames(4), live=False)
    assert sink.events[0][1].shape == (12, 38, 3)


@pytest.mark.parametrize("step", [15, 30, 45])
def test_a_plate_that_moves_more_than_its_height_between_frames_stays_one_track(step):
    # A car leaving a checkpoint camera, sampled at 5 fps: its 12-px-tall plate 15 to 45 px higher in each frame.
    tracker = PlateTracker(fps=5.0, lost_after=1.0)
    steps = [tracker.step([plate(60, y=300 - step * i)]) for i in range(6)]
    ids = {track_id for s in steps for track_id in s.matched}
    assert len(ids) == 1 and ids <= steps[-1].confirmed


def test_a_plate_gone_and_another_far_away_are_two_tracks():
    tracker = PlateTracker(fps=5.0, lost_after=1.0)
    first = [tracker.step([plate(10)]) for _ in range(3)]
    second = [tracker.step([plate(150, y=100)]) for _ in range(3)]
    assert {t for s in first for t in s.matched}.isdisjoint({t for s in second for t in s.matched})


def test_a_far_move_does_not_take_a_track_matched_in_the_same_frame():
    tracker = PlateTracker(fps=5.0, lost_after=1.0)
    for i in range(3):
        tracker.step([plate(20, y=50 + i)])
    # The plate stays put and a second one appears just below it: two tracks, not one plate continued twice.
    step = tracker.step([plate(20, y=53), plate(20, y=80)])
    assert len(set(step.matched)) == 2
