"""The model-ready check: hold a serving pod until the copy this release pins is in place, or fail it naming what differs.

The chart's one check of a copy before a container reads it (the check-model init container of every serving pod;
the benchmark's wait_until_served.py imports its marker check). CHECK says how, from the source's record
(gpt-oss.modelSources, checker):
  marker  a model cache PVC the download Job fills: wait until the Job's ready marker (MARKER) names the revision
          (MODEL_REVISION) and, when one is pinned, the manifest sha256 (MANIFEST_SHA256) this release was rendered
          with, and the vocabulary (TIKTOKEN_DIR/o200k_base.tiktoken, when staged) is in place; a marker of another
          pin, or a symbolic link, is not ready. Polls every POLL_SECONDS (30), saying what it waits for.
  verify  a read-only copy no Job checks (an image volume): every file of MODEL_DIR (or only VERIFY_PATHS) against
          the copy's model-manifest.json, pinned by MANIFEST_SHA256, and the vocabulary against TIKTOKEN_SHA256;
          exits 1 naming each file that differs, so the pod never starts on it.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_copy  # noqa: E402
from model_copy import MANIFEST, TIKTOKEN_PATH, CopyError  # noqa: E402

MAX_MARKER = 64 * 1024


def marker_problem(marker: str, revision: str, manifest_sha256: str = "", vocabulary: str = "") -> str | None:
    """Why the ready marker does not show the pinned copy (None when it does); a link is never read."""
    try:
        if os.path.islink(marker):
            return f"{marker} is a symbolic link"
        fd = os.open(marker, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as source:
            recorded = json.loads(source.read(MAX_MARKER))
    except FileNotFoundError:
        return f"{marker} does not exist yet"
    except (OSError, ValueError) as error:
        return f"{marker} cannot be read: {error}"
    if not isinstance(recorded, dict) or recorded.get("revision") != revision:
        return f"{marker} names revision {recorded.get('revision') if isinstance(recorded, dict) else None}, " \
               f"this release pins {revision}"
    if manifest_sha256 and recorded.get("manifestSha256") != manifest_sha256:
        return f"{marker} names manifest {recorded.get('manifestSha256')}, this release pins {manifest_sha256}"
    if vocabulary and (os.path.islink(vocabulary) or not os.path.isfile(vocabulary)):
        return f"{vocabulary} (the vocabulary) is not in place"
    return None


def wait_for_marker(marker: str, revision: str, manifest_sha256: str = "", vocabulary: str = "",
                    deadline: float | None = None, interval: float = 30.0, job: str = "") -> None:
    """Poll until marker_problem is None; past the deadline (monotonic; None: never) exit 1 with the last problem."""
    writer = f"the model-cache download Job{f' ({job})' if job else ''} writes the marker when the pinned copy is " \
             "complete and checked"
    while (problem := marker_problem(marker, revision, manifest_sha256, vocabulary)) is not None:
        if deadline is not None and time.monotonic() > deadline:
            sys.exit(f"gave up: {problem}; {writer}")
        print(f"waiting for the model cache: {problem}; {writer}", flush=True)
        time.sleep(interval)
    print(f"model cache ready: {marker}", flush=True)


def sha256_or_none(path: Path) -> str | None:
    """sha256 of a regular file at `path` (no link followed), or None."""
    try:
        return model_copy.sha256_file(path)
    except (OSError, CopyError):
        return None


def copy_manifest(model_dir: Path, what: str, model_id: str, revision: str, pinned: str = "") -> dict:
    """The manifest of the copy in model_dir (read_manifest's checks: this model and revision, and the pin)."""
    path = model_dir / MANIFEST
    if model_copy._lstat(path) is None:
        raise CopyError(f"no {MANIFEST} in {model_dir} ({what}): put the folder tools/mirror-model.py wrote there, "
                        f"so that {model_dir}/{MANIFEST} exists")
    data = model_copy.read_small_file(path, model_copy.MAX_MANIFEST, str(path))
    return model_copy.read_manifest(data, f"{model_dir}/{MANIFEST} ({what})", model_id, revision, pinned)


def copy_problems(model_dir: Path, manifest: dict, only: list[str] | None = None, tiktoken_sha256: str = "") -> list[str]:
    """Listed files that differ, and files the manifest does not list (the staged vocabulary aside)."""
    problems = model_copy.folder_problems(model_dir, manifest, only=only)
    if only is None and tiktoken_sha256 and TIKTOKEN_PATH not in {f["path"] for f in manifest["files"]}:
        problems.pop(TIKTOKEN_PATH, None)  # staged beside the copy from model.tiktoken.url, checked on its own
    return [f"{path}: {problem}" for path, problem in sorted(problems.items())]


def verify_copy(model_dir: Path, what: str, model_id: str, revision: str, pinned: str = "", tiktoken_sha256: str = "",
                only: list[str] | None = None) -> str:
    """Check a read-only copy (every file, or only those listed); raises CopyError naming each that differs."""
    manifest = copy_manifest(model_dir, what, model_id, revision, pinned)
    problems = copy_problems(model_dir, manifest, only, tiktoken_sha256)
    tiktoken_file = model_dir / TIKTOKEN_PATH
    if tiktoken_sha256 and (only is None or TIKTOKEN_PATH in only):
        if model_copy._lstat(tiktoken_file) is None:
            problems.append(f"{TIKTOKEN_PATH}: missing; mirror the model with its vocabulary (tools/mirror-model.py "
                            "adds it unless --no-tiktoken), or set model.tiktoken.stage=false")
        elif sha256_or_none(tiktoken_file) != tiktoken_sha256:
            problems.append(f"{TIKTOKEN_PATH}: sha256 differs from model.tiktoken.sha256 {tiktoken_sha256}")
    if problems:
        raise CopyError(f"the copy of {model_id}@{revision} in {model_dir} does not match its manifest "
                        f"{manifest['sha256']}; the containers will not start:\n  " + "\n  ".join(problems))
    count = len(only) if only is not None else len(manifest["files"])
    return f"verified {count} file(s) of {model_id}@{revision} in {model_dir} against manifest {manifest['sha256']}"


def main() -> None:
    env = os.environ
    vocabulary = f"{env['TIKTOKEN_DIR']}/o200k_base.tiktoken" if env.get("TIKTOKEN_DIR") else ""
    if env.get("CHECK") == "verify":
        only = json.loads(env["VERIFY_PATHS"]) if env.get("VERIFY_PATHS") else None
        print(verify_copy(Path(env["MODEL_DIR"]), env.get("COPY_NAME", "the image volume"), env["MODEL_ID"],
                          env["MODEL_REVISION"], env.get("MANIFEST_SHA256", ""), env.get("TIKTOKEN_SHA256", ""), only),
              flush=True)
        return
    wait_for_marker(env["MARKER"], env["MODEL_REVISION"], env.get("MANIFEST_SHA256", ""), vocabulary,
                    interval=float(env.get("POLL_SECONDS", "30")), job=env.get("DOWNLOAD_JOB", ""))


if __name__ == "__main__":
    try:
        main()
    except CopyError as error:
        sys.exit(f"refused: {error}")
