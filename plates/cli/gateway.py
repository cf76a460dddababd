"""plates gateway: the service's public HTTP API (Plate Recognizer's Snapshot API, CodeProject.AI's licence plate
reader, a page for people) in front of Triton.

Flags fall back to PLATES_GATEWAY_* variables, then to defaults; API keys come from PLATES_GATEWAY_KEYS or a keys
file, and --anonymous-from names the networks served without one. With neither it listens on the loopback only, and
refuses to start (exit 78) when asked to listen wider.
"""

from __future__ import annotations

import argparse
import logging
import sys

from plates.exceptions import PlatesError
from plates.gateway.settings import add_arguments, settings_from

HELP = "serve the public HTTP API (Plate Recognizer's Snapshot API, CodeProject.AI's ALPR) in front of Triton"


def add_gateway_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("gateway", help=HELP, description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    parser.set_defaults(run=run_gateway)
    return parser


def run_gateway(args: argparse.Namespace) -> int:
    # Here, not at the top: the other commands list this one's flags, and need not load its web server to do so.
    from plates.gateway import server

    settings = settings_from(args)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # Its warnings repeat what the access log's line already says of a malformed form (refused=invalid_form).
    logging.getLogger("python_multipart").setLevel(logging.ERROR)
    return server.run(settings)


def main(argv: list[str]) -> int:
    """`plates gateway ARGS`, parsed without the other commands (plates.cli.main comes here first)."""
    parser = argparse.ArgumentParser(prog="plates gateway", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_gateway(args)
    except PlatesError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
