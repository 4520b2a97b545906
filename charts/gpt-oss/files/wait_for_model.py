"""Wait until the frontend lists the model on /v1/models.

/health answers 200 before any worker has registered, so readiness means the model is listed.
Exits 1 with a message naming the URL and model when the timeout passes.
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


def wait_for_model(base_url: str, model: str, timeout_seconds: float, interval: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_seconds
    print(f"waiting up to {timeout_seconds:.0f}s for {base_url}/v1/models to list {model}", flush=True)
    while not model_listed(base_url, model):
        if time.monotonic() > deadline:
            sys.exit(f"gave up after {timeout_seconds:.0f}s: {base_url}/v1/models never listed {model}; "
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
