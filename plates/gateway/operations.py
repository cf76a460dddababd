"""The operations' routes, shared by every API: liveness, readiness (health), and Prometheus metrics."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST

router = APIRouter(tags=["operations"])


@router.get("/healthz", summary="The gateway process lives")
async def healthz() -> dict:
    return {"alive": True}


@router.get(
    "/readyz",
    summary="The last deep health check of Triton: 200 ready, 503 not",
    responses={503: {"description": "Not ready: the reason, and each model's state"}},
)
async def readyz(request: Request) -> JSONResponse:
    ready, body = request.app.state.health.readiness()
    return JSONResponse(body, status_code=200 if ready else 503)


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}}}},
)
async def metrics(request: Request) -> Response:
    content, media_type = request.app.state.metrics.exposition()
    return Response(content, media_type=media_type)
