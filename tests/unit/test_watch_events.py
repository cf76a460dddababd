import numpy as np

from plates.client import Plate
from plates.recognition.regions import Region
from plates.watch.events import Reading, Track, crop_plate, vote


def reading(index: int, text: str | None, text_score: float, box=(10.0, 20.0, 50.0, 32.0)) -> Reading:
    return Reading(index, index / 5, 1_700_000_000 + index / 5, Plate(text, list(box), 0.6, text_score))


def test_vote_weights_each_reading_by_its_text_score():
    readings = [reading(0, "B840OK197", 0.1), reading(1, "B840OK197", 0.1), reading(2, "B840CK197", 0.3)]
    text, text_score, best = vote(readings)
    assert (text, text_score, best.frame_index) == ("B840CK197", 0.3, 2)


def test_vote_counts_many_weak_readings_against_one_strong_one():
    readings = [reading(i, "A123BC77", 0.2) for i in range(3)] + [reading(3, "A128BC77", 0.5)]
    text, text_score, best = vote(readings)
    assert (text, round(text_score, 4), best.frame_index) == ("A123BC77", 0.2, 0)


def test_vote_returns_no_text_when_no_reading_is_a_plate():
    text, text_score, best = vote([reading(0, None, 0.0), reading(1, None, 0.0)])
    assert (text, text_score, best.frame_index) == (None, 0.0, 0)


def test_track_event_has_the_voted_text_its_region_times_and_best_box():
    track = Track(7)
    track.add(reading(3, "B840CK197", 0.2))
    track.add(reading(4, "B840CK197", 0.4, box=(12.0, 20.0, 52.0, 32.0)))
    track.add(reading(5, "B840OK197", 0.1))
    event = track.event("cam")
    assert event.to_dict() == {
        "source": "cam",
        "track": 7,
        "text": "B840CK197",
        "text_score": 0.3,
        "region": {"code": "197", "name": "Moscow"},
        "first_seen": 0.6,
        "last_seen": 1.0,
        "first_seen_at": "2023-11-14T22:13:20.600Z",
        "last_seen_at": "2023-11-14T22:13:21.000Z",
        "best_frame": 4,
        "box": [12.0, 20.0, 52.0, 32.0],
        "readings": 3,
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


def test_crop_plate_clips_the_box_to_the_frame():
    image = np.zeros((40, 60, 3), np.uint8)
    assert crop_plate(image, [-5.0, 30.5, 20.2, 45.0]).shape == (10, 21, 3)
