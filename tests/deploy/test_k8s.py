"""The Kubernetes manifests (deploy/k8s): schema-valid for a current Kubernetes, and consistent with the image."""

from __future__ import annotations

import re
import subprocess

import pytest
import yaml

from .conftest import K8S_DIR, ROOT, dev_tool, docker_bytes, k8s_bytes, of_kind, option

# The newest Kubernetes that kubernetes-validate 1.34.1 has schemas for.
KUBERNETES_VERSION = "1.34.0"
GATEWAY_PORT = 8080
TRITON_PORTS = {"http": 8000, "grpc": 8001, "metrics": 8002}
TRITON_CLIENT_LABEL = {"plates.io/triton-client": "true"}
MONITORING_NAMESPACE = {"kubernetes.io/metadata.name": "monitoring"}
GATEWAY_KEYS_SECRET = "plates-gateway"


def validate(*paths) -> subprocess.CompletedProcess:
    return subprocess.run(
        [dev_tool("kubernetes-validate"), "--strict", "--kubernetes-version", KUBERNETES_VERSION, *map(str, paths)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def selects(selector: dict, labels: dict) -> bool:
    return bool(selector["matchLabels"]) and selector["matchLabels"].items() <= labels.items()


@pytest.fixture(scope="module")
def pod(manifests) -> dict:
    return manifests["Deployment/plates"]["spec"]["template"]


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
    documents = sum(len(list(yaml.safe_load_all((K8S_DIR / r).read_text()))) for r in kustomization["resources"])
    assert result.stdout.count("passed for resource") == documents


def test_every_manifest_is_in_the_kustomization(kustomization):
    files = {path.name for path in K8S_DIR.glob("*.y*ml")} - {"kustomization.yaml"}
    assert files == set(kustomization["resources"])


def test_kustomization_renders_to_valid_manifests(tmp_path, kustomization):
    rendered = subprocess.run(
        [dev_tool("kubectl"), "kustomize", str(K8S_DIR)], capture_output=True, text=True, timeout=60, check=False
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
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"] if not m.get("readOnly")}
    assert set(mounts) == {"/dev/shm", "/tmp"}
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mounts["/tmp"])
    size = next(e.split("size=")[1] for e in compose["services"]["plates"]["tmpfs"] if e.startswith("/tmp:"))
    assert k8s_bytes(volume["emptyDir"]["sizeLimit"]) == docker_bytes(size), "one /tmp size for compose and k8s"


def test_probes_ask_the_gateways_readyz(container):
    """The gateway's /readyz is the deep check's last answer: every probe reads it on the gateway's port."""
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        get = container[probe]["httpGet"]
        assert (get["path"], port_number(container, get["port"])) == ("/readyz", GATEWAY_PORT), probe
    # Out of the Service before it is restarted.
    assert container["readinessProbe"]["failureThreshold"] < container["livenessProbe"]["failureThreshold"]


def test_liveness_outlasts_the_supervisor_and_startup_covers_loading(container):
    """The supervisor kills a server whose check failed twice in a row and exits: liveness is only the backstop."""
    from plates.client.health import PROBE_TIMEOUT_S
    from plates.server.supervisor import FAILURES, INTERVAL_S

    liveness = container["livenessProbe"]
    assert liveness["periodSeconds"] * liveness["failureThreshold"] > INTERVAL_S * FAILURES + PROBE_TIMEOUT_S
    startup = container["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 300, "model loading takes minutes on a GPU"


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


def test_namespace_enforces_the_restricted_pod_security_standard(manifests, kustomization):
    namespace = manifests[f"Namespace/{kustomization['namespace']}"]
    labels = namespace["metadata"]["labels"]
    for mode in ("enforce", "audit", "warn"):
        assert labels[f"pod-security.kubernetes.io/{mode}"] == "restricted", mode


def test_pod_meets_the_restricted_profile_beyond_the_security_context(pod):
    """What the restricted profile checks besides the security contexts: no host namespaces, ports or paths."""
    spec = pod["spec"]
    assert not any(spec.get(key) for key in ("hostNetwork", "hostPID", "hostIPC"))
    allowed = {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
    for volume in spec["volumes"]:
        assert set(volume) - {"name"} <= allowed, volume["name"]
    for container in spec["containers"] + spec.get("initContainers", []):
        assert all("hostPort" not in port for port in container.get("ports", [])), container["name"]
        assert container["securityContext"]["capabilities"]["drop"] == ["ALL"], container["name"]


def test_pod_is_scraped_by_prometheus_on_the_gateways_metrics(pod, container):
    annotations = pod["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/path"] == "/metrics"
    assert int(annotations["prometheus.io/port"]) == port_number(container, "gateway") == GATEWAY_PORT


def test_public_service_exposes_only_the_gateway(manifests, pod, container, dockerfile):
    service = manifests["Service/plates"]
    assert service["spec"]["type"] == "ClusterIP"
    assert selects({"matchLabels": service["spec"]["selector"]}, pod["metadata"]["labels"])
    targets = {port_number(container, p["targetPort"]) for p in service["spec"]["ports"]}
    assert targets == {GATEWAY_PORT}
    exposed = {int(port) for instruction in dockerfile.final("EXPOSE") for port in instruction.args.split()}
    assert targets == exposed, "the image exposes what the public Service publishes, and nothing else"


def test_triton_service_is_cluster_internal_and_serves_tritons_ports(manifests, pod, container):
    service = manifests["Service/plates-triton"]
    assert service["spec"].get("type", "ClusterIP") == "ClusterIP", "Triton must never leave the cluster"
    assert selects({"matchLabels": service["spec"]["selector"]}, pod["metadata"]["labels"])
    ports = {p["name"]: (p["port"], port_number(container, p["targetPort"])) for p in service["spec"]["ports"]}
    assert ports == {name: (port, port) for name, port in TRITON_PORTS.items()}
    # Only the two Services, and no other one reaches Triton's ports.
    assert {s["metadata"]["name"] for s in of_kind(manifests, "Service")} == {"plates", "plates-triton"}


def test_every_service_port_is_a_container_port(manifests, container):
    names, numbers = {p["name"] for p in container["ports"]}, {p["containerPort"] for p in container["ports"]}
    for service in of_kind(manifests, "Service"):
        for port in service["spec"]["ports"]:
            assert port["targetPort"] in (names if isinstance(port["targetPort"], str) else numbers), port


# --- NetworkPolicies --------------------------------------------------------------------------------------------


def ingress_rules(manifests: dict, pod_labels: dict) -> list[dict]:
    """Every ingress rule of every policy that selects the plates pods."""
    rules = []
    for policy in of_kind(manifests, "NetworkPolicy"):
        selector = policy["spec"]["podSelector"]
        if not selector or selects(selector, pod_labels):
            rules.extend(policy["spec"].get("ingress", []))
    return rules


def opened_to(manifests: dict, pod: dict, container: dict, port: int) -> list[list[dict] | None]:
    """The `from` of each rule that opens `port` of the plates pods (None: from anywhere)."""
    opened = []
    for rule in ingress_rules(manifests, pod["metadata"]["labels"]):
        ports = rule.get("ports")
        if ports is None or any(port_number(container, p["port"]) == port for p in ports):
            opened.append(rule.get("from"))
    return opened


def test_namespace_denies_ingress_unless_a_policy_allows_it(manifests):
    deny = [p for p in of_kind(manifests, "NetworkPolicy") if p["spec"]["podSelector"] == {}]
    assert len(deny) == 1, "one policy selects every pod of the namespace"
    assert deny[0]["spec"]["policyTypes"] == ["Ingress"] and not deny[0]["spec"].get("ingress")


def test_gateway_port_is_open_to_any_source(manifests, pod, container):
    assert None in opened_to(manifests, pod, container, GATEWAY_PORT)


def test_triton_ports_are_open_only_to_labelled_pods_of_the_namespace(manifests, pod, container):
    for name in ("http", "grpc"):
        sources = opened_to(manifests, pod, container, TRITON_PORTS[name])
        assert sources, f"{name}: the labelled clients cannot reach it"
        for peers in sources:
            assert peers, f"{name} is open to any source"
            # A podSelector alone means pods of this namespace; a namespaceSelector would widen it.
            assert all(set(peer) == {"podSelector"} for peer in peers), peers
            assert all(peer["podSelector"]["matchLabels"] == TRITON_CLIENT_LABEL for peer in peers), peers


def test_tritons_metrics_are_open_only_to_the_monitoring_namespace(manifests, pod, container):
    sources = opened_to(manifests, pod, container, TRITON_PORTS["metrics"])
    assert sources
    for peers in sources:
        assert peers, "metrics open to any source"
        for peer in peers:
            assert peer["namespaceSelector"]["matchLabels"] == MONITORING_NAMESPACE, peer


def test_policies_name_ports_the_container_has(manifests, container):
    names = {p["name"] for p in container["ports"]}
    for policy in of_kind(manifests, "NetworkPolicy"):
        for rule in policy["spec"].get("ingress", []):
            for port in rule.get("ports", []):
                assert port["port"] in names, (policy["metadata"]["name"], port)


# --- the gateway's keys -----------------------------------------------------------------------------------------


def test_gateway_keys_come_from_a_required_secret_mounted_as_a_file(pod, container):
    variables = {e["name"]: e for e in container["env"]}
    assert "PLATES_GATEWAY_KEYS" not in variables, "keys in the environment show in the pod spec"
    path = variables["PLATES_GATEWAY_KEYS_FILE"]["value"]
    mounts = [m for m in container["volumeMounts"] if path.startswith(m["mountPath"].rstrip("/") + "/")]
    assert len(mounts) == 1 and mounts[0].get("readOnly") is True
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mounts[0]["name"])
    secret = volume["secret"]
    assert secret["secretName"] == GATEWAY_KEYS_SECRET
    assert not secret.get("optional"), "without keys the gateway serves only its own loopback"
    relative = path[len(mounts[0]["mountPath"].rstrip("/")) + 1 :]
    assert [item["path"] for item in secret["items"]] == [relative]
    assert secret["defaultMode"] & 0o007 == 0, "other users must not read the keys"


def test_deployment_selects_its_pods_and_rolls_without_losing_capacity(manifests, pod):
    deployment = manifests["Deployment/plates"]
    assert selects(deployment["spec"]["selector"], pod["metadata"]["labels"])
    rolling = deployment["spec"]["strategy"]["rollingUpdate"]
    assert deployment["spec"]["strategy"]["type"] == "RollingUpdate"
    assert rolling["maxUnavailable"] == 0 and rolling["maxSurge"] >= 1


def test_hpa_scales_the_deployment(manifests):
    hpa, deployment = manifests["HorizontalPodAutoscaler/plates"], manifests["Deployment/plates"]
    assert hpa["apiVersion"] == "autoscaling/v2"
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert 2 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    # A replicas field would be reset on every `kubectl apply`, fighting the autoscaler.
    assert "replicas" not in deployment["spec"]
    metrics = hpa["spec"]["metrics"]
    assert metrics and all(m["type"] != "Resource" or m["resource"]["name"] in ("cpu", "memory") for m in metrics)


def test_pdb_keeps_pods_serving_through_drains(manifests, pod):
    pdb, hpa = manifests["PodDisruptionBudget/plates"], manifests["HorizontalPodAutoscaler/plates"]
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
    assert reference["name"] != GATEWAY_KEYS_SECRET, "the admin key opens Triton's APIs: never a gateway key"
