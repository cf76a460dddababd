"""The gateway's OpenAPI schema tells the truth: schemathesis generates requests from the served schema, valid and
invalid, and runs every check it has (`--checks all`) on every answer: status codes, content types, headers and
bodies as the schema describes them, no server error, valid requests accepted and invalid ones refused.

Every check runs, in every phase that applies (the schema has no examples, and no links for the stateful phase).
Two things are given to schemathesis in its hooks (schemathesis_hooks.py), both explained there:
- its photos: the schema's types cannot say "a JPEG or PNG file" beyond the multipart encoding's contentType and the
  description (anything else is a documented 400), so schemathesis is given JPEG and PNG files for the photo, as
  clients send; otherwise its valid requests would carry random bytes as photos, which the gateway rightly refuses;
- a fix of its negative_data_rejection check for multipart forms with a file, whose validator raises on the file's
  bytes (schemathesis 4.29.4 and 4.32.0 alike): without it, a form the server reads as valid counted as accepted
  invalid data.

schemathesis 4.29.4 is the locked one: 4.32 needs Python 3.11, the project takes 3.10, and it finds the same.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import requests

from .gateways import KEY

HOOKS = Path(__file__).with_name("schemathesis_hooks.py")


def test_schemathesis_with_every_check_finds_nothing(keyed_gateway, tmp_path):
    schemathesis = Path(sys.executable).with_name("schemathesis")
    command = [
        str(schemathesis),
        "run",
        f"{keyed_gateway}/openapi.json",
        "--header",
        f"Authorization: Token {KEY}",
        "--checks",
        "all",
        "--max-examples",
        "100",
        "--workers",
        "2",
        "--request-timeout",
        "30",
        "--seed",
        "1",
    ]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
        env={**os.environ, "SCHEMATHESIS_HOOKS": str(HOOKS)},
    )
    print(done.stdout[-3000:])
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    # The history's 11 routes where the gateway keeps a store (the one these tests start), not in the image's.
    operations = 24 if "/v1/history/reads" in requests.get(f"{keyed_gateway}/openapi.json", timeout=30).text else 13
    assert f"{operations} selected / {operations} total" in done.stdout
    # Its one warning may be that it cannot make a read or a plate for the routes that take their ids (404s).
    warnings = done.stdout.split("Warnings:")[1].split("Test cases:")[0] if "Warnings:" in done.stdout else ""
    assert "No issues found" in done.stdout or warnings.strip().startswith("⚠️ Missing valid test data"), warnings
    assert "Failures:" not in done.stdout
    assert "✅ Coverage" in done.stdout and "✅ Fuzzing" in done.stdout
