"""Wait until the model is served (the frontend, or trtllm-serve): listed on /v1/models, then a 1-token chat answers 200.

/health answers 200 before any worker has registered, so it proves nothing. In a disaggregated
deployment /v1/models lists the model as soon as the prefill worker registers, while chat requests
still fail until a decode worker is up; hence the 1-token probe. Exits 1 with a message naming the
URL and model when the timeout passes. With MODEL_MARKER set (a pod that reads the model cache), it first waits
for the download Job's ready marker to name the revision (EXPECTED_REVISION) and the manifest sha256
(EXPECTED_MANIFEST_SHA256, when pinned) this release was rendered with, with the model-ready check's own code
(check_model.py): a marker of another pin is not ready.
"""
import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_model import wait_for_marker  # noqa: E402


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


def wait_until_served(base_url: str, model: str, timeout_seconds: float, interval: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_seconds
    if os.environ.get("MODEL_MARKER"):
        wait_for_marker(os.environ["MODEL_MARKER"], os.environ.get("EXPECTED_REVISION", ""),
                        os.environ.get("EXPECTED_MANIFEST_SHA256", ""), deadline=deadline, interval=interval)
    print(f"waiting up to {timeout_seconds:.0f}s for {base_url} to serve {model}", flush=True)
    while not (model_listed(base_url, model) and answers_chat(base_url, model)):
        if time.monotonic() > deadline:
            sys.exit(f"gave up after {timeout_seconds:.0f}s: {base_url} never served {model}; "
                     "check the worker pods (model load takes 15-30 min) and the frontend logs")
        time.sleep(interval)
    print(f"{model} is served at {base_url}", flush=True)


if __name__ == "__main__":
    wait_until_served(
        os.environ["FRONTEND_URL"].rstrip("/"),
        os.environ["MODEL"],
        float(os.environ.get("READY_TIMEOUT_SECONDS", "600")),
        float(os.environ.get("READY_POLL_SECONDS", "10")),
    )
