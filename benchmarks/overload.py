"""Goodput under careless clients: right answers a second while N clients send car.jpg in a loop and ignore
`Retry-After`, through the gateway and through Triton's HTTP and gRPC ports, against what one client gets.

    poetry run python benchmarks/overload.py --gateway http://127.0.0.1:8080 --http localhost:8000 \
        --grpc localhost:8001 --clients 1 4 16 64 --seconds 45 --polite [--rounds 3]

against a running `plates serve`. Each client is a process of its own, as separate programs would be: it sends the
photo, and sends it again the moment an answer comes, refused or not. With `--polite`, one more run per door puts a
well-behaved client beside 16 careless ones: it backs off as `PlatesClient` does (the server's Retry-After, else
exponential from 0.1 s), and its own right answers a second and p99 are printed. Each run also prints the server's
CPU seconds per answer and per refusal (psutil over the processes of `plates serve`), what a refusal costs, and the
clients' own CPU: on one machine they share its cores with the server. With `--rounds N` every count runs N times in
turn (1, 4, 16, 64, 1, 4, ...), each ratio against its own round's one client, and their medians are printed: on a
shared machine a drift in its load between two runs otherwise reads as a change of goodput.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from plates.build.paths import shared_dir  # noqa: E402

CAR = shared_dir() / "data" / "samples" / "car.jpg"
PLATE = "B840CK197"
REASONS: Counter[str] = Counter()  # a client process's refusals by Triton's message


def _gateway_call(url: str, key: str | None):
    import requests

    session = requests.Session()
    headers = {"Authorization": f"Token {key}"} if key else {}
    photo = CAR.read_bytes()

    def call() -> tuple[str, float | None]:
        answer = session.post(
            f"{url}/v1/plate-reader/", files={"upload": ("car.jpg", photo)}, headers=headers, timeout=60
        )
        if answer.status_code == 201:
            results = answer.json()["results"]
            return ("right" if any(r["plate"].upper() == PLATE for r in results) else "wrong"), None
        retry = answer.headers.get("Retry-After")
        return "refused", float(retry) if retry else None

    return call


def _triton_call(url: str, protocol: str):
    import numpy as np

    if protocol == "http":
        import tritonclient.http as client
    else:
        import tritonclient.grpc as client
    from tritonclient.utils import InferenceServerException

    connection = client.InferenceServerClient(url)
    reasons = REASONS
    photo = np.array([CAR.read_bytes()], dtype=np.object_)

    def call() -> tuple[str, float | None]:
        tensor = client.InferInput("image_bytes", [1], "BYTES")
        tensor.set_data_from_numpy(photo)
        try:
            result = connection.infer("plate_recognition", [tensor], outputs=[client.InferRequestedOutput("texts")])
        except InferenceServerException as error:
            if "unavailable" not in str(error).lower() and "exceeds" not in str(error).lower():
                raise  # not a refusal for load: the benchmark is wrong, not the server
            reasons[str(error).split("]")[-1].strip()[:60]] += 1
            return "refused", None
        texts = [t.decode() if isinstance(t, bytes) else str(t) for t in result.as_numpy("texts").ravel()]
        return ("right" if PLATE in texts else "wrong"), None

    return call


def client_loop(door: str, target: str, key: str | None, polite: bool, seconds: float, ready, go, results) -> None:
    """Once every client is ready (its imports done: 64 Python processes starting would be measured with the
    server), send the photo for `seconds`; the counts of outcomes, each served request's time and (for the polite
    client, which sends a photo again until it is answered) each photo's time from its first try to its answer."""
    call = _gateway_call(target, key) if door == "gateway" else _triton_call(target, door)
    ready.put(True)
    go.wait()
    cpu = time.process_time()
    until = time.time() + seconds
    served, photos, counts, backoff = [], [], {"right": 0, "wrong": 0, "refused": 0, "error": 0}, 0.1
    photo_started = time.perf_counter()
    while time.time() < until:
        started = time.perf_counter()
        try:
            outcome, retry_after = call()
        except Exception:  # a connection reset under load: counted, and sent again as a careless client would
            outcome, retry_after = "error", None
        counts[outcome] += 1
        if outcome in ("right", "wrong"):
            served.append(time.perf_counter() - started)
            photos.append(time.perf_counter() - photo_started)
            photo_started, backoff = time.perf_counter(), 0.1
        elif polite:
            time.sleep(min(retry_after if retry_after is not None else backoff, max(0.0, until - time.time())))
            backoff = min(backoff * 2, 2.0)
    results.put((polite, counts, served, photos, dict(REASONS), time.process_time() - cpu))


def server_cpu() -> float:
    """CPU seconds of every process of `plates serve` (its tritonserver, stubs and gateway) so far."""
    total = 0.0
    for process in psutil.process_iter(["cmdline"]):
        line = " ".join(process.info["cmdline"] or [])
        if (
            "tritonserver" in line
            or "triton_python_backend_stub" in line
            or "plates gateway" in line
            or ("plates" in line and "serve" in line)
        ):
            try:
                times = process.cpu_times()
                total += times.user + times.system
            except psutil.Error:
                pass
    return total


