"""A bounded request loop for the KV-routing e2e test; standard library only, run inside the stack's namespace.

usage: python kv_probe.py FRONTEND_URL MODEL METRICS_URL [METRICS_URL ...]
Waits for /v1/models to list MODEL, then sends GROUPS x PER_GROUP chat requests one at a time; the requests
of a group share a long prefix. After each request it reads every worker's request counter to see which
worker served it, and prints {"groups": [[worker index, ...], ...]} as its last line.

Before each request it waits until the frontend's KV router has released the previous one. The 1.2.1 router sends a
request to the worker with the lowest cost, prefill_load_scale x the prompt blocks it would have to compute (minus its
cached overlap, overlap credit 1.0) + the decode blocks active on it including the new request's (Dynamo's router
design; dynamo._core KvRouterConfig, overlap_score_credit and prefill_load_scale 1.0, temperature 0). While the
previous request of a group still counts on the worker that cached the prefix, that worker's cost is its ~1 uncached
prompt block + 2 x the ~22 prompt blocks, the other worker's 22 + 22: the same or lower, so the router may send the
request away from its cache. It is released when the response stream ends in the frontend, which on a loaded machine
can come after the worker's counter moved: hence the wait on the router's own gauges
(dynamo_frontend_worker_active_decode_blocks and _active_prefill_tokens) instead of a fixed pause.
"""
from __future__ import annotations

import json
import sys
import time
import urllib.request

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from stack import http_get, request_counters  # noqa: E402

GROUPS, PER_GROUP, READY_TIMEOUT = 4, 5, 120
_no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def router_load(frontend: str) -> float:
    """The load the frontend's KV router still counts on its workers: active decode blocks plus prefill tokens."""
    status, text = http_get(f"{frontend}/metrics")
    if status != 200:
        return float("inf")
    loads = [float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
             if line.startswith(("dynamo_frontend_worker_active_decode_blocks{",
                                 "dynamo_frontend_worker_active_prefill_tokens{"))]
    return sum(loads)


def wait_for_idle_router(frontend: str, timeout: float = 20.0) -> float:
    """Wait until the router counts no load; return the load it still counted when the wait began."""
    deadline = time.monotonic() + timeout
    pending = load = router_load(frontend)
    while load > 0 and time.monotonic() < deadline:
        time.sleep(0.1)
        load = router_load(frontend)
    return pending


def served_counts(urls: list[str]) -> list[float]:
    return [sum(request_counters(http_get(url)[1]).values()) for url in urls]


def main(frontend: str, model: str, *metrics_urls: str) -> int:
    deadline = time.monotonic() + READY_TIMEOUT
    while model not in (http_get(f"{frontend}/v1/models")[1] or ""):
        if time.monotonic() > deadline:
            print(f"{model} never listed by {frontend}/v1/models")
            return 1
        time.sleep(1)
    groups, pending = [], []
    for group in range(GROUPS):
        prefix = " ".join(f"topic{group} word{i}" for i in range(350))  # several hundred tokens, shared
        served = []
        for request in range(PER_GROUP):
            pending.append(wait_for_idle_router(frontend))
            before = served_counts(list(metrics_urls))
            body = json.dumps({"model": model, "max_tokens": 4, "messages": [
                {"role": "user", "content": f"{prefix} question {request}"}]}).encode()
            post = urllib.request.Request(f"{frontend}/v1/chat/completions", data=body,
                                          headers={"Content-Type": "application/json"})
            with _no_proxy.open(post, timeout=60) as response:
                response.read()
            for _ in range(50):  # the counter moves when the response ends; give it a moment
                after = served_counts(list(metrics_urls))
                moved = [i for i, (a, b) in enumerate(zip(before, after)) if b > a]
                if moved:
                    break
                time.sleep(0.1)
            served.append(moved[0] if len(moved) == 1 else None)
        groups.append(served)
    # pending: the router load still counted when each request was about to go (evidence of the wait's need).
    print(json.dumps({"groups": groups, "pending": pending}))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
