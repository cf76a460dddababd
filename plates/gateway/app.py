"""The gateway's application: `create_app(settings)`, whose lifespan opens the Triton client and the health watch.

Its APIs, each a folder of its own (api_router, protocol, serving): Plate Recognizer's Snapshot API (snapshot/) and
CodeProject.AI's licence plate reader (codeproject/); beside them the page for people (home/) and the operations'
routes. They share the gate (keys, limits, logs), the usage counts and the one call to Triton (recognizer.py).
Tests hand in their own `triton` (anything with tritonclient.grpc.aio's `infer`) and `health_check`.
"""

from __future__ import annotations

import asyncio
import contextlib
from functools import partial
from pathlib import Path

import swagger_ui_bundle
import tritonclient.grpc.aio as grpcclient
from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from plates.client.health import reloading
from plates.gateway import operations
from plates.gateway.auth import KeyRing, key_id
from plates.gateway.codeproject import api_router as codeproject
from plates.gateway.errors import Refusal
from plates.gateway.health import Check, HealthWatch
from plates.gateway.home import api_router as home
from plates.gateway.limits import InFlight
from plates.gateway.metrics import Metrics
from plates.gateway.middleware import ANSWERED, Gate
from plates.gateway.recognizer import Recognizer
from plates.gateway.settings import Settings
from plates.gateway.snapshot import api_router as snapshot
from plates.gateway.usage import Usage
from plates.gateway.version import VERSION

MAX_GRPC_MESSAGE = 2**31 - 1  # tritonclient's own default; the gateway's body limit is what bounds a photo
CHANNEL_ARGS = [
    ("grpc.max_send_message_length", MAX_GRPC_MESSAGE),
    ("grpc.max_receive_message_length", MAX_GRPC_MESSAGE),
    # gRPC waits up to 2 minutes between attempts to reach a server that went away; a restarted Triton (10 to 20 s
    # under the supervisor) is found again within a second.
    ("grpc.initial_reconnect_backoff_ms", 250),
    ("grpc.max_reconnect_backoff_ms", 1000),
]
HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}


