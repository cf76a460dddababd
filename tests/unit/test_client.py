import json

import numpy as np
import pytest

from plates.cli.client import format_json, format_plain, main
from plates.client import plates_from_outputs
from plates.exceptions import PlatesError, ServerUnavailableError


def test_plates_from_outputs_maps_empty_text_to_none():
    plates = plates_from_outputs(
        np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.float32),
        np.array([b"B840CK197", b""]),
        np.array([0.9, 0.4]),
        np.array([0.8, 0.0]),
    )
    assert [p.text for p in plates] == ["B840CK197", None]
    assert plates[0].box == [1.0, 2.0, 3.0, 4.0] and plates[1].score == pytest.approx(0.4)
    assert plates[0].text_score == pytest.approx(0.8)


def test_plates_from_outputs_rejects_disagreeing_lengths():
    with pytest.raises(PlatesError, match="1 boxes, 0 texts, 1 scores and 1 text scores"):
        plates_from_outputs(np.zeros((1, 4)), np.array([]), np.array([0.5]), np.array([0.5]))


def test_plates_from_outputs_reads_candidates_without_their_padding():
    plates = plates_from_outputs(
        np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.float32),
        np.array([b"B840CK197", b""]),
        np.array([0.9, 0.4]),
        np.array([0.41, 0.0]),
        np.array([[b"B840CK197", b"B840OK197"], [b"MAF1A77", b""]], dtype=np.object_),
        np.array([[0.41, 0.27], [0.008, 0.0]], np.float32),
    )
    assert plates[0].candidates == [("B840CK197", 0.41), ("B840OK197", 0.27)]
    assert plates[1].text is None and plates[1].candidates == [("MAF1A77", 0.008)]


def test_plates_from_outputs_rejects_candidates_that_do_not_line_up():
    with pytest.raises(PlatesError, match=r"1 boxes, candidates \[2, 3\] and candidate scores \[2, 3\]"):
        plates_from_outputs(
            np.zeros((1, 4)), np.array([b""]), np.array([0.5]), np.array([0.0]), np.zeros((2, 3)), np.zeros((2, 3))
        )


def test_candidates_appear_in_json_and_plain_output_only_when_asked_for():
    plates = plates_from_outputs(
        np.array([[1, 2, 3, 4]]),
        np.array([b"A123BC77"]),
        np.array([0.5]),
        np.array([0.6]),
        np.array([[b"A123BC77", b"A123BC777", b""]], dtype=np.object_),
        np.array([[0.6, 0.1, 0.0]]),
    )
    assert "candidates" not in json.loads(format_json("a.jpg", plates))["plates"][0]
    assert json.loads(format_json("a.jpg", plates, candidates=1))["plates"][0]["candidates"] == [
        {"text": "A123BC77", "score": 0.6}
    ]
    assert "candidates" not in format_plain("a.jpg", plates)
    last = format_plain("a.jpg", plates, candidates=5).splitlines()[-1]
    assert last == "    candidates: A123BC77 0.600, A123BC777 0.100"


def test_json_line_has_the_documented_fields():
    plates = plates_from_outputs(np.array([[1, 2, 3, 4]]), np.array([b""]), np.array([0.5]), np.array([0.0]))
    assert json.loads(format_json("a.jpg", plates)) == {
        "image": "a.jpg",
        "plates": [{"text": None, "box": [1.0, 2.0, 3.0, 4.0], "score": 0.5, "text_score": 0.0}],
    }
    assert "(unread)" in format_plain("a.jpg", plates)


def test_client_exits_non_zero_naming_the_url_when_no_server_answers(samples, capsys):
    status = main([str(samples / "car.jpg"), "--url", "localhost:9"])
    assert status == ServerUnavailableError.exit_code
    assert "no ready Triton server at http://localhost:9" in capsys.readouterr().err


def test_draw_plates_marks_read_and_unread_boxes_without_touching_the_input():
    from plates.client import Plate
    from plates.drawing import READ, UNREAD, draw_plates

    image = np.zeros((200, 300, 3), np.uint8)
    drawn = draw_plates(image, [Plate("B840CK197", [20, 100, 120, 130], 0.9), Plate(None, [150, 100, 250, 130], 0.5)])
    assert image.sum() == 0
    assert tuple(drawn[130, 60]) == READ and tuple(drawn[130, 200]) == UNREAD
