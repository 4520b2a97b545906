"""Wait until the frontend serves the model: listed on /v1/models, then a 1-token chat answers 200.

/health answers 200 before any worker has registered, so it proves nothing. In a disaggregated
deployment /v1/models lists the model as soon as the prefill worker registers, while chat requests
still fail until a decode worker is up; hence the 1-token probe. Exits 1 with a message naming the
URL and model when the timeout passes. With MODEL_MARKER set (a pod that reads the model cache), it first waits
for the download Job's ready marker to name the revision (EXPECTED_REVISION) and the manifest sha256
(EXPECTED_MANIFEST_SHA256, when pinned) this release was rendered with: a marker of another pin is not ready.
"""
import json
import os
import sys
import time
import urllib.request


def model_listed(base_url: str, model: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/v1/models", timeout=10) as response:
            listed = [entry.get("id") for entry in json.load(response).get("data", [])]
    except (OSError, ValueError) as error:
        print(f"  {base_url}/v1/models not answering yet: {error}", flush=True)
        return False
    print(f"  {base_url}/v1/models lists {listed}", flush=True)
    return model in listed


def answers_chat(base_url: str, model: str) -> bool:
    probe = {"model": model, "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1, "stream": False}
    request = urllib.request.Request(f"{base_url}/v1/chat/completions", data=json.dumps(probe).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status == 200
    except (OSError, ValueError) as error:
        print(f"  listed, but a 1-token chat request fails yet: {error}", flush=True)
        return False


def marker_problem(marker: str, revision: str, manifest_sha256: str = "") -> str | None:
    """Why the ready marker does not show the pinned copy (None when it does); a link is never read."""
    try:
        if os.path.islink(marker):
            return f"{marker} is a symbolic link"
        fd = os.open(marker, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as source:
            recorded = json.loads(source.read(64 * 1024))
    except FileNotFoundError:
        return f"{marker} does not exist yet"
    except (OSError, ValueError) as error:
        return f"{marker} cannot be read: {error}"
    if not isinstance(recorded, dict) or recorded.get("revision") != revision:
        return f"{marker} names revision {recorded.get('revision') if isinstance(recorded, dict) else None}, " \
               f"this release pins {revision}"
    if manifest_sha256 and recorded.get("manifestSha256") != manifest_sha256:
        return f"{marker} names manifest {recorded.get('manifestSha256')}, this release pins {manifest_sha256}"
    return None


def wait_for_marker(marker: str, revision: str, manifest_sha256: str, deadline: float, interval: float) -> None:
    while (problem := marker_problem(marker, revision, manifest_sha256)) is not None:
        if time.monotonic() > deadline:
            sys.exit(f"gave up: {problem}; the model-cache download Job writes the marker when the pinned copy is "
                     "complete and checked")
        print(f"  waiting for the model cache: {problem}", flush=True)
        time.sleep(interval)


def wait_for_model(base_url: str, model: str, timeout_seconds: float, interval: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_seconds
    if os.environ.get("MODEL_MARKER"):
        wait_for_marker(os.environ["MODEL_MARKER"], os.environ.get("EXPECTED_REVISION", ""),
                        os.environ.get("EXPECTED_MANIFEST_SHA256", ""), deadline, interval)
    print(f"waiting up to {timeout_seconds:.0f}s for {base_url} to serve {model}", flush=True)
    while not (model_listed(base_url, model) and answers_chat(base_url, model)):
        if time.monotonic() > deadline:
            sys.exit(f"gave up after {timeout_seconds:.0f}s: {base_url} never served {model}; "
                     "check the worker pods (model load takes 15-30 min) and the frontend logs")
        time.sleep(interval)
    print(f"{model} is served at {base_url}", flush=True)


if __name__ == "__main__":
    wait_for_model(
        os.environ["FRONTEND_URL"].rstrip("/"),
        os.environ["MODEL"],
        float(os.environ.get("READY_TIMEOUT_SECONDS", "600")),
        float(os.environ.get("READY_POLL_SECONDS", "10")),
    )
