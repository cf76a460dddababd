# syntax=docker/dockerfile:1
# The serving image: Triton 2.71 (NGC 26.07) with the plates package and a model repository built from weights/.
# Published: plates gateway on 8080 alone; Triton's 8000-8002 stay inside the container or pod (docs/security.md).
#   docker build -t plates:0.1.0 .                                     # models on the GPU (KIND_GPU)
#   docker build --build-arg INSTANCE_KIND=cpu -t plates:0.1.0-cpu .   # the same image, models on the CPU
# weights/ holds every weight it serves: plate_detector.pt (plate_detector.int8.onnx in the CPU build), plates_stn.pt,
# plates_lprnet.pt and the two-line rows' plates_rows_stn.pt and plates_rows_lprnet.pt, all committed.
# The two bases are build arguments so that scripts/test-image.sh can build the same file on local stand-ins where
# neither can be pulled (docs/deploy.md, "Stand-in bases"); the defaults are the production bases.
# NGC 26.07 (Triton 2.71) has the fixes of every Triton security bulletin up to May 2026: 25.07 fixed
# CVE-2025-23310/23311/23319/23320/23334, later bulletins need r25.08, r26.02 and r26.03 (docs/deploy.md). It is the
# newest release whose published matrix this project meets: Ubuntu 24.04 with Python 3.12 for the stub (the lock is
# resolved for 3.10 to 3.12), a libtorch (2.10 or later) that loads the TorchScript torch 2.5.1 writes, and CUDA 13.3
# (a driver of branch 580 or later). The lock stage runs the stub's Python, the interpreter the image installs for.
ARG LOCK_BASE=python:3.12-slim-bookworm
ARG TRITON_BASE=nvcr.io/nvidia/tritonserver:26.07-py3

# Stage 1 turns poetry.lock into a hashed requirements file and builds the package wheel, so the serving stage
# installs exactly the locked versions without Poetry in it.
FROM ${LOCK_BASE} AS lock
# Export and build need no project environment: do not let Poetry create one.
ENV POETRY_VIRTUALENVS_CREATE=false
WORKDIR /src
RUN pip install --no-cache-dir poetry==2.5.1 poetry-plugin-export==1.10.1
COPY pyproject.toml poetry.lock README.md ./
COPY plates/ plates/
# --only main: nvidia-pytriton (group local) brings its own tritonserver and must not land here; nor dev tools.
# --extras server: the image serves, so it takes PyTorch, Ultralytics and OpenVINO beside the client side.
# poetry export fails if poetry.lock is stale against pyproject.toml, so the image cannot drift from the lock.
RUN poetry export --only main --extras server --format requirements.txt --output requirements.txt \
    && poetry build --format wheel --output dist

FROM ${TRITON_BASE}
# gpu pins every model to KIND_GPU; cpu builds an image that serves without a GPU. Passed to the convert script.
ARG INSTANCE_KIND=gpu
# OpenMP threads (PyTorch's, in the PyTorch backend and the Python stubs) spin 10,000 turns after each parallel
# region (libgomp's estimate: 0.1 ms; measured on the 2-core VM: 0.5 to 3.7 ms of a core after a forward pass),
# across the gaps between one forward pass's operators, then sleep instead of spinning on cores the other models of
# the same request need (plates.server.launcher.OPENMP_ENVIRONMENT; docs/performance.md; the sweeps in git log).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    OMP_WAIT_POLICY=PASSIVE \
    GOMP_SPINCOUNT=10000

