import argparse
import re
from pathlib import Path

import pytest

from plates.cli.watch import add_watch_parser, site_settings
from plates.exceptions import SettingsError
from plates.watch.site import CameraSettings, load_site
from plates.watch.watchlist import WatchedPlate

SITE = """
max_in_flight_total: 3
max_distance: 1
mqtt: mqtt://plates@127.0.0.1:1883
watchlist:
  - A505PO198 delivery
  - {plate: в840ск197, label: boss}
cameras:
  - camera_id: gate
    source: rtsp://cam/gate
    fps: 4
    csv: gate.csv
  - camera_id: yard
    source: 0
    max_delay: 10
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "site.yaml"
    path.write_text(text)
    return path


def test_site_file_gives_its_cameras_and_what_they_share(tmp_path):
    site = load_site(write(tmp_path, SITE))
    assert site.cameras == [
        CameraSettings("gate", "rtsp://cam/gate", fps=4.0, csv=tmp_path / "gate.csv"),
        CameraSettings("yard", "0", max_delay=10.0),
    ]
    assert (site.max_in_flight_total, site.max_distance, site.mqtt) == (3, 1.0, "mqtt://plates@127.0.0.1:1883")
    assert site.watchlist == [WatchedPlate("A505PO198", "delivery"), WatchedPlate("B840CK197", "boss")]


@pytest.mark.parametrize(
    "text, error",
    [
        ("cameras: [", "not valid YAML"),
        ("- a\n- b\n", "must be a mapping with a `cameras` list"),
        ("cameras: []\n", "cameras must be a list of one camera or more"),
        ("camera: []\n", "unknown option camera"),
        ("cameras:\n  - {source: a.mp4}\n", "cameras, item 1: camera_id is missing"),
        ("cameras:\n  - {camera_id: gate, source: a.mp4, fsp: 5}\n", "cameras, item 1: unknown option fsp"),
        ("cameras:\n  - {camera_id: gate, source: a.mp4, fps: yes}\n", "fps: must be a number, got True"),
        ("cameras:\n  - {camera_id: gate, source: a.mp4, fps: 0}\n", "camera gate: fps .* must be above 0"),
        ("cameras:\n  - {camera_id: gate/1, source: a.mp4}\n", "camera_id 'gate/1' must be"),
        ("cameras:\n  - {camera_id: a, source: x}\n  - {camera_id: a, source: y}\n", "camera_id a is given to more"),
        ("cameras:\n  - {camera_id: a, source: x, tracker: botsort}\n", "tracker must be one of bytetrack, got 'bot"),
        ("watchlist: [A5!5 x]\ncameras:\n  - {camera_id: a, source: x}\n", "watchlist, item 1: 'A5!5' is not a plate"),
        ("watchlist: [{plate: A505PO198, lable: x}]\ncameras:\n  - {camera_id: a, source: x}\n", "must be `PLATE"),
        ("max_in_flight_total: 0\ncameras:\n  - {camera_id: a, source: x}\n", "max_in_flight_total must be at least"),
    ],
)
def test_a_bad_site_file_is_an_error_naming_the_file_and_what_is_wrong(tmp_path, text, error):
    path = write(tmp_path, text)
    with pytest.raises(SettingsError, match=error) as raised:
        load_site(path)
    assert str(path) in str(raised.value)


def test_a_missing_site_file_is_an_error_naming_it(tmp_path):
    with pytest.raises(SettingsError, match="--config .*nowhere.yaml: cannot read it"):
        load_site(tmp_path / "nowhere.yaml")


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_watch_parser(parser.add_subparsers())
    return parser.parse_args(["watch", *argv])


def test_source_and_flags_make_a_site_of_one_camera(tmp_path):
    site = site_settings(
        parse(
            "video.mp4",
            "--camera-id",
            "gate",
            "--fps",
            "2",
            "--max-in-flight",
            "3",
            "--watchlist",
            str(tmp_path / "w.txt"),
            "--max-distance",
            "1",
        )
    )
    assert site.cameras == [CameraSettings("gate", "video.mp4", fps=2.0, max_in_flight=3)]
    assert (site.max_in_flight_total, site.watchlist_file, site.max_distance) == (3, tmp_path / "w.txt", 1.0)


def test_site_flags_override_the_site_file(tmp_path):
    site = site_settings(
        parse("--config", str(write(tmp_path, SITE)), "--mqtt", "mqtts://other:8883", "--watchlist", "w.txt")
    )
    assert (site.mqtt, site.watchlist_file, site.watchlist) == ("mqtts://other:8883", Path("w.txt"), [])


def test_camera_flags_with_a_site_file_are_an_error(tmp_path):
    with pytest.raises(SettingsError, match="--camera-id, --fps: with --config, set these per camera"):
        site_settings(parse("--config", str(write(tmp_path, SITE)), "--fps", "2", "--camera-id", "x"))


def test_neither_or_both_of_source_and_config_is_an_error(tmp_path):
    with pytest.raises(SettingsError, match="give SOURCE"):
        site_settings(parse())
    with pytest.raises(SettingsError, match="not both"):
        site_settings(parse("video.mp4", "--config", str(write(tmp_path, SITE))))


def test_a_tracker_flag_other_than_bytetrack_is_refused_naming_it(capsys):
    with pytest.raises(SystemExit):
        parse("video.mp4", "--tracker", "botsort")
    # Python 3.12.8 and later name the choices without quotes.
    assert re.search(r"invalid choice: 'botsort' \(choose from '?bytetrack'?\)", capsys.readouterr().err)


def test_a_bad_camera_id_flag_is_an_error():
    with pytest.raises(SettingsError, match="camera_id 'a b'"):
        site_settings(parse("video.mp4", "--camera-id", "a b"))


def test_plates_watch_with_a_broken_site_file_exits_78_with_one_line_naming_it(tmp_path, capsys):
    from plates.cli.main import main

    path = write(tmp_path, "cameras:\n  - {camera_id: gate, source: a.mp4, fsp: 5}\n")
    assert main(["watch", "--config", str(path), "--url", "127.0.0.1:9"]) == 78
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}: cameras, item 1: unknown option fsp" in err


def test_plates_watch_with_a_password_in_the_broker_url_exits_78(capsys):
    from plates.cli.main import main

    assert main(["watch", "video.mp4", "--mqtt", "mqtt://u:pw@broker", "--url", "127.0.0.1:9"]) == 78
    assert "PLATES_MQTT_PASSWORD" in capsys.readouterr().err
