"""The GPU check (scripts/gpu-check.sh): Triton on a GPU, its answers against the CPU's, the proof that tensors stay
on the GPU between the models, and the figures, written where the device tool brings them back.

Step by step, each one's outcome written down and the next one run whatever it was:
1. the environment: torch, CUDA and the GPU;
2. the model repository as a GPU build makes it, built there from the checkout's weights, every model KIND_GPU;
3. Triton from the bundle (plates.gpu_check.bundle), warmed as the supervisor warms it, every model's process
   counting where the tensors it receives and sends lie (plates.inference.tensor_log);
4. car.jpg, cat.jpeg and e2e.json's photos sent as files (decoded by nvJPEG in yolo), their answers compared with
   the CPU's (cpu_answers.json), and `plates eval` on e2e.json;
5. `plates bench` at each concurrency, with the same pipeline in one process beside it;
6. the server stopped, which has every model write its counts; every count checked: a tensor between the models
   on the host, or a photo decoded there, fails the check.
"""

from __future__ import annotations

import json
import platform
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from plates.build.paths import PROJECT_ROOT
from plates.build.repository import build_model_repository, copy_sources, set_parameter
from plates.gpu_check.answers import Answers, compare, read_answers
from plates.inference.tensor_log import CPU, GPU, Crossing, read_log
from plates.server.candidates import copy_repository, serving

CONCURRENCY = (1, 2, 4, 8, 16, 32)
# The client's photo comes in host memory, over HTTP: it may stay there until yolo decodes it, on its device.
PHOTO_TENSORS = ("input__0", "image_bytes")
HOST_PHOTO = {("plate_recognition", "received"), ("plate_recognition", "to yolo"), ("yolo", "received")}
CALLEES = ("yolo", "stn", "lprnet", "lprnet_rows")
# Crossings every photo with a plate makes; a check that never saw one of them proves nothing about it.
EXPECTED = {
    "plate_recognition": ("received", "to yolo", "from yolo", "to stn", "from stn", "to lprnet", "from lprnet"),
    "yolo": ("received", "decoded", "sent"),
    "stn": ("received", "sent"),
    "lprnet": ("received", "sent"),
}
# Each step's bound, so that the whole check ends inside the device tool's 10 minutes a call.
SERVER_START_S = 150.0
EVAL_S = 90.0
BENCH_S = 200.0


def photos_of(data: Path) -> list[str]:
    """car.jpg, cat.jpeg and every photo e2e.json lists, as paths relative to `data`."""
    manifest = json.loads((data / "e2e.json").read_text())
    return ["samples/car.jpg", "samples/cat.jpeg", *sorted({entry["image"] for entry in manifest})]


def prepare_repository(target: Path, kind: str) -> Path:
    """The model repository as a GPU build makes it (the detector in PyTorch), every model KIND_<kind>, built in
    `target` from the checkout's weights."""
    build_model_repository(
        copy_sources(target), weights_dir=PROJECT_ROOT / "weights", instance_kind=kind, cpu_exports=False
    )
    return target


def crossing_faults(crossings: list[Crossing]) -> list[str]:
    """Why the counts do not show every tensor between the models on the GPU: a tensor on the host where only the
    client's photo may be; fewer tensors arriving on the GPU than plate_recognition sent there; a way never seen.
    Empty where they do. The models plate_recognition calls are called from the host too (Triton's model_warmup,
    the health check's probes, `plates bench`'s detector alone): what they receive there is no copy between models."""
    faults = [
        f"{c.model}: {c.count} × {c.tensor} {c.way} in host memory"
        for c in crossings
        if c.memory == CPU
        and not (c.model in CALLEES and c.way == "received")
        and not ((c.model, c.way) in HOST_PHOTO and c.tensor in PHOTO_TENSORS)
    ]

    def total(model: str, way: str) -> int:
        return sum(c.count for c in crossings if c.model == model and c.way == way and c.memory == GPU)

    for callee in CALLEES:
        sent, arrived = total("plate_recognition", f"to {callee}"), total(callee, "received")
        if arrived < sent:
            faults.append(f"{callee}: plate_recognition sent {sent} tensors on the GPU, {arrived} arrived there")
    seen = {(c.model, c.way) for c in crossings if c.memory == GPU or (c.model, c.way) in HOST_PHOTO}
    faults += [
        f"{model}: no tensor {way} was counted"
        for model, ways in EXPECTED.items()
        for way in ways
        if (model, way) not in seen
    ]
    return faults