# opencv-python needs libGL and GLib, which the Triton image lacks. Not pinned to a version: the same file builds
# on NGC's Ubuntu 24.04 and on the Debian 12 stand-in, which share no version string, and each release's archive
# keeps only its latest security build; the base image's tag pins the release.
# The base image creates triton-server (UID 1000) without a home; Ultralytics and matplotlib want one.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgl1 libglib2.0-0 \
    && rm -rf /var/lib/apt/lists/* \
    && install -d -o 1000 -g 1000 /home/triton-server

# Into the image's system python3 (3.12): the interpreter the Python backend stub embeds. pip checks every
# package against the lock's hashes; the lock's pip first, since the base's own can predate the wheel metadata (2.4)
# poetry-core 2 writes. Ubuntu 24.04 marks its python3 EXTERNALLY-MANAGED (PEP 668), which makes pip refuse to
# install into it: --break-system-packages, because the stub embeds this interpreter and no other, so the packages
# must be its own (a virtual environment would be invisible to the stub).
# The download cache is a build cache mount, never a layer: a rebuild after a lock change fetches only what changed
# (PyTorch's CUDA wheels alone are about 3 GB). The locked packages come before the project's own wheel, so that a
# code change rebuilds from here on without reinstalling them.
COPY --from=lock /src/requirements.txt /tmp/plates/
RUN --mount=type=cache,target=/root/.cache/pip \
    python3 -m pip install --break-system-packages pip==25.0.1 \
    && python3 -m pip install --break-system-packages --require-hashes -r /tmp/plates/requirements.txt \
    && rm -rf /tmp/plates
COPY --from=lock /src/dist/ /tmp/plates/
RUN python3 -m pip install --break-system-packages --no-cache-dir --no-deps /tmp/plates/plates-*.whl \
    && rm -rf /tmp/plates

# The committed configs and adapters, then the generated files from the same script `scripts/setup.sh` runs
# locally. Weights are bind-mounted, not copied: the image keeps only what the script makes of them.
WORKDIR /opt/plates
COPY convert/build_model_repository.py convert/
COPY model_repository/ model_repository/
RUN --mount=type=bind,source=weights,target=/tmp/weights \
    python3 convert/build_model_repository.py \
        --weights-dir /tmp/weights \
        --repository /opt/plates/model_repository \
        --instance-kind "${INSTANCE_KIND}"

# triton-server, made by the base image; numeric so Kubernetes can check runAsNonRoot.
USER 1000:1000
# The gateway alone: `docker run -P` publishes only it. Triton's 8000 (HTTP), 8001 (gRPC) and 8002 (metrics) still
# listen, for the gateway and the probes inside the container, and in Kubernetes for labelled clients through the
# Service plates-triton; publishing them (scripts/test-image.sh does, on 127.0.0.1) is a choice made per run.
EXPOSE 8080
# The deep check: every model answers a small request (Triton 2.51 keeps saying ready after a model's stub died).
HEALTHCHECK --interval=10s --timeout=10s --start-period=180s --retries=2 \
    CMD ["python3", "-m", "plates.client.health", "--url", "localhost:8000"]
# The gateway listens beyond the loopback here, so it needs API keys (PLATES_GATEWAY_KEYS, or the file named by
# PLATES_GATEWAY_KEYS_FILE): without any, the supervisor refuses to start (docs/deploy.md).
ENV PLATES_GATEWAY_HOST=0.0.0.0
# The base image's entrypoint (nvidia_entrypoint.sh) stays: it execs this command. The supervisor runs plates gateway
# (the published API, on 8080) beside tritonserver, and exits 1 when either fails, so that the restart policy
# (compose) or the kubelet starts a fresh container: one process tree, one restart policy. It looks at the models'
# stub processes every second: a model whose stub has died, or that failed two deep checks 5 s apart, it loads again
# through Triton's model-repository API while the container, Triton and the clients' connections stay up; it exits 1
# only when Triton itself dies or a reload fails, killing the server and its stubs (docs/health.md). It warms the
# server up before it reports ready, adds the model-control, restricted-API and shared-memory flags
# (plates.server.options) and passes SIGTERM on to both.
# --strict-readiness: ready only once every model is. --exit-timeout-secs: how long SIGTERM waits for in-flight
# requests; compose's stop_grace_period and the pod's terminationGracePeriodSeconds exceed it.
CMD ["python3", "-m", "plates.server.supervisor", "--gateway", "--", \
     "tritonserver", \
     "--model-repository=/opt/plates/model_repository", \
     "--strict-readiness=true", \
     "--exit-timeout-secs=30"]
