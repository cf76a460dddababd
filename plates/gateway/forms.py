"""Reading a request's form, for every API of the gateway: multipart or urlencoded, bounded, in memory; and the form's
description in the OpenAPI schema."""

from __future__ import annotations

from fastapi import Request
from pydantic import BaseModel
from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import FormParser, MultiPartException, MultiPartParser

from plates.gateway.errors import Refusal
from plates.photos.pixels import MAX_SIDE

MAX_FIELDS = 64  # their clients send a handful; `regions` may repeat
PHOTO_TYPES = "image/jpeg, image/png"  # what a photo's part may be, in the OpenAPI schema's encoding
# What a photo must be, in the description of both APIs' forms.
PHOTO = (
    f"a whole JPEG or PNG photo, at most {MAX_SIDE} pixels a side. Anything else (another format, a truncated "
    "or corrupt file, an empty one, a larger photo) is refused with 400, whose message says which."
)


async def read_form(request: Request, limit: int, field: str = "upload") -> FormData:
    """The request's form, of at most one file: `field` names the photo's field in the 415's message."""
    media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media == "multipart/form-data":
        parser = MultiPartParser(
            request.headers, request.stream(), max_files=1, max_fields=MAX_FIELDS, max_part_size=limit
        )
        # In memory: the body is already bounded by `limit`, and a read-only container may have no /tmp to spool to.
        parser.spool_max_size = limit
    elif media == "application/x-www-form-urlencoded":
        parser = FormParser(request.headers, request.stream(), max_fields=MAX_FIELDS, max_part_size=limit)
    else:
        raise Refusal(415, "not_a_form", f"send the photo as multipart/form-data, in the file field {field}")
    try:
        return await parser.parse()
    except MultiPartException as error:
        raise Refusal(400, "invalid_form", f"the form cannot be read: {error.message}") from error


def text(form: FormData, name: str) -> str | None:
    """A text field's value; None where it is missing or a file."""
    value = form.get(name)
    return value if isinstance(value, str) else None


def first_file(form: FormData) -> tuple[str, UploadFile] | None:
    """The form's file and its field's name, whatever that name is."""
    for name, value in form.multi_items():
        if isinstance(value, UploadFile):
            return name, value
    return None


def form_schema(model: type[BaseModel]) -> dict:
    """A form model's JSON schema as OpenAPI 3.0 takes it inline in a request body: its definitions in place of
    their references, and a `const` as a one-value `enum` (3.0 has no const)."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def inline(node):
        if isinstance(node, list):
            return [inline(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            node = {**definitions[node["$ref"].rsplit("/", 1)[1]], **{k: v for k, v in node.items() if k != "$ref"}}
        node = {name: inline(value) for name, value in node.items()}
        if "const" in node:
            node["enum"] = [node.pop("const")]
        return node

    return inline(schema)
