"""Running the gateway on uvicorn, with a deadline on every request that uvicorn does not have.

uvicorn times out idle keep-alive connections only, and restarts that timer on every byte, so a client that sends
its headers or its body a byte at a time holds a connection (and one of its key's places in flight) for as long as it
likes; middleware cannot help, since the application sees a request only once its headers are complete. So the
connection's protocol gets an absolute deadline: `header_timeout` seconds from a request's first byte to the end of
its headers, then `body_timeout` seconds to the end of its body, disarmed once the request is read. When it passes,
the client gets 408 if nothing was answered yet, and the connection is closed. The protocol also caps the size of
the request line and headers, which uvicorn's httptools parser does not.

A connection closed after a refusal is closed the way nginx closes it ("lingering close"): the answer is sent and
the sending side shut, then what the client still sends is read and dropped for a moment before the socket is
closed. A socket closed with unread data in it sends a reset, and a client still sending its body (a 200 MB upload
refused from its Content-Length) would lose the answer to that reset instead of reading 413.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable

import uvicorn

from plates.exceptions import ServerUnavailableError
from plates.gateway.app import create_app
from plates.gateway.errors import Refusal, raw_response
from plates.gateway.metrics import Metrics
from plates.gateway.middleware import ANSWERED
from plates.gateway.settings import Settings

log = logging.getLogger("plates.gateway")
access_log = logging.getLogger("plates.gateway.access")

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as UvicornProtocol
except ImportError:  # httptools is a dependency; uvicorn's pure-Python parser stands in where it cannot be built
    from uvicorn.protocols.http.h11_impl import H11Protocol as UvicornProtocol

IDLE, HEADERS, BODY = "idle", "headers", "body"
LINGER_S = 2.0  # how long a closing connection's incoming data is dropped before the socket is closed


class LingeringTransport:
    """The connection's transport, whose close() first shuts the sending side and drops what still arrives, where
    `reading()` says a request was still arriving."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop, reading: Callable[[], bool]):
        self._transport = transport
        self._loop = loop
        self._reading = reading
        self._closing = False

    def close(self) -> None:
        if self._closing or self._transport.is_closing():
            return
        if not self._reading():  # between requests (keep-alive, shutdown): nothing more is coming
            self._transport.close()
            return
        self._closing = True
        if self._transport.can_write_eof():
            self._transport.write_eof()  # the answer ends here for the client (FIN), whatever it still sends
        self._transport.resume_reading()  # uvicorn stops reading a body nobody reads: drain it instead
        self._loop.call_later(LINGER_S, self._transport.close)

    def is_closing(self) -> bool:
        return self._closing or self._transport.is_closing()

    def __getattr__(self, name: str):
        return getattr(self._transport, name)


