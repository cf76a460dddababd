"""Parsed deployment files (Dockerfile, compose.yaml, deploy/k8s) and the tools that check them."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
K8S_DIR = ROOT / "deploy" / "k8s"


@dataclass(frozen=True)
class Instruction:
    stage: int  # index of the FROM it belongs to
    keyword: str  # upper case: RUN, COPY, ...
    args: str  # the rest, continuation lines joined


class Dockerfile:
    """Just enough of Dockerfile syntax: comments, line continuations, stages, exec and shell forms."""

    def __init__(self, text: str):
        self.instructions: list[Instruction] = []
        logical, stage = "", -1
        for line in text.splitlines():
            if line.strip().startswith("#"):
                continue  # comments, also those inside a continued instruction, as Docker drops them
            logical += line.rstrip()
            if logical.endswith("\\"):
                logical = logical[:-1] + " "
                continue
            if logical.strip():
                keyword, _, args = logical.strip().partition(" ")
                keyword = keyword.upper()
                stage += keyword == "FROM"
                self.instructions.append(Instruction(stage, keyword, " ".join(args.split())))
            logical = ""

    @property
    def final_stage(self) -> int:
        return max(i.stage for i in self.instructions)

    def final(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.stage == self.final_stage and i.keyword == keyword]

    def arg_default(self, name: str) -> str | None:
        for instruction in self.final("ARG"):
            key, _, default = instruction.args.partition("=")
            if key == name:
                return default or None
        return None

    def base(self, stage: int | None = None) -> str:
        """The image a stage starts from, the final one by default, with `${ARG}`s declared before any FROM replaced
        by their defaults (what a build without --build-arg uses)."""
        stage = self.final_stage if stage is None else stage
        image = next(i.args for i in self.instructions if i.stage == stage and i.keyword == "FROM").split()[0]
        defaults = dict(i.args.partition("=")[::2] for i in self.instructions if i.stage == -1 and i.keyword == "ARG")
        return re.sub(r"\$\{(\w+)\}", lambda m: defaults.get(m.group(1)) or m.group(0), image)

    def run_commands(self, stage: int | None = None) -> list[list[str]]:
        """Each shell command of each RUN (split at &&), as words, with RUN's own --flags removed."""
        stage = self.final_stage if stage is None else stage
        commands = []
        for instruction in self.instructions:
            if instruction.stage != stage or instruction.keyword != "RUN":
                continue
            words = shlex.split(instruction.args)
            while words and words[0].startswith("--"):
                words.pop(0)
            command: list[str] = []
            for word in words + ["&&"]:
                if word in ("&&", ";"):
                    if command:
                        commands.append(command)
                    command = []
                else:
                    command.append(word)
        return commands

    def workdir(self) -> str:
        return self.final("WORKDIR")[-1].args

    def cmd(self) -> list[str]:
        return json.loads(self.final("CMD")[-1].args)

    def env(self) -> dict[str, str]:
        """The final stage's ENV settings (`ENV NAME=VALUE ...` form), later ones winning."""
        return dict(word.partition("=")[::2] for i in self.final("ENV") for word in shlex.split(i.args))

    def copies(self, stage: int | None = None) -> list[tuple[list[str], str, list[str]]]:
        """(sources, destination, flags) of each COPY of a stage, the final one by default."""
        stage = self.final_stage if stage is None else stage
        result = []
        for instruction in self.instructions:
            if instruction.stage == stage and instruction.keyword == "COPY":
                words = instruction.args.split()
                flags = [w for w in words if w.startswith("--")]
                paths = [w for w in words if not w.startswith("--")]
                result.append((paths[:-1], paths[-1], flags))
        return result


def option(command: list[str], name: str) -> str | None:
    """The value of `--name VALUE` or `--name=VALUE` in a command's words."""
    for index, word in enumerate(command):
        if word == name and index + 1 < len(command):
            return command[index + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None


def docker_bytes(size: str | int) -> int:
    """A Docker size (67108864, 512m, 1g; units b, k, m, g, powers of 1024) in bytes."""
    match = re.fullmatch(r"(\d+)([bkmg]?)b?", str(size).strip().lower())
    assert match, f"not a Docker size: {size!r}"
    return int(match.group(1)) * 1024 ** "bkmg".index(match.group(2) or "b")


def k8s_bytes(quantity: str | int) -> int:
    """A Kubernetes memory quantity (512Mi, 8Gi, 500M) in bytes."""
    match = re.fullmatch(r"(\d+)(|[KMGT]i|[kMGT])", str(quantity).strip())
    assert match, f"not a Kubernetes memory quantity: {quantity!r}"
    number, unit = int(match.group(1)), match.group(2)
    if not unit:
        return number
    power = "KMGT".index(unit[0].upper()) + 1
    return number * (1024**power if unit.endswith("i") else 1000**power)


def dev_tool(name: str) -> str:
    """A command-line tool from the dev group: next to this interpreter, else on PATH; a clear failure if absent."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.is_file() else shutil.which(name)
    if not found:
        pytest.fail(f"{name} not found: it is in the dev dependency group (poetry install --with dev)")
    return found


@pytest.fixture(scope="session")
def dockerfile() -> Dockerfile:
    return Dockerfile((ROOT / "Dockerfile").read_text())


@pytest.fixture(scope="session")
def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


@pytest.fixture(scope="session")
def kustomization() -> dict:
    return yaml.safe_load((K8S_DIR / "kustomization.yaml").read_text())


@pytest.fixture(scope="session")
def manifests(kustomization) -> dict[str, dict]:
    """The resources the kustomization lists, by "Kind/name" ("Service/plates")."""
    documents = {}
    for resource in kustomization["resources"]:
        for document in yaml.safe_load_all((K8S_DIR / resource).read_text()):
            key = f"{document['kind']}/{document['metadata']['name']}"
            assert key not in documents, f"two {key} resources"
            documents[key] = document
    return documents


def of_kind(manifests: dict[str, dict], kind: str) -> list[dict]:
    return [document for key, document in manifests.items() if key.split("/")[0] == kind]


class DockerIgnore:
    """Docker's .dockerignore matching: last matching pattern wins, a pattern also matches a path's parents."""

    def __init__(self, text: str):
        self.patterns: list[tuple[re.Pattern, bool]] = []
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            exclusion = line.startswith("!")
            pattern = line.lstrip("!").strip().strip("/")
            self.patterns.append((re.compile(self._regex(pattern)), exclusion))

    @staticmethod
    def _regex(pattern: str) -> str:
        regex, index = "", 0
        while index < len(pattern):
            if pattern.startswith("**/", index):
                regex, index = regex + "(?:.*/)?", index + 3
            elif pattern.startswith("**", index):
                regex, index = regex + ".*", index + 2
            else:
                char = pattern[index]
                regex += {"*": "[^/]*", "?": "[^/]"}.get(char, re.escape(char))
                index += 1
        return f"^{regex}$"

    def ignores(self, path: str) -> bool:
        parts = Path(path).parts
        candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        ignored = False
        for regex, exclusion in self.patterns:
            if exclusion == ignored and any(regex.match(c) for c in candidates):
                ignored = not exclusion
        return ignored


@pytest.fixture(scope="session")
def dockerignore() -> DockerIgnore:
    return DockerIgnore((ROOT / ".dockerignore").read_text())