def format_crossings(crossings: list[Crossing]) -> str:
    return "\n".join(f"  {c.model:<17} {c.way:<17} {c.tensor:<12} {c.memory}: {c.count}" for c in crossings)


@dataclass
class Report:
    """What the check found, step by step, written to `out` as it goes: summary.md for people, summary.json."""

    out: Path
    steps: list[dict] = field(default_factory=list)

    def add(self, step: str, passed: bool | None, text: str, **figures) -> None:
        """A step's outcome: passed True or False, or None for figures that pass nothing."""
        mark = {True: "PASS", False: "FAIL", None: "----"}[passed]
        print(f"gpu-check: [{mark}] {step}: {text}", flush=True)
        self.steps.append({"step": step, "passed": passed, "text": text, **figures})
        self.write()

    @property
    def passed(self) -> bool:
        return all(step["passed"] is not False for step in self.steps)

    def write(self) -> None:
        (self.out / "summary.json").write_text(json.dumps({"passed": self.passed, "steps": self.steps}, indent=1))
        lines = [f"# GPU check: {'passed' if self.passed else 'FAILED'}", ""]
        for step in self.steps:
            mark = {True: "PASS", False: "FAIL", None: "----"}[step["passed"]]
            lines += [f"## [{mark}] {step['step']}", "", step["text"], ""]
        (self.out / "summary.md").write_text("\n".join(lines))


@contextmanager
def step(report: Report, name: str) -> Iterator[None]:
    """Run a step; an exception fails it, is written down, and the check goes on."""
    started = time.monotonic()
    try:
        yield
    except Exception as error:  # every failure is the check's finding, never its end
        report.add(name, False, f"{type(error).__name__}: {error} (after {time.monotonic() - started:.1f} s)")


def environment() -> str:
    import numpy
    import torch
    import torchvision

    lines = [
        f"Python {platform.python_version()}, torch {torch.__version__}, torchvision {torchvision.__version__}, "
        f"numpy {numpy.__version__}"
    ]
    if torch.cuda.is_available():
        properties = torch.cuda.get_device_properties(0)
        lines.append(
            f"CUDA {torch.version.cuda}, {properties.name}, {properties.total_memory / 2**30:.0f} GiB, "
            f"compute capability {properties.major}.{properties.minor}; cuDNN TF32 "
            f"{torch.backends.cudnn.allow_tf32}, matmul TF32 {torch.backends.cuda.matmul.allow_tf32}"
        )
    else:
        lines.append("no GPU visible to torch")
    return "\n".join(lines)


def plates_command(*arguments: str, output: Path, timeout: float) -> tuple[int, str]:
    """A `plates` command, as a user runs it, its output added to `output` as it comes (what a run cut short by the
    device tool's limit still brings back); its exit status and output."""
    return program([sys.executable, "-m", "plates.cli.main", *arguments], output, timeout)


def program(command: list[str], output: Path, timeout: float) -> tuple[int, str]:
    start = output.stat().st_size if output.exists() else 0
    with output.open("a") as file:
        file.write(f"$ {' '.join(command)}\n")
        file.flush()
        done = subprocess.run(command, stdout=file, stderr=subprocess.STDOUT, timeout=timeout)
    with output.open() as file:
        file.seek(start)
        text = file.read()
    print(text, flush=True)
    return done.returncode, text


