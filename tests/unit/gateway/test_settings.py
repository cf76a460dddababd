"""The gateway's settings: flag, then PLATES_GATEWAY_*, then default; keys never on the command line."""

from __future__ import annotations

import argparse
import ipaddress
import socket

import pytest

from plates.cli.main import main
from plates.exceptions import SettingsError
from plates.gateway.settings import Settings, add_arguments, settings_from


def parse(argv: list[str], environ: dict[str, str], monkeypatch) -> Settings:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return settings_from(parser.parse_args(argv), environ)


def test_a_flag_beats_the_environment_which_beats_the_default(monkeypatch):
    settings = parse(
        ["--port", "9000"], {"PLATES_GATEWAY_PORT": "9001", "PLATES_GATEWAY_MAX_IN_FLIGHT": "3"}, monkeypatch
    )
    assert (settings.port, settings.max_in_flight, settings.max_in_flight_per_key) == (9000, 3, 4)


def test_keys_come_from_the_environment_and_the_keys_file(tmp_path, monkeypatch):
    keys_file = tmp_path / "keys"
    keys_file.write_text("# the office\noffice-key\n\n  camera-key  \n")
    settings = parse(["--keys-file", str(keys_file)], {"PLATES_GATEWAY_KEYS": "env-key, office-key"}, monkeypatch)
    assert settings.keys == ("env-key", "office-key", "camera-key")
    assert "office-key" not in repr(settings)


def test_a_key_in_the_keys_file_may_have_a_monthly_quota(tmp_path, monkeypatch):
    keys_file = tmp_path / "keys"
    keys_file.write_text("office-key 2500\ncamera-key\n")
    settings = parse(["--keys-file", str(keys_file)], {}, monkeypatch)
    assert settings.keys == ("office-key", "camera-key") and settings.quotas == (("office-key", 2500),)
    keys_file.write_text("office-key many\n")
    with pytest.raises(SettingsError, match="line 1: write a key, optionally followed by its quota"):
        parse(["--keys-file", str(keys_file)], {}, monkeypatch)


def test_anonymous_networks_come_from_the_flag_or_the_environment(monkeypatch):
    settings = parse([], {"PLATES_GATEWAY_ANONYMOUS_FROM": "127.0.0.0/8, 10.0.0.7"}, monkeypatch)
    assert [str(network) for network in settings.anonymous_from] == ["127.0.0.0/8", "10.0.0.7/32"]
    monkeypatch.delenv("PLATES_GATEWAY_ANONYMOUS_FROM")
    assert parse([], {}, monkeypatch).anonymous_from == ()
    with pytest.raises(SystemExit):
        parse(["--anonymous-from", "10.0.0.0/33"], {}, monkeypatch)


def test_an_empty_or_missing_keys_file_stops_the_gateway(tmp_path, monkeypatch):
    (tmp_path / "empty").write_text("# nothing yet\n")
    with pytest.raises(SettingsError, match="holds no key"):
        parse(["--keys-file", str(tmp_path / "empty")], {}, monkeypatch)
    with pytest.raises(SettingsError, match="cannot read the keys file"):
        parse(["--keys-file", str(tmp_path / "missing")], {}, monkeypatch)


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost", "127.0.0.2"])
def test_without_keys_the_loopback_is_served(host):
    assert Settings(host=host).host == host


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.5", "gateway.example"])
def test_without_keys_no_wider_address_is_served(host):
    with pytest.raises(SettingsError, match=f"refusing to listen on {host} without API keys"):
        Settings(host=host)
    assert Settings(host=host, keys=("k",)).host == host
    # Networks served without a key: the others are refused, so the gateway is not open to all.
    assert Settings(host=host, anonymous_from=(ipaddress.ip_network("10.0.0.0/8"),)).host == host


def test_plates_gateway_refuses_a_wide_address_without_keys_with_exit_78(monkeypatch, capsys):
    monkeypatch.delenv("PLATES_GATEWAY_KEYS", raising=False)
    assert main(["gateway", "--host", "0.0.0.0"]) == 78
    assert capsys.readouterr().err.startswith("error: refusing to listen on 0.0.0.0 without API keys")


def test_settings_that_cannot_work_are_refused():
    with pytest.raises(SettingsError, match="max_in_flight must be positive"):
        Settings(max_in_flight=0)
    with pytest.raises(SettingsError, match="printable ASCII"):
        Settings(keys=("has space",))


def test_plates_gateway_on_a_taken_port_is_one_line_and_exit_69(monkeypatch, capsys):
    monkeypatch.delenv("PLATES_GATEWAY_KEYS", raising=False)
    with socket.create_server(("127.0.0.1", 0)) as taken:
        code = main(["gateway", "--port", str(taken.getsockname()[1])])
    assert code == 69
    assert capsys.readouterr().err.startswith("error: cannot listen on http://127.0.0.1:")
