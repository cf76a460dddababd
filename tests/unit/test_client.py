import contextlib
import json
import os
import threading

import cv2
import numpy as np
import pytest

from plates.cli.client import format_json, format_plain, main
from plates.client.service import PlatesClient, plates_from_outputs
from plates.exceptions import OutputError, PlatesError, ServerUnavailableError


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
        "plates": [{"text": None, "box": [1.0, 2.0, 3.0, 4.0], "score": 0.5, "text_score": 0.0, "region": None}],
    }
    assert "(unread)" in format_plain("a.jpg", plates)


def test_a_read_plate_names_its_region_in_json_and_plain_output():
    plates = plates_from_outputs(np.array([[1, 2, 3, 4]]), np.array([b"B840CK197"]), np.array([0.6]), np.array([0.4]))
    assert json.loads(format_json("a.jpg", plates))["plates"][0]["region"] == {"code": "197", "name": "Moscow"}
    assert format_plain("a.jpg", plates).splitlines()[-1].endswith("text_score=0.40  Moscow (197)")


def test_client_exits_non_zero_naming_the_url_when_no_server_answers(samples, capsys):
    status = main([str(samples / "car.jpg"), "--url", "localhost:9"])
    assert status == ServerUnavailableError.exit_code
    assert "no ready Triton server at http://localhost:9" in capsys.readouterr().err


def test_draw_plates_marks_read_and_unread_boxes_without_touching_the_input():
    from plates.client.drawing import READ, UNREAD, draw_plates
    from plates.client.service import Plate

    image = np.zeros((200, 300, 3), np.uint8)
    drawn = draw_plates(image, [Plate("B840CK197", [20, 100, 120, 130], 0.9), Plate(None, [150, 100, 250, 130], 0.5)])
    assert image.sum() == 0
    assert tuple(drawn[130, 60]) == READ and tuple(drawn[130, 200]) == UNREAD


@pytest.fixture
def offline_client(monkeypatch):
    """plates-client against no server: every photo that reaches the server is answered with no plates."""
    sent = []
    monkeypatch.setattr("plates.cli.client.require_ready", lambda url: None)
    monkeypatch.setattr("plates.client.service.PlatesClient.recognize", lambda self, image: sent.append(image) or [])
    return sent


def one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    return lines[0]


@pytest.mark.parametrize("flags", [[], ["--raw"], ["--draw", "drawn"]])
def test_client_names_a_truncated_photo_and_exits_65_before_sending_pixels(
    offline_client, samples, tmp_path, capsys, flags
):
    photo = tmp_path / "cut.jpg"
    data = (samples / "car.jpg").read_bytes()
    photo.write_bytes(data[: len(data) * 3 // 10])
    flags = [str(tmp_path / f) if f == "drawn" else f for f in flags]
    status = main([str(photo), *flags])
    if flags:  # pixels are decoded here, and the decoder refuses the photo
        assert status == 65 and offline_client == []
        assert f"{photo} is a truncated JPEG" in one_error_line(capsys)
    else:  # the bytes go to the server, which refuses them (tests/integration: test_truncated_photo_...)
        assert offline_client == [data[: len(data) * 3 // 10]]


def test_client_names_a_directory_as_a_directory(offline_client, tmp_path, capsys):
    assert main([str(tmp_path)]) == 65
    assert one_error_line(capsys) == f"error: {tmp_path}: is a directory, not a photo"


def test_client_names_a_missing_photo_and_reads_the_next(offline_client, samples, tmp_path, capsys):
    assert main([str(tmp_path / "absent.jpg"), str(samples / "car.jpg")]) == 65
    assert one_error_line(capsys) == f"error: {tmp_path / 'absent.jpg'}: no such file"
    assert offline_client == [(samples / "car.jpg").read_bytes()]


def test_client_sends_pixels_with_raw(offline_client, samples):
    assert main([str(samples / "car.jpg"), "--raw"]) == 0
    assert offline_client[0].shape == (439, 780, 3)


def test_client_refuses_a_draw_folder_under_a_file_in_one_line(offline_client, samples, tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert main([str(samples / "car.jpg"), "--draw", str(tmp_path / "file" / "out")]) == OutputError.exit_code
    assert "cannot create the folder for drawings: Not a directory" in one_error_line(capsys)
    assert offline_client == []


def test_client_refuses_a_draw_folder_that_is_a_file_in_one_line(offline_client, samples, tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert main([str(samples / "car.jpg"), "--draw", str(tmp_path / "file")]) == OutputError.exit_code
    assert "it is a file, not a folder" in one_error_line(capsys)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_client_refuses_a_read_only_draw_folder_in_one_line(offline_client, samples, tmp_path, capsys):
    (tmp_path / "locked").mkdir(mode=0o500)
    assert main([str(samples / "car.jpg"), "--draw", str(tmp_path / "locked" / "out")]) == OutputError.exit_code
    assert "cannot create the folder for drawings: Permission denied" in one_error_line(capsys)


def test_client_names_a_drawing_it_cannot_write_and_exits_73(offline_client, samples, tmp_path, capsys):
    (tmp_path / "car.plates.jpg").mkdir()  # where the drawing would go
    assert main([str(samples / "car.jpg"), "--draw", str(tmp_path)]) == OutputError.exit_code
    assert f"{tmp_path / 'car.plates.jpg'}: cannot write the drawing: Is a directory" in one_error_line(capsys)


def test_client_draws_the_photo_it_sent_as_bytes(offline_client, samples, tmp_path):
    assert main([str(samples / "car.jpg"), "--draw", str(tmp_path / "out")]) == 0
    assert cv2.imread(str(tmp_path / "out" / "car.plates.jpg")).shape == (439, 780, 3)
    assert offline_client == [(samples / "car.jpg").read_bytes()]


def test_clients_made_and_closed_in_threads_of_their_own_leave_no_file_open():
    """A server that makes a client in each request's thread must not run out of file descriptors: tritonclient's
    gevent gives each thread a hub holding two until it is destroyed."""

    def one_client() -> None:
        with PlatesClient("localhost:1", timeout=1) as client:
            with contextlib.suppress(Exception):  # nothing listens there: the request opens the hub all the same
                client.ready()

    def open_files() -> int:
        return len(os.listdir("/proc/self/fd"))

    one_client()  # the main thread's hub, kept for the process
    before = open_files()
    for _ in range(20):
        thread = threading.Thread(target=one_client)
        thread.start()
        thread.join()
    assert open_files() - before < 5, f"{open_files() - before} files left open by 20 threads' clients"
