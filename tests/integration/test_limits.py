"""The largest photo the service takes is taken, a larger one is refused before it costs, and after the largest
requests the server's memory stays inside what the Kubernetes Deployment gives a pod."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import psutil
import pytest
import tritonclient.http as httpclient
import yaml
from tritonclient.utils import InferenceServerException

from plates.build.paths import PROJECT_ROOT
from plates.client.readiness import is_ready
from plates.photos.pixels import MAX_SIDE
from plates.server.process_memory import memory, server_processes

DEPLOYMENT = PROJECT_ROOT / "deploy" / "k8s" / "deployment.yaml"


def k8s_limits() -> tuple[int, int]:
    """The pod's memory limit and its /dev/shm size, in bytes (Gi and Mi only: what the manifest uses)."""
    pod = yaml.safe_load(DEPLOYMENT.read_text())["spec"]["template"]["spec"]
    units = {"Gi": 2**30, "Mi": 2**20}

    def parse(quantity: str) -> int:
        return int(quantity[:-2]) * units[quantity[-2:]]

    memory = parse(pod["containers"][0]["resources"]["limits"]["memory"])
    shm = next(parse(v["emptyDir"]["sizeLimit"]) for v in pod["volumes"] if v["name"] == "dshm")
    return memory, shm


def shm_prefix(process: psutil.Process) -> str:
    flag = next(a for a in process.cmdline() if "shm-region-prefix-name=" in a)
    return flag.rsplit("=", 1)[1]


def infer(client, image: np.ndarray):
    request = httpclient.InferInput("input__0", list(image.shape), "UINT8")
    request.set_data_from_numpy(image)
    return client.infer("plate_recognition", [request])


def test_largest_photos_keep_the_server_inside_the_pods_memory(request, triton_url, http_client):
    if request.config.getoption("--triton-url"):
        pytest.skip("reads the memory of the local server's processes")
    largest = np.random.default_rng(0).integers(0, 255, (MAX_SIDE, MAX_SIDE, 3), dtype=np.uint8)
    for _ in range(3):
        infer(http_client, largest)
    processes = server_processes(triton_url)
    assert processes, f"no tritonserver process listening at {triton_url}"
    rss = sum(p.rss for p in memory(processes).values())
    shm = sum(f.stat().st_size for f in Path("/dev/shm").glob(f"{shm_prefix(processes[0])}*"))
    memory_limit, shm_limit = k8s_limits()
    print(f"after 3 requests of {MAX_SIDE}x{MAX_SIDE}: RSS {rss / 2**30:.2f} GiB, /dev/shm {shm / 2**20:.0f} MiB")
    assert shm < shm_limit, f"/dev/shm {shm / 2**20:.0f} MiB of {shm_limit / 2**20:.0f} MiB"
    # tmpfs pages count against the pod's memory limit as well.
    assert rss + shm < memory_limit


def test_a_photo_over_the_side_limit_is_refused_and_the_server_stays_ready(triton_url, http_client):
    with pytest.raises(InferenceServerException, match=f"sides between 1 and {MAX_SIDE}") as error:
        infer(http_client, np.zeros((16, MAX_SIDE + 1, 3), np.uint8))
    assert str(error.value.status()) == "400"
    assert is_ready(triton_url)