def create_app(settings: Settings, triton=None, health_check: Check | None = None) -> FastAPI:
    in_flight = InFlight(
        settings.max_in_flight,
        settings.max_in_flight_per_key,
        settings.max_at_triton,
        settings.queue_timeout,
        anonymous=settings.max_in_flight_anonymous,
        hold_s=settings.wait_for_place,
        max_waiting=settings.max_connections,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        client = triton or grpcclient.InferenceServerClient(settings.triton_grpc, channel_args=CHANNEL_ARGS)
        app.state.recognizer = Recognizer(
            client, settings.inference_timeout, settings.queue_timeout, partial(reloading, settings.triton_http)
        )
        watching = asyncio.create_task(app.state.health.run())
        try:
            yield
        finally:
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watching
            if triton is None:
                await client.close()
            if app.state.history is not None:
                await asyncio.to_thread(app.state.history.close)

    app = FastAPI(
        title="plates gateway",
        summary="Russian licence plates read from photos, through Plate Recognizer's Snapshot API and CodeProject.AI's "
        "licence plate reader",
        version=VERSION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.in_flight = in_flight
    app.state.health = HealthWatch(settings.triton_http, settings.health_interval, health_check)
    app.state.metrics = Metrics(
        lambda: in_flight.total, lambda: in_flight.waiting, lambda: len(app.state.health.reloading())
    )
    app.state.usage = Usage({key_id(key): quota for key, quota in settings.quotas})
    routers = (home.router, snapshot.router, codeproject.router, operations.router)
    app.state.history = app.state.store = None
    if settings.store:
        # SQLAlchemy loads only where the gateway keeps a store; a wrong URL stops it here, before it listens.
        from plates.gateway.history import api_router as history
        from plates.gateway.history.recording import History
        from plates.store.database import Store
        from plates.store.writer import StoreWriter

        app.state.store = Store(settings.store)
        crops = Path(settings.store_crops) if settings.store_crops else None
        app.state.history = History(StoreWriter(app.state.store, crops=crops), dict(settings.camera_roles))
        routers += (history.router, history.page_router)
    for router in routers:
        app.include_router(router)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    add_docs(app)
    app.openapi = lambda: app.openapi_schema or _openapi_30(app)
    routes = {route.path for router in routers for route in router.routes} | {"/docs", app.openapi_url}
    app.add_middleware(
        Gate,
        keys=KeyRing(settings.keys, settings.anonymous_from),
        in_flight=in_flight,
        metrics=app.state.metrics,
        max_body_bytes=settings.max_body_bytes,
        routes=routes,
    )
    return app


async def http_error(request: Request, error: HTTPException) -> Response:
    """The routes' own HTTP errors (an unknown path, a wrong method) in the gateway's error format."""
    code = HTTP_CODES.get(error.status_code, "http_error")
    request.scope[ANSWERED] = (error.status_code, code)
    refusal = Refusal(error.status_code, code, f"{request.method} {request.url.path[:100]}: {error.detail}")
    return Response(
        refusal.body(request.state.request_id, request.url.path),
        error.status_code,
        error.headers,
        media_type="application/json",
    )


async def invalid_request(request: Request, error: RequestValidationError) -> Response:
    """A parameter or body the schema refuses: 400 in the gateway's error format, naming the parameter and the rule
    (never echoing the value, which may be anything)."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    refusal = Refusal(400, "invalid_request", f"{where}: {first['msg']}"[:300])
    request.scope[ANSWERED] = (400, refusal.code)
    return Response(refusal.body(request.state.request_id, request.url.path), 400, media_type="application/json")


def _openapi_30(app: FastAPI) -> dict:
    """The API's description in OpenAPI 3.0 (the Swagger UI of swagger-ui-bundle, 4.15, renders no 3.1), with the
    key this deployment asks for."""
    schema = get_openapi(
        title=app.title, version=app.version, summary=app.summary, routes=app.routes, openapi_version="3.0.3"
    )
    add_security(schema, app.state.settings)
    for operation in (op for path in schema["paths"].values() for op in path.values()):
        # FastAPI documents its 422 for every route with parameters; invalid_request answers 400 instead.
        operation.get("responses", {}).pop("422", None)
    app.openapi_schema = nullable_as_30(schema)
    return app.openapi_schema


def add_security(schema: dict, settings: Settings) -> None:
    """`Authorization: Token KEY` on the photo routes where this gateway has keys; optional where it also serves
    networks without one; none where it is open to all (the loopback without keys)."""
    if not settings.keys and not settings.anonymous_from:
        return
    schema.setdefault("components", {})["securitySchemes"] = {
        "Token": {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Token KEY`, as Plate Recognizer's clients send it",
        },
    }
    required = [{"Token": []}, {}] if settings.anonymous_from else [{"Token": []}]
    for path in (*snapshot.PATHS, *codeproject.PATHS):
        schema["paths"][path]["post"]["security"] = required


def nullable_as_30(node):
    """JSON Schema's `anyOf: [X, {"type": "null"}]` (OpenAPI 3.1, as pydantic writes it) as 3.0's `nullable`."""
    if isinstance(node, list):
        return [nullable_as_30(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {name: nullable_as_30(value) for name, value in node.items()}
    options = node.get("anyOf", [])
    if {"type": "null"} in options:
        rest = [option for option in node.pop("anyOf") if option != {"type": "null"}]
        if len(rest) == 1 and "$ref" not in rest[0]:
            node.update(rest[0])
        else:  # 3.0 ignores whatever stands beside a $ref
            node["allOf" if len(rest) == 1 else "anyOf"] = rest
        node["nullable"] = True
    return node


def add_docs(app: FastAPI) -> None:
    """The API's page at /docs, its Swagger UI served from the swagger-ui-bundle package: no CDN is fetched."""
    assets = Path(swagger_ui_bundle.swagger_ui_path)
    app.mount("/docs/assets", StaticFiles(directory=assets), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url,
            title=f"{app.title}: API",
            swagger_js_url="/docs/assets/swagger-ui-bundle.js",
            swagger_css_url="/docs/assets/swagger-ui.css",
            swagger_favicon_url="/docs/assets/favicon-32x32.png",
        )
