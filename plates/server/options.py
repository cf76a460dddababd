"""The tritonserver flags every server of this project runs with: the image's, `plates serve`'s and the tests'.

- One model at a time: explicit model control, every model loaded at start (`--load-model=*`), so that the
  supervisor (plates.server.supervisor) loads again just the model whose process died, through the model-repository
  API, while the server, its ports and every client's connection stay up. The configs are complete, so Triton is
  told not to complete them: it would start a Python process for each model load only to ask its model.py for a
  config, importing PyTorch for seconds before the real one starts (yolo's load took 6.8 to 9.8 s with it, a whole
  reload 3 to 8 s without; docs/health.md).
- Closed doors: the model-repository (load, unload), shared-memory, trace and logging APIs change or expose the
  server; they answer only requests carrying the admin header (`plates-admin-key` over HTTP,
  `triton-grpc-protocol-plates-admin-key` over gRPC). Its value is a secret (`PLATES_ADMIN_KEY`, which Kubernetes
  takes from a Secret); without one, a random value closes them to everybody but the supervisor that started the
  server, which keeps it in memory to reload models. Triton 2.51 takes it only on its command line, so any process
  that can read tritonserver's /proc/PID/cmdline can read it (docs/security.md).
- Shared memory sized for the largest request: the Python backend gives each model instance a region in /dev/shm
  that grows to the largest tensors it has held and never shrinks. The default 1 MiB start and 1 MiB steps would
  grow a 48 MiB photo (plates.photos.pixels.MAX_SIDE squared, times 3) in 48 steps; 64 MiB steps grow it in one, and the
  regions of all four stubs together stay well inside the 512 MiB /dev/shm of compose and the Deployment.
"""

from __future__ import annotations

import os
import secrets

ADMIN_HEADER = "plates-admin-key"
# Triton's gRPC front end looks for a restricted protocol's header under this prefix, in the call's metadata
# (its refusal names it: "expecting header 'triton-grpc-protocol-plates-admin-key'").
GRPC_ADMIN_HEADER = f"triton-grpc-protocol-{ADMIN_HEADER}"
ADMIN_KEY_VARIABLE = "PLATES_ADMIN_KEY"
MODEL_CONTROL = ["--model-control-mode=explicit", "--load-model=*", "--disable-auto-complete-config"]
RESTRICTED_HTTP = "model-repository,shared-memory,trace,logging"
RESTRICTED_GRPC = "model-repository,shared-memory,trace,logging"
SHM_DEFAULT_BYTES = 4 * 2**20
SHM_GROWTH_BYTES = 64 * 2**20


def admin_key(given: str | None = None) -> str:
    """The admin header's value: given, else $PLATES_ADMIN_KEY, else a random one nobody knows."""
    return given or os.environ.get(ADMIN_KEY_VARIABLE) or secrets.token_urlsafe(24)


def serving_flags(key: str) -> list[str]:
    """The flags, the admin APIs closed with `key` (admin_key): the supervisor keeps it to call them."""
    return [
        *MODEL_CONTROL,
        f"--http-restricted-api={RESTRICTED_HTTP}:{ADMIN_HEADER}={key}",
        f"--grpc-restricted-protocol={RESTRICTED_GRPC}:{ADMIN_HEADER}={key}",
        f"--backend-config=python,shm-default-byte-size={SHM_DEFAULT_BYTES}",
        f"--backend-config=python,shm-growth-byte-size={SHM_GROWTH_BYTES}",
    ]
