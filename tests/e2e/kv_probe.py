"""A bounded request loop for the KV-routing e2e test; standard library only, run inside the stack's namespace.

usage: python kv_probe.py FRONTEND_URL MODEL METRICS_URL [METRICS_URL ...]
Waits for /v1/models to list MODEL, then sends GROUPS x PER_GROUP chat requests one at a time; the requests
of a group share a long prefix. After each request it reads every worker's request counter to see which
worker served it, and prints {"groups": [[worker index, ...], ...]} as its last line.
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


def served_counts(urls: list[str]) -> list[float]:
    return [sum(request_counters(http_get(url)[1]).values()) for url in urls]


def main(frontend: str, model: str, *metrics_urls: str) -> int:
    deadline = time.monotonic() + READY_TIMEOUT
    while model not in (http_get(f"{frontend}/v1/models")[1] or ""):
        if time.monotonic() > deadline:
            print(f"{model} never listed by {frontend}/v1/models")
            return 1
        time.sleep(1)
    groups = []
    for group in range(GROUPS):
        prefix = " ".join(f"topic{group} word{i}" for i in range(350))  # several hundred tokens, shared
        served = []
        for request in range(PER_GROUP):
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
            time.sleep(0.3)  # let the router release the finished request's load before the next one
        groups.append(served)
    print(json.dumps({"groups": groups}))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
