"""`GET /`: the service's page for people, who drop a photo and see its plates drawn and read; or, for a client that
asks for JSON, what the service is. Either is 200: Plate Recognizer's `transfer.py` checks that the server answers
`GET /` before it sends photos.

The page is one file served whole (no CDN, nothing fetched from elsewhere, as the policy below enforces): its script
reads the photo through the Snapshot API, with the key a person types, and draws the answer on the photo.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel

from plates.gateway.version import VERSION

router = APIRouter(tags=["the service"])

PAGE = (Path(__file__).parent / "page.html").read_text().replace("{{version}}", VERSION)
# The page's own script and style, photos as blob: URLs, requests to this origin only.
POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src blob:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


class About(BaseModel):
    name: str = "plates"
    description: str = "Russian licence plates read from photos"
    version: str = VERSION
    docs: str = "/docs"
    openapi: str = "/openapi.json"
    apis: dict[str, str] = {
        "Plate Recognizer's Snapshot API": "POST /v1/plate-reader/",
        "CodeProject.AI's licence plate reader": "POST /v1/vision/alpr",
    }


@router.get(
    "/",
    response_model=About,
    responses={200: {"content": {"text/html": {"schema": {"type": "string"}}}}},
    summary="The service's page for people (HTML), or what the service is (JSON, for a client that asks for it)",
)
async def home(request: Request):
    if wants_json(request.headers.get("accept", "")):
        return JSONResponse(About().model_dump())
    return HTMLResponse(PAGE, headers={"Content-Security-Policy": POLICY, "X-Content-Type-Options": "nosniff"})


def wants_json(accept: str) -> bool:
    """Whether an Accept header prefers JSON to HTML: by its q-values, then by its order (`*/*` takes the page)."""
    preference = {}
    for order, part in enumerate(accept.lower().split(",")):
        media, *parameters = (piece.strip() for piece in part.split(";"))
        q = next((value for name, _, value in (p.partition("=") for p in parameters) if name.strip() == "q"), "1")
        try:
            preference.setdefault(media, (float(q), -order))
        except ValueError:  # a q that is not a number: the range is ignored
            continue
    json, html = preference.get("application/json"), preference.get("text/html")
    return json is not None and json[0] > 0 and (html is None or json > html)
