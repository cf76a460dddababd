"""plates serve | gateway | eval | bench | watch: run the service locally, serve its public API, score it, time it,
watch a camera or video."""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from pathlib import Path

from plates.exceptions import PlatesError


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


# What `pip install '.[server]'` adds (pyproject.toml): the client side installs without it, and serve needs it.
SERVER_EXTRA = {"torch", "torchvision", "ultralytics", "onnx", "onnxruntime", "onnxslim", "openvino"}


def serve(args: argparse.Namespace) -> int:
    try:
        from plates.build.repository import out_of_date, rebuild
        from plates.server.gateway_process import GatewayProcess
        from plates.server.launcher import LocalServer
        from plates.server.supervisor import Supervisor
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in SERVER_EXTRA:
            raise
        print(
            f"error: plates serve needs the server's packages, and {error.name} is not installed: "
            "pip install '.[server]' in the checkout (README, Install)",
            file=sys.stderr,
        )
        return 2

    # Triton on the loopback only: 2.51 has published vulnerabilities and no authentication (docs/security.md). The
    # gateway is what listens wider, and only with API keys: its settings are checked before anything starts.
    server = LocalServer(args.repository, args.http_port, args.grpc_port, args.metrics_port)
    gateway = None
    if args.gateway_port:
        gateway = GatewayProcess(
            [
                "--host",
                args.host,
                "--port",
                str(args.gateway_port),
                "--triton-grpc",
                f"127.0.0.1:{args.grpc_port}",
                "--triton-http",
                f"127.0.0.1:{args.http_port}",
            ]
        )
    why = out_of_date(args.repository)
    if why:
        print(f"building {args.repository} from the weights ({why}) ...", flush=True)
        rebuild(args.repository)
    # SIGTERM (kubectl, systemd, CI) stops the server as Ctrl-C does: through the same clean shutdown.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        if gateway is not None:
            gateway.start()
        server.start(timeout=args.timeout)
        supervisor = Supervisor(server, heal=True, gateway=gateway)
        supervisor.warm_up()
        print(f"Triton is ready at http://{server.url} (gRPC :{args.grpc_port}, metrics :{args.metrics_port})")
        if gateway is not None:
            print(f"The gateway serves http://{args.host}:{args.gateway_port}/v1/plate-reader/ (docs/gateway.md)")
        print("Ctrl-C stops it.", flush=True)
        # Returns only if a restarted server never became ready; it logs every check that failed and every restart.
        supervisor.run()
        return 1
    except KeyboardInterrupt:
        print("stopping ...", flush=True)
        return 0
    finally:
        if gateway is not None:
            gateway.signal_stop()
        server.stop()
        if gateway is not None:
            gateway.stop()


# The commands beside serve: each one's module and the function that adds its parser, in the order help lists them.
COMMANDS = {
    "gateway": ("plates.cli.gateway", "add_gateway_parser"),
    "eval": ("plates.cli.evaluate", "add_eval_parser"),
    "bench": ("plates.cli.bench", "add_bench_parser"),
    "watch": ("plates.cli.watch", "add_watch_parser"),
    "store": ("plates.cli.store", "add_store_parser"),
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["gateway"]:
        # Before the other commands' modules load PyTorch: the gateway's process takes 80 MB and starts in a second,
        # instead of 600 MB and three.
        from plates.cli.gateway import main as gateway

        return gateway(argv[1:])
    from plates.build.paths import DEFAULT_REPOSITORY

    parser = argparse.ArgumentParser(prog="plates", description="Russian licence-plate recognition on Triton.")
    commands = parser.add_subparsers(dest="command", required=True)

    serve_parser = commands.add_parser(
        "serve", help="start a local Triton server (CPU) on the model repository, and the gateway in front of it"
    )
    serve_parser.add_argument("--http-port", type=int, default=8000, help="Triton's HTTP port, on 127.0.0.1")
    serve_parser.add_argument("--grpc-port", type=int, default=8001, help="Triton's gRPC port, on 127.0.0.1")
    serve_parser.add_argument("--metrics-port", type=int, default=8002, help="Triton's metrics port, on 127.0.0.1")
    serve_parser.add_argument(
        "--gateway-port", type=int, default=8080, help="the gateway's port (default 8080; 0: no gateway)"
    )
    serve_parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="the gateway's address (default 127.0.0.1; any other needs its API keys, "
        "PLATES_GATEWAY_KEYS or PLATES_GATEWAY_KEYS_FILE); Triton listens on 127.0.0.1 only",
    )
    serve_parser.add_argument("--repository", type=Path, default=DEFAULT_REPOSITORY)
    serve_parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for readiness")
    serve_parser.set_defaults(run=serve)
    # A command's module, and what it imports (the gateway's web server, watch's MQTT client), loads only where that
    # command runs, or where every command is listed (--help).
    named = argv[0] if argv[:1] and argv[0] in COMMANDS else None
    for name, (module, add_parser) in COMMANDS.items():
        if named in (None, name):
            getattr(importlib.import_module(module), add_parser)(commands)

    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except PlatesError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code


if __name__ == "__main__":
    sys.exit(main())
