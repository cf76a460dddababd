"""deploy/k8s's Deployment, with its Secret, under `podman kube play` on the built image: it starts, serves car.jpg
through its gateway to the Secret's key, and is torn down (docs/deploy.md, "The Deployment under podman kube play").

The manifests are kustomize's rendering of deploy/k8s, the image set as `kustomize edit set image` sets it, and the
Secret is `kubectl create secret generic plates-gateway --from-literal=keys=...`, as docs/deploy.md deploys them;
the whole of it goes to kube play. What kube play does not do as Kubernetes does is said in docs/deploy.md, and
checked here where it matters to the pod: the one thing done for it is the memory-backed emptyDir, made beforehand
as Kubernetes makes it (Debian 12's podman 4.3 would make an on-disk folder that user 1000 cannot write).
"""

from __future__ import annotations

import base64
import os
import re
import secrets
import shlex
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
import yaml
from readings import CAR_PLATE_LOWER

from plates.build.paths import PROJECT_ROOT

from .conftest import Engine

K8S = PROJECT_ROOT / "deploy" / "k8s"
SECRET = "plates-gateway"  # the Secret deploy/k8s's Deployment mounts as the gateway's keys
KEYS_FILE = "/etc/plates/gateway/keys"
# The kinds of deploy/k8s that kube play says it does not support, and leaves out (docs/deploy.md).
LEFT_OUT = {"Namespace", "Service", "NetworkPolicy", "HorizontalPodAutoscaler", "PodDisruptionBudget"}
READY_S = 600  # from kube play to the gateway's /readyz answering 200: a cold start on a busy 2-core machine
UNITS = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30}


@dataclass(frozen=True)
class Played:
    gateway: str  # http://127.0.0.1:PORT, the gateway's containerPort as kube play publishes it
    container: str
    key: str  # the Secret's key, as created
    pod_security: dict
    left_out: set[str]  # the kinds kube play said it does not support
    ready_s: float


def run(command: list[str], timeout: float = 120) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(command)}: {done.stderr[-2000:]}"
    return done.stdout


def rendered(tmp_path: Path, image: str, key: str) -> str:
    """The Secret, then deploy/k8s as kustomize renders it with `image` in place of plates:VERSION."""
    kubectl = str(Path(sys.executable).with_name("kubectl"))
    shutil.copytree(K8S, tmp_path / "k8s")  # kustomize takes no absolute path as a resource
    name, tag = image.rsplit(":", 1)
    (tmp_path / "overlay").mkdir()
    (tmp_path / "overlay" / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": ["../k8s"],
                "images": [{"name": "plates", "newName": name, "newTag": tag}],
            }
        )
    )
    manifests = run([kubectl, "kustomize", str(tmp_path / "overlay")])
    secret = run(
        [
            kubectl,
            "create",
            "secret",
            "generic",
            SECRET,
            "--namespace",
            "plates",
            f"--from-literal=keys={key}",
            "--dry-run=client",
            "--output",
            "yaml",
        ]
    )
    return f"{secret}---\n{manifests}"


