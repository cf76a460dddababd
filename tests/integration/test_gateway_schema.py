"""The gateway's OpenAPI schema tells the truth: schemathesis generates requests from the served schema and checks
every answer against it (status codes, content types, headers, bodies) and that none is a server error.

Two of its defaults are set aside, for reasons of the form encoding, not of the gateway: the coverage phase, which
sends arbitrary bytes as a photo whatever the part's declared image content type (the gateway refuses them with the
400 the schema documents), and the negative data check, whose "invalid" cases a form cannot carry (a list of one
value is that value, an empty list is no field, an object in an urlencoded form is sent as its keys). Photos are JPEG
and PNG files (schemathesis_hooks.py), as the schema's encoding declares.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


from .gateways import KEY

HOOKS = Path(__file__).with_name("schemathesis_hooks.py")


def test_schemathesis_finds_no_answer_the_schema_does_not_describe(keyed_gateway, tmp_path):
    schemathesis = Path(sys.executable).with_name("schemathesis")
    command = [
        str(schemathesis), "run", f"{keyed_gateway}/openapi.json", "--header", f"Authorization: Token {KEY}",
        "--phases", "examples,fuzzing", "--exclude-checks", "negative_data_rejection", "--max-examples", "60",
        "--workers", "2", "--request-timeout", "30", "--seed", "1",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env={**os.environ, "SCHEMATHESIS_HOOKS": str(HOOKS)})  # fmt: skip
    print(done.stdout[-3000:])
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "13 selected / 13 total" in done.stdout
