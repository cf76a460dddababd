import numpy as np

from plates.client.service import Plate
from plates.recognition.regions import Region
from plates.watch.events import Reading, Track, crop_plate, vote


def reading(index: int, text: str | None, text_score: float, box=(10.0, 20.0, 50.0, 32.0), candidates=()) -> Reading:
    plate = Plate(text, list(box), 0.6, text_score, list(candidates))
    return Reading(index, index / 5, 1_700_000_000 + index / 5, plate)


# Each sampled frame's top 3 candidates in the test video (tests/integration/videos.py, --fps 2) from the served models.
VIDEO_CANDIDATES = {
    10: [("B840CK197", 0.468), ("B840OK193", 0.097), ("B840OK197", 0.08)],
    15: [("B840OK197", 0.328), ("B840CK197", 0.26), ("B840OK193", 0.046)],
    20: [("B840OK197", 0.2254), ("B840OK193", 0.178), ("B840OX197", 0.099)],
    25: [("B840CK117", 0.179), ("B840CK197", 0.163), ("B840EK193", 0.119)],
    30: [("B840CK117", 0.179), ("B840CK193", 0.169), ("B840CK197", 0.156)],
    35: [("B840OK117", 0.0773), ("B840OK197", 0.068), ("B840CK197", 0.065)],
}


def video_readings() -> list[Reading]:
    return [reading(i, c[0][0], c[0][1], candidates=c) for i, c in VIDEO_CANDIDATES.items()]


def test_vote_sums_every_candidate_not_only_each_readings_text():
    # By the frames' texts alone B840OK197 wins (0.55 against 0.47 and 0.36); by all they believed, B840CK197.
    text, text_score, best = vote(video_readings())
    assert (text, round(text_score, 4), best.frame_index) == ("B840CK197", round(1.112 / 6, 4), 10)


def close_call_readings() -> list[Reading]:
    candidates = [
        [("B840OK197", 0.4), ("B840CK197", 0.35)],
        [("B840CK197", 0.3), ("B840OK197", 0.2)],
        [("B840OK197", 0.3), ("B840CK197", 0.29)],
    ]
    return [reading(i, c[0][0], c[0][1], candidates=c) for i, c in enumerate(candidates)]


def test_vote_takes_the_reading_that_gave_the_text_the_most_as_its_best():
    text, text_score, best = vote(close_call_readings())
    assert (text, round(text_score, 4), best.frame_index) == ("B840CK197", 0.3133, 0)


def test_vote_takes_a_reading_without_candidates_as_its_text_alone():
    readings = [reading(0, "B840OK197", 0.1), reading(1, "B840OK197", 0.1), reading(2, "B840CK197", 0.3)]
    text, text_score, best = vote(readings)
    assert (text, round(text_score, 4), best.frame_index) == ("B840CK197", 0.1, 2)


def test_vote_counts_many_weak_readings_against_one_strong_one():
    readings = [reading(i, "A123BC77", 0.2) for i in range(3)] + [reading(3, "A128BC77", 0.5)]
    text, text_score, best = vote(readings)
    assert (text, round(text_score, 4), best.frame_index) == ("A123BC77", 0.15, 0)


def test_vote_leaves_out_the_candidates_of_plates_the_server_did_not_read():
    # Below min_text_score the server blanks the text as a likely phantom; its candidates must not outvote a reading.
    unread = [reading(i, None, 0.0, candidates=[("E777BB17", 0.025)]) for i in range(4)]
    text, text_score, best = vote(unread + [reading(4, "A123BC77", 0.06, candidates=[("A123BC77", 0.06)])])
    assert (text, text_score, best.frame_index) == ("A123BC77", 0.06, 4)


def test_vote_returns_no_text_when_no_reading_is_a_plate():
    text, text_score, best = vote([reading(0, None, 0.0), reading(1, None, 0.0)])
    assert (text, text_score, best.frame_index) == (None, 0.0, 0)


def test_track_event_has_the_voted_text_its_region_times_and_best_box():
    track = Track(7)
    track.add(reading(3, "B840CK197", 0.2))
    track.add(reading(4, "B840CK197", 0.4, box=(12.0, 20.0, 52.0, 32.0)))
    track.add(reading(5, "B840OK197", 0.1))
    event = track.event("rtsp://cam/stream", "gate")
    assert event.to_dict() == {
        "source": "rtsp://cam/stream",
        "camera_id": "gate",
        "track": 7,
        "text": "B840CK197",
        "text_score": 0.2,
        "region": {"code": "197", "name": "Moscow"},
        "first_seen": 0.6,
        "last_seen": 1.0,
        "first_seen_at": "2023-11-14T22:13:20.600Z",
        "last_seen_at": "2023-11-14T22:13:21.000Z",
        "best_frame": 4,
        "box": [12.0, 20.0, 52.0, 32.0],
        "readings": 3,
        "candidates": [{"text": "B840CK197", "score": 0.2}, {"text": "B840OK197", "score": 0.0333}],
        "watched": None,
        "motion": None,
    }
    assert event.region == Region("197", "Moscow")
    row = event.to_row()
    assert (row["region_code"], row["region_name"], row["box"]) == ("197", "Moscow", "12 20 52 32")


def test_track_keeps_the_crop_of_the_best_reading_of_the_voted_text():
    track = Track(1)
    crops = [np.full((4, 4, 3), value, np.uint8) for value in (1, 2, 3)]
    track.add(reading(0, "B840CK197", 0.2), crops[0])
    track.add(reading(1, "B840CK197", 0.3), crops[1])
    track.add(reading(2, "B840CK197", 0.25), crops[2])
    assert track.best_crop()[0, 0, 0] == 2


def test_track_keeps_the_crop_of_the_reading_that_gave_the_voted_text_the_most():
    # B840CK197 is frame 1's text, but frame 0 gave it more probability: the event's best frame, and its crop.
    track = Track(1)
    for value, r in enumerate(close_call_readings(), start=1):
        track.add(r, np.full((4, 4, 3), value, np.uint8))
    event = track.event("cam", "gate")
    assert (event.text, event.best_frame, track.best_crop()[0, 0, 0]) == ("B840CK197", 0, 1)


def test_crop_plate_clips_the_box_to_the_frame():
    image = np.zeros((40, 60, 3), np.uint8)
    assert crop_plate(image, [-5.0, 30.5, 20.2, 45.0]).shape == (10, 21, 3)