def run(door: str, target: str, key: str | None, careless: int, polite: bool, seconds: float) -> dict:
    context = multiprocessing.get_context("spawn")
    results, ready, go = context.Queue(), context.Queue(), context.Event()
    kinds = [False] * careless + ([True] if polite else [])
    workers = [
        context.Process(target=client_loop, args=(door, target, key, kind, seconds, ready, go, results))
        for kind in kinds
    ]
    for worker in workers:
        worker.start()
    for _ in workers:
        ready.get(timeout=300)
    go.set()
    cpu = server_cpu()
    gathered = [results.get(timeout=seconds + 120) for _ in workers]
    cpu = server_cpu() - cpu
    for worker in workers:
        worker.join()
    total = {"right": 0, "wrong": 0, "refused": 0, "error": 0}
    served, polite_stats = [], None
    reasons: Counter[str] = Counter()
    clients_cpu = 0.0
    for is_polite, counts, times, photos, refusals, cpu_s in gathered:
        reasons.update(refusals)
        clients_cpu += cpu_s
        for name in total:
            total[name] += counts[name]
        served += times
        if is_polite:
            polite_stats = (counts["right"] / seconds, _p(photos, 0.99))
    return {
        "right_per_s": total["right"] / seconds,
        "answers": total["right"] + total["wrong"],
        "refusals": total["refused"] + total["error"],
        "p50": statistics.median(served) * 1000 if served else float("nan"),
        "p99": _p(served, 0.99),
        "cpu_s": cpu,
        "clients_cpu_s": clients_cpu,
        "polite": polite_stats,
        "reasons": reasons,
    }


def _p(values: list[float], share: float) -> float:
    """The `share` percentile of `values` (seconds) in ms."""
    return sorted(values)[min(len(values) - 1, int(share * len(values)))] * 1000 if values else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gateway", help="the gateway's URL, e.g. http://127.0.0.1:8080")
    parser.add_argument("--key", help="the gateway's API key, if it needs one")
    parser.add_argument("--http", help="Triton's HTTP endpoint, e.g. localhost:8000")
    parser.add_argument("--grpc", help="Triton's gRPC endpoint, e.g. localhost:8001")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--seconds", type=float, default=45.0)
    parser.add_argument("--polite", action="store_true", help="also a well-behaved client beside 16 careless ones")
    parser.add_argument(
        "--rounds", type=int, default=1, help="run every count this many times in turn, and print each ratio's median"
    )
    args = parser.parse_args(argv)
    doors = [(name, target) for name, target in (("gateway", args.gateway), ("http", args.http), ("grpc", args.grpc))]
    for door, target in doors:
        if not target:
            continue
        runs = [(count, False) for count in args.clients] + ([(16, True)] if args.polite else [])
        ratios: dict[tuple[int, bool], list[float]] = {}
        for _ in range(args.rounds):
            one = per_answer = None
            for careless, polite in runs:
                figures = run(door, target, args.key, careless, polite, args.seconds)
                if one:
                    ratios.setdefault((careless, polite), []).append(figures["right_per_s"] / one)
                one, per_answer = report(door, careless, polite, figures, one, per_answer, args.seconds)
        if args.rounds > 1:
            medians = ", ".join(
                f"{careless}{' + 1 polite' if polite else ''}: {statistics.median(values):.2f}"
                f" ({min(values):.2f}-{max(values):.2f})"
                for (careless, polite), values in ratios.items()
            )
            print(f"{door}: of one client's, the median of {args.rounds} rounds (least-most): {medians}", flush=True)
    return 0


def report(
    door: str, careless: int, polite: bool, figures: dict, one: float | None, per_answer: float | None, seconds: float
) -> tuple[float | None, float | None]:
    """Print a run's line; the round's one-client figures (right answers a second, server CPU per answer)."""
    if careless == 1 and not polite:
        one, per_answer = figures["right_per_s"], figures["cpu_s"] / max(1, figures["answers"])
    ratio = f" ({figures['right_per_s'] / one:.2f} of one client's)" if one else ""
    # A refusal's cost: the server's CPU beyond what its answers cost at one client, over its refusals.
    cost = ""
    if per_answer is not None and figures["refusals"] >= seconds:  # fewer: noise over the answers' cost
        spare = figures["cpu_s"] - per_answer * figures["answers"]
        cost = (
            f", {spare / figures['refusals'] * 1000:.2f} ms of server CPU a refusal"
            if spare > 0
            else ", no server CPU beyond the answers' for them"  # each waited out a timer
        )
    line = (
        f"{door}: {careless} careless{' + 1 polite' if polite else ''}: {figures['right_per_s']:.1f} right/s"
        f"{ratio}; served p50 {figures['p50']:.0f} ms, p99 {figures['p99']:.0f} ms; "
        f"refused {figures['refusals'] / seconds:.0f}/s{cost}; "
        f"server CPU {figures['cpu_s'] / seconds:.2f} cores, "
        f"clients' {figures['clients_cpu_s'] / seconds:.2f}"
    )
    if figures["polite"]:
        line += f"; the polite client: {figures['polite'][0]:.1f} right/s, p99 {figures['polite'][1]:.0f} ms"
    if figures["reasons"]:
        line += "; refused as " + ", ".join(f"{n} {why!r}" for why, n in figures["reasons"].most_common(3))
    print(line, flush=True)
    return one, per_answer


if __name__ == "__main__":
    sys.exit(main())