class DeadlineMixin:
    """Deadlines and a header size limit for uvicorn's HTTP protocols (either parser: it relies only on what both
    share, `cycle`, the request being served, with its `more_body` and `response_started`)."""

    header_timeout = 10.0
    body_timeout = 30.0
    max_header_bytes = 16 * 2**10

    def refused(self, refusal: Refusal) -> None:
        """A request refused before the application saw it (set by deadline_protocol: logs it and counts it)."""

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(LingeringTransport(transport, self.loop, lambda: self._phase != IDLE))
        self._timer: asyncio.TimerHandle | None = None
        self._phase = IDLE
        self._cycle = None  # the request whose headers were seen complete last
        self._header_bytes = 0
        # A connection that never sends a request is closed too; uvicorn would keep it open for ever.
        self._arm(IDLE, self.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.transport.is_closing():  # answered and closing: the rest is dropped, never read as a request
            return
        if self._phase == IDLE:  # a request begins
            self._arm(HEADERS, self.header_timeout)
            self._header_bytes = 0
        super().data_received(data)
        if self.transport.is_closing():
            self._disarm()
            return
        if self.cycle is not self._cycle:  # the parser made a new request: its headers are complete
            self._cycle = self.cycle
            self._arm(BODY, self.body_timeout)
        if self._phase == HEADERS:
            self._header_bytes += len(data)
            if self._header_bytes > self.max_header_bytes:
                self._refuse(
                    Refusal(
                        431,
                        "headers_too_large",
                        f"the request line and headers are larger than {self.max_header_bytes} bytes",
                    )
                )
        elif self._phase == BODY and not self.cycle.more_body:
            self._disarm()

    def send_400_response(self, msg: str) -> None:
        """What the parser could not read (uvicorn's own answer is plain text): in the gateway's error format."""
        self._refuse(Refusal(400, "invalid_http", f"{msg.rstrip('.')}: not a valid HTTP/1.1 request"))

    def _arm(self, phase: str, seconds: float) -> None:
        self._disarm()
        self._phase = phase
        self._timer = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._phase = None, IDLE

    def _expired(self) -> None:
        phase, cycle = self._phase, self.cycle
        self._timer = None  # the phase stays until the connection is closed: a request still arriving lingers
        if phase == IDLE:
            self.transport.close()
        elif phase == HEADERS:
            message = f"the request's headers took more than {self.header_timeout:g} s"
            self._refuse(Refusal(408, "header_timeout", message))
        elif not cycle.response_started:
            # The application is waiting for the rest of the body: it is told the client left (its sends are
            # dropped from here on), and the gate logs the request with this answer.
            cycle.scope[ANSWERED] = (408, "body_timeout")
            cycle.disconnected = True
            cycle.message_event.set()
            message = f"the request's body took more than {self.body_timeout:g} s after its headers"
            request_id = cycle.scope.get("state", {}).get("request_id")
            refusal = Refusal(408, "body_timeout", message)
            self.transport.write(raw_response(refusal, request_id, cycle.scope.get("path", "")))
            self.transport.close()
        else:  # answered already (refused early), but the body still trickles in
            self.transport.close()
        self._phase = IDLE

    def _refuse(self, refusal: Refusal) -> None:
        self.transport.write(raw_response(refusal))
        self.transport.close()
        self._disarm()
        self.refused(refusal)


def deadline_protocol(settings: Settings, metrics: Metrics) -> type:
    """uvicorn's HTTP protocol with the settings' deadlines and header limit; its refusals logged and counted."""

    def refused(protocol: DeadlineMixin, refusal: Refusal) -> None:
        client = protocol.client or ("-", 0)
        metrics.answered("other", refusal.status, 0.0, refusal.code)
        access_log.info("%s:%d - %d refused=%s", client[0], client[1], refusal.status, refusal.code)

    return type(
        "DeadlineProtocol",
        (DeadlineMixin, UvicornProtocol),
        {
            "header_timeout": settings.header_timeout,
            "body_timeout": settings.body_timeout,
            "max_header_bytes": settings.max_header_bytes,
            "refused": refused,
        },
    )


def uvicorn_config(settings: Settings, app=None) -> uvicorn.Config:
    app = app or create_app(settings)
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        http=deadline_protocol(settings, app.state.metrics),
        loop="auto",  # uvloop where it is installed
        lifespan="on",
        ws="none",
        access_log=False,  # the gate writes one line per request, with its id
        log_config=None,  # the command's logging, one format for every line
        limit_concurrency=settings.max_connections,
        backlog=settings.backlog,
        timeout_graceful_shutdown=10,
        server_header=False,
        h11_max_incomplete_event_size=settings.max_header_bytes,
    )


def listen(settings: Settings) -> socket.socket:
    """The listening socket, bound before anything starts: a taken port is one line (exit 69), not a traceback."""
    family = socket.AF_INET6 if ":" in settings.host else socket.AF_INET
    try:
        return socket.create_server((settings.host, settings.port), family=family, backlog=settings.backlog)
    except OSError as error:
        raise ServerUnavailableError(f"cannot listen on {settings.url}: {error.strerror or error}") from error


def run(settings: Settings) -> int:
    """Serve until SIGINT or SIGTERM."""
    listener = listen(settings)
    server = uvicorn.Server(uvicorn_config(settings))
    log.info(
        "plates gateway on %s -> Triton gRPC %s (%s)",
        settings.url,
        settings.triton_grpc,
        "API keys required" if settings.keys else "no API keys: loopback only",
    )
    server.run(sockets=[listener])
    return 0
