"""A bounded request loop for the KV-routing e2e test; standard library only, run inside the stack's namespace.

usage: python kv_probe.py FRONTEND_URL MODEL METRICS_URL [METRICS_URL ...]
Waits for /v1/models to list MODEL, then sends GROUPS x PER_GROUP chat requests one at a time; the requests
of a group share a long prefix. After each request it reads every worker's request counter to see which
worker served it, and prints {"groups": [[worker index, ...], ...]} as its last line.

A group's first request stores its prefix on one worker; the KV event saying so reaches the frontend's router over
the event plane (NATS) some time after the response. The 1.2.1 router sends a request to the worker with the lowest
cost, prefill_load_scale x the prompt blocks it would have to compute (minus its cached overlap, overlap credit 1.0)
+ the decode blocks active on it including the new request's (Dynamo's router design; dynamo._core KvRouterConfig,
overlap_score_credit and prefill_load_scale 1.0, temperature 0). A request routed before that event is applied sees no
overlap anywhere: equal costs, a tie either worker may win; and while the previous request still counts on the caching worker, that
worker costs its ~1 uncached block + 2 x ~22 decode blocks against the other's 22 + 22, so it loses. Either sends a
request away from its cache. So before each request the probe waits for the router's own state, not a fixed pause:
after a group's first request until the frontend's dynamo_component_kv_cache_events_applied{event_type="stored",
status="ok"} has grown, and before every request until dynamo_frontend_worker_active_decode_blocks and
_active_prefill_tokens are 0. It prints how long each wait took ("event_waits", "pending": the load still counted).
"""
from __future__ import annotations

import json
import sys
import time
import urllib.request

# Run as a script (tests/e2e on sys.path).
from stack import http_get, request_counters

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


def stored_events_applied(frontend: str) -> float:
    """KV "stored" events the frontend's router has applied to its index, over all workers."""
    status, text = http_get(f"{frontend}/metrics")
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("dynamo_component_kv_cache_events_applied{")
               and 'event_type="stored"' in line and 'status="ok"' in line) if status == 200 else 0.0


def wait_for_stored_events(frontend: str, before: float, timeout: float = 20.0) -> float:
    """Wait until the router has applied a stored event beyond `before`; return the seconds waited."""
    start = time.monotonic()
    while stored_events_applied(frontend) <= before and time.monotonic() - start < timeout:
        time.sleep(0.05)
    return round(time.monotonic() - start, 2)


def served_counts(urls: list[str]) -> list[float]:
    return [sum(request_counters(http_get(url)[1]).values()) for url in urls]


def chat(frontend: str, model: str, content: str) -> None:
    """One chat request, read to its end."""
    body = json.dumps({"model": model, "max_tokens": 4, "messages": [{"role": "user", "content": content}]}).encode()
    post = urllib.request.Request(f"{frontend}/v1/chat/completions", data=body,
                                  headers={"Content-Type": "application/json"})
    with _no_proxy.open(post, timeout=60) as response:
        response.read()


def main(frontend: str, model: str, *metrics_urls: str) -> int:
    deadline = time.monotonic() + READY_TIMEOUT
    while model not in (http_get(f"{frontend}/v1/models")[1] or ""):
        if time.monotonic() > deadline:
            print(f"{model} never listed by {frontend}/v1/models")
            return 1
        time.sleep(1)
    # A first request of its own, not counted: the run's first routing decision differs from the rest (seen in a CI
    # run: it cost 117 blocks where every later group's first request cost 234, and the next requests of that group
    # saw no overlap), so the router's first state is settled on a prefix no group shares before the groups start.
    stored_before = stored_events_applied(frontend)
    chat(frontend, model, " ".join(f"warmup word{i}" for i in range(350)))
    warmup = {"event_wait": wait_for_stored_events(frontend, stored_before), "pending": wait_for_idle_router(frontend)}
    groups, pending, event_waits = [], [], []
    for group in range(GROUPS):
        prefix = " ".join(f"topic{group} word{i}" for i in range(350))  # several hundred tokens, shared
        served = []
        for request in range(PER_GROUP):
            pending.append(wait_for_idle_router(frontend))
            stored_before = stored_events_applied(frontend)
            before = served_counts(list(metrics_urls))
            chat(frontend, model, f"{prefix} question {request}")
            for _ in range(50):  # the counter moves when the response ends; give it a moment
                after = served_counts(list(metrics_urls))
                moved = [i for i, (a, b) in enumerate(zip(before, after)) if b > a]
                if moved:
                    break
                time.sleep(0.1)
            served.append(moved[0] if len(moved) == 1 else None)
            if request == 0:  # the prefix is new: its blocks are stored, and the router must know before request 1
                event_waits.append(wait_for_stored_events(frontend, stored_before))
        groups.append(served)
    # Evidence of the waits' need: the router load still counted when each request was about to go, and the seconds
    # each group's stored event took to be applied after the response had been read.
    print(json.dumps({"groups": groups, "pending": pending, "event_waits": event_waits, "warmup": warmup}))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