@dataclass(frozen=True)
class Variant:
    """A served configuration timed beside the committed one: yolo's `cuda_graphs`, and `instances` instances of the
    models that work on the host (scale_instances), 1 as committed."""

    cuda_graphs: bool | None = None  # None: as committed
    instances: int = 1

    @classmethod
    def parse(cls, text: str) -> Variant:
        """ "graphs" or "eager" (yolo's CUDA graphs on or off), a number of instances ("4"), or both ("eager,4")."""
        parts = [part for part in text.split(",") if part]
        modes = [part for part in parts if part in ("graphs", "eager")]
        numbers = [int(part) for part in parts if part.isdigit()]
        if len(modes) + len(numbers) != len(parts) or not parts or len(modes) > 1 or len(numbers) > 1:
            raise ValueError(
                f"a variant is 'graphs' or 'eager', a number of instances, or both ('eager,4'), not {text!r}"
            )
        return cls({"graphs": True, "eager": False}[modes[0]] if modes else None, numbers[0] if numbers else 1)

    @property
    def name(self) -> str:
        mode = [] if self.cuda_graphs is None else ["CUDA graphs" if self.cuda_graphs else "no CUDA graphs"]
        return ", ".join([*mode, f"{self.instances} instance{'s' if self.instances > 1 else ''}"])

    def apply(self, repository: Path) -> None:
        if self.cuda_graphs is not None:
            set_parameter(repository / "yolo" / "config.pbtxt", "cuda_graphs", "yes" if self.cuda_graphs else "no")
        if self.instances > 1:
            scale_instances(repository, self.instances)


def scale_instances(repository: Path, instances: int) -> None:
    """`instances` instances of plate_recognition and yolo, the models whose work is on the host (a photo at a time
    each), and the queues of the models behind plate_recognition made to hold as many requests as its instances send
    at once. plate_recognition's own queue, where clients wait, holds more already. stn and lprnet keep one instance
    and batch what the callers send at once."""
    for config in sorted(repository.glob("*/config.pbtxt")):
        model = config.parent.name
        text = config.read_text()
        if model in ("plate_recognition", "yolo"):
            text = re.sub(r"(instance_group \[ \{ count: )\d+", rf"\g<1>{instances}", text)
        if model != "plate_recognition":
            text = re.sub(r"max_queue_size: \d+", f"max_queue_size: {instances}", text)
        config.write_text(text)


