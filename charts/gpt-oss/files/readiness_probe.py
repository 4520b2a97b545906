"""The readiness probe of a serving container (the Dynamo frontend, trtllm-serve): Ready while not draining and
/v1/models lists the model.

usage: readiness_probe.py DRAIN_MARKER PORT MODEL

Not ready (exit 1) as soon as DRAIN_MARKER exists (the preStop hook makes it, then waits
gracefulShutdown.preStopSeconds): the pod leaves every load balancer that reads readiness before the server stops
or refuses anything. Otherwise ready once http://127.0.0.1:PORT/v1/models lists MODEL: the Dynamo 1.2.1
frontend's /health answers 200 "healthy" before any worker has registered, and a request then fails with "model
not found". No proxy is used (a cluster-wide HTTPS_PROXY must not carry a loopback probe); 2 s per request.
"""
import json
import os
import sys
import urllib.request


def ready(drain_marker: str, port: int, model: str, timeout: float = 2.0) -> bool:
    if os.path.lexists(drain_marker):
        return False
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://127.0.0.1:{port}/v1/models", timeout=timeout) as response:
            listed = [entry.get("id") for entry in json.load(response).get("data", []) if isinstance(entry, dict)]
    except (OSError, ValueError, AttributeError):
        return False
    return model in listed


if __name__ == "__main__":
    drain_marker, port, model = sys.argv[1:4]
    sys.exit(0 if ready(drain_marker, int(port), model) else 1)
