"""The errors `plates` raises, and what each means to Triton and to a shell.

A model adapter answers a request that raised one of these with its Triton code; the CLIs exit with its exit
code. Anything else that escapes is a bug and is answered as INTERNAL / exit 70.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class PlatesError(Exception):
    """Base of every error this package raises on purpose."""

    triton_code = "INTERNAL"
    exit_code = 70  # EX_SOFTWARE


class InvalidInputError(PlatesError):
    """A request or a file that cannot be served: wrong dtype or shape, not an image, unreadable."""

    triton_code = "INVALID_ARG"
    exit_code = 65  # EX_DATAERR


class OutputError(PlatesError):
    """A file or folder the command was asked to write cannot be written."""

    exit_code = 73  # EX_CANTCREAT


class ModelConfigError(PlatesError):
    """A model's config.pbtxt lacks or mistypes something the model needs."""

    exit_code = 78  # EX_CONFIG


class SettingsError(PlatesError):
    """A command's flags, environment or files that cannot work, or cannot work safely, together."""

    exit_code = 78  # EX_CONFIG


class WeightsError(PlatesError):
    """A weight file is missing or is not the file we expect."""

    exit_code = 66  # EX_NOINPUT


class ServerUnavailableError(PlatesError):
    """The Triton server does not answer, or is not ready."""

    triton_code = "UNAVAILABLE"
    exit_code = 69  # EX_UNAVAILABLE


class OverloadedError(ServerUnavailableError):
    """The server refused a request because it is busy: a model's queue was full, or the request waited in it past
    its timeout. Nothing was wrong with the request; the same request may succeed later."""


class ReloadingError(ServerUnavailableError):
    """A model the service calls is loading again: its process died or it failed its checks, and the supervisor
    reloads it (plates.server.supervisor). Not an overload: the same request may succeed once it is back, in
    seconds."""


# In the message of every ReloadingError the orchestrator answers, followed by the model's name, so that a client tells
# it from a refusal: both are HTTP 503 (plates.client.service raises ReloadingError again for it; the gateway counts it
# as triton_reloading).
RELOADING = "the service is reloading model"
# What Triton 2.51 answers a call to a model that is not loaded: while it unloads or loads again, "Model 'yolo' is
# not ready" to a BLS call, "Request for unknown model: 'yolo' has no available versions" to a client's.
NOT_LOADED = ("is not ready", "Request for unknown model")


def not_serving(model: str, message: str) -> bool:
    """Whether `message` is Triton's own answer that `model` cannot serve now: it is not loaded (NOT_LOADED, naming
    it), or its stub has died ("Stub process 'yolo_0_0' is not healthy.", naming its instance)."""
    not_loaded = f"'{model}'" in message and any(words in message for words in NOT_LOADED)
    return not_loaded or re.search(rf"Stub process '{re.escape(model)}_\d+_\d+' is not healthy", message) is not None


class ModelLoadError(PlatesError):
    """Triton could not load a model again: its model-repository API answered an error, or nothing."""


class SourceUnavailableError(PlatesError):
    """A camera or stream (`plates watch`) that cannot be opened."""

    exit_code = 69  # EX_UNAVAILABLE


class SubModelError(PlatesError):
    """A model the orchestrator called answered with an error. INTERNAL: the orchestrator checks what the client
    sent before calling, so what fails after that is the service's fault (and Triton 2.51 gives BLS callers no
    sub-model error code to pass on)."""

    def __init__(self, model: str, message: str) -> None:
        super().__init__(f"model '{model}' failed: {message}")
        self.model = model
        self.answer = message  # the sub-model's own message

    def input_fault(self, name: str) -> InvalidInputError | None:
        """The client's error, where the sub-model refused its input `name` as the client sent it (the orchestrator
        passed it on): the sub-model answers an InvalidInputError as "<model>: <its message>", and those messages
        begin with the input's name. None for any other error."""
        mark = f"{self.model}: {name} "
        at = self.answer.find(mark)
        return None if at < 0 else InvalidInputError(self.answer[at + len(self.model) + 2 :])


# What Triton 2.51 says when a model's queue policy refuses a request: its queue was full, or it waited past the
# queue's timeout. Both answer the client HTTP 503, but a BLS caller gets them with code INTERNAL (seen on 2.51),
# so the message is all that tells a sub-model's refusal from its failure.
QUEUE_REFUSALS = ("Exceeds maximum queue size", "Request timeout expired")


def sub_model_error(model: str, message: str, exited: Callable[[], bool] = lambda: False) -> PlatesError:
    """The error to answer for a sub-model's error response. A sub-model that is not loaded, or whose process has
    died, is reloading: its supervisor loads it again within seconds. Triton's message says so where it can
    (not_serving); a refusal from the queue of a dead stub does not, and `exited()` looks whether a stub that served
    the model has exited since (asked only where the error is not the sub-model's own answer, which begins with its
    name; plates.inference.stubs.SiblingStubs: still so once the supervisor has started the next stub, as the dead
    one's queue goes on refusing what it held). That comes first: a dead stub's requests wait
    on it about a second and fail, so its queue fills and refuses like a busy one's. Otherwise a refusal stays a
    refusal (503, try later)."""
    if not message.startswith(f"{model}: ") and (not_serving(model, message) or exited()):
        return ReloadingError(f"{RELOADING} '{model}' ({message})")
    if any(refusal in message for refusal in QUEUE_REFUSALS):
        return OverloadedError(f"model '{model}' is overloaded: {message}")
    return SubModelError(model, message)


@contextmanager
def naming(what: str) -> Iterator[None]:
    """Prefix `what` (such as "photo a.jpg") to a PlatesError raised inside, keeping its class and exit code."""
    try:
        yield
    except PlatesError as error:
        error.args = (f"{what}: {error}",)
        raise
