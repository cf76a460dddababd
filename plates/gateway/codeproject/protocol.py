"""The wire format of CodeProject.AI Server's licence plate reader (its ALPR module): `POST /v1/vision/alpr` and the
legacy `/v1/image/alpr`, and the server's status routes that video recorders poll.

The answer is the module's (CodeProject.AI-ALPR, ALPR_adapter.py and ALPR.py): `success`, `predictions` with
`plate`, `label` ("Plate: " and the plate), `confidence` and whole-pixel `x_min`, `y_min`, `x_max`, `y_max`, the
timings `processMs` and `inferenceMs`, and `message`; with what the server adds to every module's answer: `count`,
`moduleId`, `moduleName`, `command` and `code`. An error is `success: false` with `error` (errors.py).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from plates.gateway.forms import PHOTO
from plates.gateway.version import VERSION

PATHS = ("/v1/vision/alpr", "/v1/image/alpr")
MODULE_ID = "ALPR"
MODULE_NAME = "License Plate Reader"
# The server version status routes report: this service's own, in their VersionInfo's fields.
MAJOR, MINOR, PATCH = ([int(number) for number in re.findall(r"\d+", VERSION)] + [0, 0, 0])[:3]


class Prediction(BaseModel):
    confidence: float = Field(description="Probability of the text under the recognizer, 0 to 1.")
    label: str = Field(description='"Plate: " and the plate: "Plate: B840CK197".')
    plate: str = Field(description="The text, upper case, Latin letters for the 12 Cyrillic ones that look Latin.")
    x_min: int
    y_min: int
    x_max: int
    y_max: int


class Answer(BaseModel):
    success: bool = True
    message: str = Field(description='"Found Plate: ..." or "No plates found", as their module writes it.')
    predictions: list[Prediction]
    count: int
    processMs: int = Field(description="Milliseconds the gateway spent on the photo once it had it.")
    inferenceMs: int = Field(description="Milliseconds of those spent in the recognizer.")
    moduleId: str = MODULE_ID
    moduleName: str = MODULE_NAME
    command: str = "alpr"
    code: int = 200


class ErrorAnswer(BaseModel):
    success: bool = False
    error: str = Field(description="The cause, for people.")
    code: int = Field(description="The HTTP status again.")
    error_code: str = Field(description="This service: the cause, for programs (body_too_large, unauthorized, ...).")
    request_id: str | None = None


class Form(BaseModel):
    """The multipart form of a request (documentation only: the endpoint parses the form itself)."""

    # Their modules take more than this service reads (`operation`, in the YOLO11 module's description): text fields
    # beyond these are accepted and ignored; a second file is refused (one photo a request).
    model_config = {"extra": "allow"}

    upload: bytes = Field(
        description=f"The photo file: {PHOTO} The form's first file is read, whatever its field's "
        "name (`upload` in their module's description, `image` in their Python client)."
    )
    min_confidence: float = Field(
        default=None,
        ge=0,
        le=1,
        description="Plates detected below it (the "
        "detector's confidence, as their YOLO11 ALPR module applies it) are left out.",
    )


class VersionInfo(BaseModel):
    major: int = MAJOR
    minor: int = MINOR
    patch: int = PATCH
    preRelease: str | None = None
    securityUpdate: bool = False
    build: int = 0
    file: str | None = None
    releaseNotes: str = "plates gateway: CodeProject.AI's licence plate reader for Russian plates"


class Version(BaseModel):
    success: bool = True
    message: str = VERSION
    version: VersionInfo = VersionInfo()


class UpdateAvailable(BaseModel):
    success: bool = True
    message: str = "This is the current version"
    latest: VersionInfo = VersionInfo()
    current: VersionInfo = VersionInfo()
    version: VersionInfo = VersionInfo()
    updateAvailable: bool = False
