"""Waiting for a Triton server to be ready: one helper for the CLI, the launcher and the tests."""

from __future__ import annotations

import http.client
import time
import urllib.error
import urllib.request
from collections.abc import Callable

from plates.exceptions import ServerUnavailableError


def normalize_url(url: str) -> str:
    """`localhost:8000` or `http://localhost:8000/` to `http://localhost:8000`."""
    url = url.strip().rstrip("/")
    return url if "://" in url else f"http://{url}"


def not_ready(url: str, timeout: float = 2.0) -> str | None:
    """None where a Triton server at `url` says it is ready; else why not, in a few words."""
    try:
        with urllib.request.urlopen(f"{normalize_url(url)}/v2/health/ready", timeout=timeout) as response:
            return None if response.status == 200 else f"/v2/health/ready answers HTTP {response.status}"
    except urllib.error.HTTPError as error:
        return f"/v2/health/ready answers HTTP {error.code}: not ready, or not Triton's HTTP endpoint"
    except http.client.HTTPException:
        # A gRPC port answers an HTTP/1.1 request with HTTP/2 frames, or hangs up.
        return "something answers, but not over HTTP/1.1: not Triton's HTTP endpoint (its gRPC port?)"
    except (urllib.error.URLError, OSError, ValueError) as error:
        return f"no server answers ({getattr(error, 'reason', error)})"


def is_ready(url: str, timeout: float = 2.0) -> bool:
    return not_ready(url, timeout) is None


def require_ready(url: str) -> None:
    """Raise ServerUnavailableError naming the URL unless a Triton server there is ready: before a command's work."""
    reason = not_ready(url)
    if reason is not None:
        raise ServerUnavailableError(f"no ready Triton server at {normalize_url(url)}: {reason}")


def wait_for_server(
    url: str, timeout: float = 120.0, interval: float = 0.5, alive: Callable[[], bool] = lambda: True
) -> None:
    """Poll `/v2/health/ready` until it answers 200; ServerUnavailableError after `timeout` s or once `alive()` is
    False."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if is_ready(url):
            return
        if not alive():
            raise ServerUnavailableError(f"the server for {normalize_url(url)} exited before it was ready")
        time.sleep(interval)
    raise ServerUnavailableError(f"no ready Triton server at {normalize_url(url)} after {timeout:.0f} s")