def gpu_memory() -> str:
    """Each process's GPU memory, as nvidia-smi gives it."""
    done = subprocess.run(
        ["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory", "--format=csv"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    return (done.stdout + done.stderr).strip()


def bench_arguments(data: Path, url: str, concurrency: tuple[int, ...], requests: int) -> list[str]:
    """plates bench on car.jpg and car.jpg as a 1080p camera frame, as files and as pixels, at each level."""
    levels = [str(level) for level in concurrency]
    return [
        "bench",
        str(data / "samples/car.jpg"),
        "--frame",
        "1920x1080",
        "--concurrency",
        *levels,
        "--requests",
        str(requests),
        "--url",
        url,
    ]


def check_answers(report: Report, label: str, url: str, bundle: Path) -> Answers:
    """The bundle's photos through the server at `url`, against the CPU's answers: car.jpg's text, then every plate."""
    data = bundle / "data"
    started = time.monotonic()
    answers = read_answers(url, data, photos_of(data))
    seconds = time.monotonic() - started
    car = [p["text"] for p in answers["samples/car.jpg"]]
    report.add(f"car.jpg{label}", "B840CK197" in car, f"read {car}")
    comparison = compare(json.loads((bundle / "cpu_answers.json").read_text()), answers)
    report.add(
        f"answers against the CPU's{label}",
        comparison.agrees,
        comparison.summary()
        + "".join(f"\n- {d}" for d in comparison.differences)
        + f"\n\n{len(answers)} photos sent as files in {seconds:.1f} s, one at a time",
        **{k: v for k, v in vars(comparison).items() if k != "differences"},
    )
    return answers


def run_check(
    bundle: Path,
    out: Path,
    work: Path,
    kind: str = "gpu",
    requests: int = 60,
    concurrency: tuple[int, ...] = CONCURRENCY,
    variants: tuple[Variant, ...] = (),
) -> bool:
    """The whole check, its findings in `out`, its repositories and counts in `work`; whether every step passed.
    Each of `variants` is served after, from a copy of the repository made so, its answers checked and timed."""
    out.mkdir(parents=True, exist_ok=True)
    report = Report(out)
    data = bundle / "data"
    report.add("environment", None, environment())
    repository = work / "repository"
    with step(report, "model repository"):
        prepare_repository(repository, kind)
        report.add("model repository", True, f"built in {repository}, every model KIND_{kind.upper()}")
    tensors = work / "tensors"
    try:
        with serving(repository, out / "triton.log", tensors, timeout=SERVER_START_S) as server:
            with step(report, "answers"):
                answers = check_answers(report, "", server.url, bundle)
                (out / "answers.json").write_text(json.dumps(answers, indent=1))
            with step(report, "plates eval"):
                code, text = plates_command(
                    "eval", str(data / "e2e.json"), "--url", server.url, output=out / "eval.txt", timeout=EVAL_S
                )
                report.add("plates eval e2e.json", code == 0, text.strip().splitlines()[-1])
            with step(report, "plates bench"):
                code, _ = plates_command(
                    *bench_arguments(data, server.url, concurrency, requests),
                    "--in-process",
                    "--repository",
                    str(repository),
                    output=out / "bench.txt",
                    timeout=BENCH_S,
                )
                report.add("plates bench", code == 0, f"exit {code}: bench.txt")
            if kind == "gpu":
                with step(report, "GPU memory"):
                    report.add("GPU memory", None, gpu_memory())
    except Exception as error:  # the server's start or stop: written down, and the counts read as far as they go
        report.add("server", False, f"{type(error).__name__}: {error} (triton.log)")
    with step(report, "tensors between the models"):
        crossings = read_log(tensors)
        faults = crossing_faults(crossings)
        report.add(
            "tensors between the models",
            not faults,
            "\n".join(faults) + f"\n\n{format_crossings(crossings)}" if faults else format_crossings(crossings),
        )
    with step(report, "detector stages"):
        code, _ = program(
            [
                sys.executable,
                str(PROJECT_ROOT / "benchmarks" / "detector_stages.py"),
                str(data / "samples/car.jpg"),
                "--repository",
                str(repository),
                "--device",
                "cuda:0" if kind == "gpu" else "cpu",
            ],
            out / "bench.txt",
            BENCH_S,
        )
        report.add("detector stages", code == 0, f"exit {code}: bench.txt")
    for variant in variants:
        with step(report, variant.name):
            copy = copy_repository(work / f"repository-{len(report.steps)}", source=repository)
            variant.apply(copy)
            with serving(copy, out / "triton.log", timeout=SERVER_START_S) as server:
                check_answers(report, f" ({variant.name})", server.url, bundle)
                in_process = ["--in-process", "--repository", str(copy)] if variant.instances == 1 else []
                code, _ = plates_command(
                    *bench_arguments(data, server.url, concurrency, requests),
                    *in_process,
                    output=out / "bench.txt",
                    timeout=BENCH_S,
                )
                report.add(variant.name, code == 0, f"exit {code}: bench.txt")
    return report.passed


def write_cpu_answers(bundle: Path, pytriton: Path, work: Path) -> Path:
    """cpu_answers.json: the bundle's photos' answers from the repository run_check builds, on this machine's CPU,
    served by the bundle's Triton (`pytriton`, unpacked): the reference the GPU's answers are held against."""
    data = bundle / "data"
    repository = prepare_repository(work / "repository", "cpu")
    with serving(repository, work / "triton.log", pytriton=pytriton, timeout=SERVER_START_S) as server:
        answers = read_answers(server.url, data, photos_of(data))
    target = bundle / "cpu_answers.json"
    target.write_text(json.dumps(answers, indent=1))
    return target
