"""The house's rules that a reader cannot see at a glance: what the client side loads, what the model files import.

The layers of plates/ are import-linter's contracts (pyproject.toml), which .ci/run checks; these are the rules it
cannot state: what a command loads when it runs, and the model repository's adapters, which are no package of plates.
"""

import ast
import subprocess
import sys

import pytest

from plates.build.paths import DEFAULT_REPOSITORY, PROJECT_ROOT

HEAVY = ("torch", "torchvision", "ultralytics", "openvino", "onnxruntime")


def loaded_after(code: str) -> list[str]:
    """The heavy packages a fresh interpreter has loaded after running `code`."""
    probe = f"{code}\nimport sys\nprint('loaded:', *(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=PROJECT_ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stderr.splitlines()[-1].split()[1:]


@pytest.mark.parametrize(
    "code",
    [
        "import plates.client.service, plates.client.gateway, plates.client.health",
        "from plates.cli.main import main\ntry: main(['--help'])\nexcept SystemExit: pass",
        "from plates.cli.main import main\ntry: main(['watch', '--help'])\nexcept SystemExit: pass",
        "from plates.cli.main import main\ntry: main(['gateway', '--help'])\nexcept SystemExit: pass",
        "from plates.cli.main import main\ntry: main(['bench', '--help'])\nexcept SystemExit: pass",
        "from plates.cli.client import main\ntry: main(['--help'])\nexcept SystemExit: pass",
        "import plates.gateway.server",
    ],
    ids=[
        "client",
        "plates --help",
        "watch --help",
        "gateway --help",
        "bench --help",
        "plates-client --help",
        "gateway",
    ],
)
def test_the_client_side_and_every_help_load_no_pytorch_ultralytics_or_openvino(code):
    assert loaded_after(code) == []


def test_plates_client_reads_a_jpeg_and_a_png_without_pytorch(samples, tmp_path):
    # No server answers: the photo is read and decoded (--draw) before the client finds that out.
    import cv2

    png = tmp_path / "car.png"
    cv2.imwrite(str(png), cv2.imread(str(samples / "car.jpg")))
    code = (
        "from plates.cli.client import main\n"
        f"code = main([{str(samples / 'car.jpg')!r}, {str(png)!r}, '--raw', '--url', '127.0.0.1:9'])\n"
        "assert code == 69, code"
    )
    assert loaded_after(code) == []


def test_plates_watch_parses_its_options_and_tracks_without_pytorch():
    # No server answers: the options and settings are checked before the readiness check refuses. The tracker and the
    # watcher, which the command builds once the server is ready, then run on a frame of their own.
    code = (
        "import numpy as np\n"
        "from plates.cli.main import main\n"
        "from plates.client.service import Plate\n"
        "from plates.watch.source import Frame\n"
        "from plates.watch.tracking import PlateTracker\n"
        "from plates.watch.watcher import Watcher\n"
        "code = main(['watch', 'video.mp4', '--tracker', 'bytetrack', '--fps', '2', '--url', '127.0.0.1:9'])\n"
        "assert code == 69, code\n"
        "plate = Plate('B840CK197', [20, 50, 58, 62], 0.6)\n"
        "frames = [Frame(i, i / 2, i / 2, np.zeros((120, 200, 3), np.uint8)) for i in range(3)]\n"
        "summary = Watcher('v', lambda image: [plate], PlateTracker('bytetrack', 2.0), []).run(frames, live=False)\n"
        "assert summary.events == 1, summary"
    )
    assert loaded_after(code) == []


def test_the_model_files_import_only_what_runs_inside_a_model():
    files = [*DEFAULT_REPOSITORY.glob("*/1/model.py"), PROJECT_ROOT / "backends" / "pytorch" / "model.py"]
    imported = {}
    for path in files:
        tree = ast.parse(path.read_text())
        modules = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module]
        imported[path] = [m for m in modules if m.startswith("plates")]
    assert len(files) == 3 and all(imported.values())
    for path, modules in imported.items():
        assert all(m.startswith("plates.inference") or m == "plates.exceptions" for m in modules), (path, modules)


def test_plates_serve_without_the_server_extra_says_what_to_install():
    # As on a client-side install: torch cannot be imported.
    code = "import sys\nsys.modules['torch'] = None\nfrom plates.cli.main import main\nsys.exit(main(['serve']))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=PROJECT_ROOT)
    assert done.returncode == 2
    assert "plates serve needs the server's packages, and torch is not installed" in done.stderr
    assert "pip install '.[server]'" in done.stderr
