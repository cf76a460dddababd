"""The Kubernetes manifests (deploy/k8s): schema-valid for a current Kubernetes, and consistent with the image."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import yaml

from .conftest import K8S_DIR, ROOT, dev_tool, docker_bytes, k8s_bytes, option

# The newest Kubernetes that kubernetes-validate 1.34.1 has schemas for.
KUBERNETES_VERSION = "1.34.0"


def validate(*paths) -> subprocess.CompletedProcess:
    return subprocess.run(
        [dev_tool("kubernetes-validate"), "--strict", "--kubernetes-version", KUBERNETES_VERSION, *map(str, paths)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def selects(selector: dict, labels: dict) -> bool:
    return bool(selector["matchLabels"]) and selector["matchLabels"].items() <= labels.items()


@pytest.fixture(scope="module")
def pod(manifests) -> dict:
    return manifests["Deployment"]["spec"]["template"]


@pytest.fixture(scope="module")
def container(pod) -> dict:
    containers = pod["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def port_number(container: dict, port) -> int:
    return port if isinstance(port, int) else {p["name"]: p["containerPort"] for p in container["ports"]}[port]


def test_manifests_pass_kubernetes_validate_strict(kustomization):
    result = validate(*(K8S_DIR / resource for resource in kustomization["resources"]))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("passed for resource") == len(kustomization["resources"])


def test_every_manifest_is_in_the_kustomization(kustomization):
    files = {path.name for path in K8S_DIR.glob("*.y*ml")} - {"kustomization.yaml"}
    assert files == set(kustomization["resources"])


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl (with its built-in kustomize) not installed")
def test_kustomization_renders_to_valid_manifests(tmp_path, kustomization):
    rendered = subprocess.run(
        ["kubectl", "kustomize", str(K8S_DIR)], capture_output=True, text=True, timeout=60, check=False
    )
    assert rendered.returncode == 0, rendered.stderr
    (tmp_path / "rendered.yaml").write_text(rendered.stdout)
    result = validate(tmp_path / "rendered.yaml")
    assert result.returncode == 0, result.stdout + result.stderr
    documents = list(yaml.safe_load_all(rendered.stdout))
    namespaced = [d for d in documents if d["kind"] != "Namespace"]
    assert namespaced and all(d["metadata"]["namespace"] == kustomization["namespace"] for d in namespaced)
    deployment = next(d for d in documents if d["kind"] == "Deployment")
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert image == f"plates:{version}", "the kustomize image tag is the package version (docs: plates:VERSION)"


def test_deployment_gets_one_gpu(container):
    resources = container["resources"]
    assert resources["limits"]["nvidia.com/gpu"] == 1
    assert resources["requests"].get("nvidia.com/gpu", 1) == 1  # extended resources: request equals limit


def test_deployment_requests_and_limits_cpu_and_memory(container):
    for key in ("cpu", "memory"):
        assert key in container["resources"]["requests"] and key in container["resources"]["limits"], key
    resources = container["resources"]
    assert k8s_bytes(resources["requests"]["memory"]) <= k8s_bytes(resources["limits"]["memory"])


def test_dev_shm_is_memory_backed_and_sized_like_compose(pod, container, compose):
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mounts["/dev/shm"])
    assert volume["emptyDir"]["medium"] == "Memory"
    size = k8s_bytes(volume["emptyDir"]["sizeLimit"])
    assert size == docker_bytes(compose["services"]["plates"]["shm_size"]), "one shm size for compose and k8s"
    # tmpfs pages count against the container's memory limit: the limit must leave room for the server itself.
    assert k8s_bytes(container["resources"]["limits"]["memory"]) >= size + 4 * 2**30


def test_read_only_root_has_the_writable_folders_the_image_test_gives(pod, container, compose):
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert set(mounts) == {"/dev/shm", "/tmp"}
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mounts["/tmp"])
    size = next(e.split("size=")[1] for e in compose["services"]["plates"]["tmpfs"] if e.startswith("/tmp:"))
    assert k8s_bytes(volume["emptyDir"]["sizeLimit"]) == docker_bytes(size), "one /tmp size for compose and k8s"


def test_probes_wait_for_loading_then_run_the_images_deep_check(container, dockerfile):
    healthcheck = json.loads(dockerfile.final("HEALTHCHECK")[-1].args.split(" CMD ", 1)[1])
    startup = container["startupProbe"]["httpGet"]
    assert startup["path"] == "/v2/health/ready"
    assert port_number(container, startup["port"]) == int(healthcheck[-1].rsplit(":", 1)[1])
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["exec"]["command"] == healthcheck, probe
    # Out of the Service before it is restarted.
    assert container["readinessProbe"]["failureThreshold"] < container["livenessProbe"]["failureThreshold"]


def test_container_does_not_override_the_image_command(container):
    # The image's CMD holds tritonserver's flags (repository, --exit-timeout-secs) in one place.
    assert "command" not in container and "args" not in container


def test_grace_period_outlasts_triton_drain(pod, container, dockerfile):
    exit_timeout = int(option(dockerfile.cmd(), "--exit-timeout-secs"))
    pre_stop = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
    pre_stop_s = int(pre_stop[1]) if pre_stop[:1] == ["sleep"] else 0
    assert pod["spec"]["terminationGracePeriodSeconds"] > pre_stop_s + exit_timeout


def test_pod_runs_as_the_image_user_without_privileges(pod, container, dockerfile):
    uid = int(dockerfile.final("USER")[-1].args.split(":")[0])
    pod_security = pod["spec"]["securityContext"]
    assert pod_security["runAsNonRoot"] is True
    assert pod_security["runAsUser"] == uid
    assert pod_security["seccompProfile"]["type"] == "RuntimeDefault"
    security = container["securityContext"]
    assert security["allowPrivilegeEscalation"] is False
    assert security["readOnlyRootFilesystem"] is True
    assert security["capabilities"]["drop"] == ["ALL"]
    assert "privileged" not in security and "add" not in security["capabilities"]


def test_pod_is_scraped_by_prometheus_on_the_metrics_port(pod, container):
    annotations = pod["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/path"] == "/metrics"
    assert int(annotations["prometheus.io/port"]) == port_number(container, "metrics") == 8002


def test_service_exposes_the_image_ports(manifests, pod, container, dockerfile):
    service = manifests["Service"]
    assert selects({"matchLabels": service["spec"]["selector"]}, pod["metadata"]["labels"])
    ports = {p["name"]: (p["port"], port_number(container, p["targetPort"])) for p in service["spec"]["ports"]}
    exposed = {int(port) for port in dockerfile.final("EXPOSE")[-1].args.split()}
    assert ports == {"http": (8000, 8000), "grpc": (8001, 8001), "metrics": (8002, 8002)}
    assert {target for _, target in ports.values()} == exposed


def test_deployment_selects_its_pods_and_rolls_without_losing_capacity(manifests, pod):
    deployment = manifests["Deployment"]
    assert selects(deployment["spec"]["selector"], pod["metadata"]["labels"])
    rolling = deployment["spec"]["strategy"]["rollingUpdate"]
    assert deployment["spec"]["strategy"]["type"] == "RollingUpdate"
    assert rolling["maxUnavailable"] == 0 and rolling["maxSurge"] >= 1


def test_hpa_scales_the_deployment(manifests):
    hpa, deployment = manifests["HorizontalPodAutoscaler"], manifests["Deployment"]
    assert hpa["apiVersion"] == "autoscaling/v2"
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert 2 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    # A replicas field would be reset on every `kubectl apply`, fighting the autoscaler.
    assert "replicas" not in deployment["spec"]
    metrics = hpa["spec"]["metrics"]
    assert metrics and all(m["type"] != "Resource" or m["resource"]["name"] in ("cpu", "memory") for m in metrics)


def test_pdb_keeps_pods_serving_through_drains(manifests, pod):
    pdb, hpa = manifests["PodDisruptionBudget"], manifests["HorizontalPodAutoscaler"]
    assert pdb["apiVersion"] == "policy/v1"
    assert selects(pdb["spec"]["selector"], pod["metadata"]["labels"])
    # At least one pod stays up at the autoscaler's floor.
    if "maxUnavailable" in pdb["spec"]:
        assert pdb["spec"]["maxUnavailable"] < hpa["spec"]["minReplicas"]
    else:
        assert 1 <= pdb["spec"]["minAvailable"] < hpa["spec"]["minReplicas"]


def test_admin_key_comes_from_a_secret_and_is_not_required(container):
    from plates.server.options import ADMIN_KEY_VARIABLE

    [variable] = [e for e in container["env"] if e["name"] == ADMIN_KEY_VARIABLE]
    reference = variable["valueFrom"]["secretKeyRef"]
    assert reference["optional"] is True, "without the Secret the APIs stay closed, and the pod still starts"
