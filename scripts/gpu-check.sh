#!/usr/bin/env bash
# The GPU check, on a machine with an NVIDIA GPU, its python3 with torch and torchvision built for CUDA, and the
# bundle scripts/gpu-bundle.sh made in .gpu/; nothing is fetched. Through the device tool, from the checkout here:
#   scripts/gpu-bundle.sh, then run: command "bash scripts/gpu-check.sh", carry [".gpu"], timeout_s 600
# Its findings go to $OUT (runs/gpu-check where unset): summary.md and summary.json (each step, PASS or FAIL),
# bench.txt, eval.txt, answers.json, triton.log and this script's log. Exits 0 where every step passed. Arguments go to
# `python -m plates.gpu_check run` (--kind cpu runs it on the CPU, --requests, --concurrency).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-runs/gpu-check}
mkdir -p "$out"
exec > >(tee "$out/gpu-check.log") 2>&1
work=$(mktemp -d /tmp/plates-gpu-check.XXXXXX)
echo "gpu-check: $(date -u +%FT%TZ), $(python3 --version) at $(command -v python3), working in $work"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv || echo "gpu-check: no nvidia-smi"
[ -f .gpu/triton.tar.xz ] && [ -f .gpu/site.tar.xz ] || { echo "gpu-check: no bundle in .gpu (scripts/gpu-bundle.sh)"; exit 1; }

# Triton as the wheel lays it out; a virtual environment of this machine's Python whose packages are the bundle's
# first (numpy 1 before the machine's 2), then the machine's own (torch), then this checkout's. Triton's stub
# embeds the environment of the first python3 on PATH, and ignores PYTHONPATH.
python3 -m tarfile --filter tar -e .gpu/triton.tar.xz "$work/triton" || exit 1
python3 -m venv --without-pip "$work/venv" || exit 1
site=$("$work/venv/bin/python3" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
python3 -m tarfile --filter tar -e .gpu/site.tar.xz "$site" || exit 1
machine=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "import site; site.addsitedir('$machine')" > "$site/zz-machine.pth"
echo "$PWD" > "$site/zz-plates.pth"
export PATH="$work/venv/bin:$PATH" PLATES_TRITON_BUNDLE="$work/triton"
python3 -c 'import sys, numpy, torch, cv2, ultralytics, tritonclient.http, simplejpeg, plates
print("gpu-check: python3", sys.executable, "numpy", numpy.__version__, "torch", torch.__version__, "cv2",
      cv2.__version__, "ultralytics", ultralytics.__version__, "CUDA", torch.cuda.is_available())' || exit 1
# The stub links libpython3.X.so.1.0, which plates.server.launcher finds in this Python's LIBDIR.
python3 -c 'import pathlib, sysconfig; d = sysconfig.get_config_var("LIBDIR")
print("gpu-check: libpython in", d, sorted(p.name for p in pathlib.Path(d).glob("libpython3*")) or "NONE")'

python3 -m plates.gpu_check run --bundle .gpu --out "$out" --work "$work" "$@"
status=$?
echo "gpu-check: exit $status, $(date -u +%FT%TZ)"
exit $status
