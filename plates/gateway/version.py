"""The service's version, as installed (the wheel in the image, the project's venv with `poetry install`)."""

from importlib.metadata import version

VERSION = version("plates")