def size_in_bytes(quantity: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([KMG]i)?", quantity).groups()
    return int(number) * UNITS.get(unit, 1)


def memory_volumes(pod: dict) -> list[list[str]]:
    """`podman volume create` arguments for each memory-backed emptyDir, as Kubernetes makes it: a tmpfs of its
    sizeLimit that the pod's user and fsGroup can write. kube play 4.3 reuses a volume of the same name."""
    context = pod["securityContext"]
    made = []
    for volume in pod["volumes"]:
        empty = volume.get("emptyDir") or {}
        if empty.get("medium") == "Memory":
            # nr_blocks, not size: podman 4.3 takes size= as a disk quota and refuses it on a tmpfs.
            blocks = size_in_bytes(empty["sizeLimit"]) // os.sysconf("SC_PAGE_SIZE")
            options = f"mode=1777,uid={context['runAsUser']},gid={context['fsGroup']},nr_blocks={blocks}"
            made.append(["--opt", "type=tmpfs", "--opt", "device=tmpfs", "--opt", f"o={options}", volume["name"]])
    return made


def check_free(podman: Engine, pod_name: str, volumes: list[str], ports: list[int]) -> None:
    """Fails, naming it, where something of the pod's is in use here: the test replaces nothing of anyone's."""
    taken = [f"pod {pod_name}"] if podman("pod", "exists", pod_name, check=False).returncode == 0 else []
    taken += [f"secret {SECRET}"] if podman("secret", "inspect", SECRET, check=False).returncode == 0 else []
    taken += [f"volume {name}" for name in volumes if podman("volume", "exists", name, check=False).returncode == 0]
    for port in ports:
        with socket.socket() as probe:
            try:
                probe.bind(("0.0.0.0", port))
            except OSError:
                taken.append(f"port {port} (kube play publishes each containerPort on the host as it is)")
    if taken:
        pytest.fail("podman kube play cannot start deploy/k8s here: in use: " + ", ".join(taken))


def wait_ready(gateway: str, podman: Engine, container: str) -> None:
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{gateway}/readyz", timeout=5).status_code == 200:
                return
        except requests.ConnectionError:
            pass  # the gateway is not listening yet, or its container is restarting
        time.sleep(3)
    logs = podman("logs", "--tail", "40", container, check=False)
    pytest.fail(f"the pod was not ready {READY_S} s after kube play:\n{logs.stdout[-3000:]}{logs.stderr[-3000:]}")


@pytest.fixture(scope="module")
def played(podman: Engine, image: str, tmp_path_factory) -> Played:
    folder = tmp_path_factory.mktemp("kube-play")
    key = secrets.token_hex(16)
    yaml_file = folder / "plates.yaml"
    yaml_file.write_text(rendered(folder, image, key))
    deployment = next(d for d in yaml.safe_load_all(yaml_file.read_text()) if d["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    [container] = pod["containers"]
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    # kube play 4.3 names the Deployment's one pod NAME-pod-0, its containers after it; its volumes after the pod's.
    pod_name = f"{deployment['metadata']['name']}-pod-0"
    volumes = [volume.get("secret", {}).get("secretName") or volume["name"] for volume in pod["volumes"]]
    check_free(podman, pod_name, volumes, list(ports.values()))
    try:
        for arguments in memory_volumes(pod):
            podman("volume", "create", *arguments)
        started = time.monotonic()
        play = podman("--log-level", "info", "kube", "play", str(yaml_file), timeout=300)
        left_out = set(re.findall(r"Kube kind (\w+) not supported", play.stderr))
        gateway = f"http://127.0.0.1:{ports['gateway']}"
        name = f"{pod_name}-{container['name']}"
        wait_ready(gateway, podman, name)
        yield Played(gateway, name, key, pod["securityContext"], left_out, time.monotonic() - started)
    finally:
        podman("kube", "down", str(yaml_file), timeout=120, check=False)
        podman("secret", "rm", SECRET, check=False)
        podman("volume", "rm", "--force", *volumes, check=False)
    assert podman("pod", "exists", pod_name, check=False).returncode != 0, "kube down left the pod"


@pytest.fixture(scope="module")
def podman(request, engine: Engine) -> Engine:
    given = request.config.getoption("--kube-engine")
    podman = Engine(shlex.split(given)) if given else engine
    if podman.command[0] != "podman":
        pytest.fail(f"kube play needs podman: --kube-engine names it where --engine is {engine.command[0]}")
    return podman


def test_kube_play_leaves_out_every_kind_but_the_deployment_and_its_secret(played):
    assert played.left_out == LEFT_OUT


def test_the_pod_runs_as_its_security_context_says(played, podman):
    status = podman(
        "exec",
        played.container,
        "sh",
        "-c",
        "id -u; id -g; grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status; touch /probe 2>&1 || true",
    ).stdout
    uid, gid, *rest = status.splitlines()
    assert (uid, gid) == (str(played.pod_security["runAsUser"]), str(played.pod_security["runAsGroup"]))
    fields = dict(re.findall(r"^(\w+):\s+(\S+)$", "\n".join(rest), re.M))
    # No capability (drop: [ALL]), no privilege escalation, the runtime's default seccomp filter (mode 2).
    assert fields == {"CapEff": "0000000000000000", "NoNewPrivs": "1", "Seccomp": "2"}, status
    assert "Read-only file system" in status


def test_the_deployment_reads_car_jpg_through_its_gateway_with_the_secrets_key(played, podman, samples):
    mounted = podman("exec", played.container, "cat", KEYS_FILE).stdout
    # Debian 12's podman 4.3 writes a Secret's data into its volume as the base64 text it is stored as, undecoded:
    # the gateway's key is then that text (docs/deploy.md). Kubernetes, and a podman that decodes, give the key.
    encoded = base64.b64encode(played.key.encode()).decode()
    assert mounted in (played.key, encoded), mounted
    with open(samples / "car.jpg", "rb") as photo:
        answer = requests.post(
            f"{played.gateway}/v1/plate-reader/",
            files={"upload": photo},
            headers={"Authorization": f"Token {mounted}"},
            timeout=60,
        )
    assert answer.status_code == 201, answer.text
    plates = [result["plate"] for result in answer.json()["results"]]
    print(
        f"kube play: ready {played.ready_s:.0f} s after it started the pod; car.jpg read as {plates} through the "
        f"gateway, with the Secret's key {'undecoded' if mounted == encoded else 'decoded'}"
    )
    assert plates == [CAR_PLATE_LOWER]


def test_without_the_key_the_gateway_refuses(played, samples):
    with open(samples / "car.jpg", "rb") as photo:
        answer = requests.post(f"{played.gateway}/v1/plate-reader/", files={"upload": photo}, timeout=60)
    assert answer.status_code == 401
