"""Traffic of known size against the e2e frontend, then the cost recording rules as Prometheus recorded them; standard
library only, run inside the stack's network namespace (tests/e2e/test_token_cost_live.py).

usage: python cost_probe.py SPEC.json
Waits until the frontend lists its model and Prometheus scrapes every target, sends one warm-up request (the
frontend creates its token and request counters on the first request, and counts tokens as they stream, so a scrape
may see half a request), waits `quiet` seconds (longer than the cost window: the warm-up's samples leave it), then
sends `requests` chat requests (`concurrency` at a time, `max_tokens` each,
ignore_eos) and adds up the completion tokens the responses report. After `settle` more seconds it reads every
series of the spec's `records` and the raw counters, all at one instant, and Prometheus's alerts. Prints
{"warmup": {...}, "burst": {...}, "records": {...}, "counters": {...}, "alerts": [...]} as its last line.
"""
from __future__ import annotations

import json
import sys
import threading
import time
import urllib.request

# Run as a script (tests/e2e on sys.path): the monitoring probe's unproxied HTTP client and Prometheus query.
from monitoring_probe import _no_proxy, get, instant, query, settled


def chat(spec: dict, index: int) -> int:
    """One unary chat request; the completion tokens its response reports."""
    body = json.dumps({"model": spec["model"], "max_tokens": spec["max_tokens"], "ignore_eos": True,
                       "messages": [{"role": "user", "content": f"request {index}: count the tokens"}]}).encode()
    post = urllib.request.Request(f"{spec['url']}/v1/chat/completions", data=body,
                                  headers={"Content-Type": "application/json"})
    with _no_proxy.open(post, timeout=120) as response:
        return json.loads(response.read())["usage"]["completion_tokens"]


def main(spec_path: str) -> int:
    spec = json.loads(open(spec_path).read())
    deadline = time.monotonic() + spec["ready_timeout"]
    while True:
        models = get(f"{spec['url']}/v1/models")
        up = query(spec["prometheus"], "up")
        if (isinstance(models, dict) and spec["model"] in [m["id"] for m in models.get("data", [])]
                and up is not None and len(up) >= spec["targets"] and all(r["value"] == 1 for r in up)):
            break
        if time.monotonic() > deadline:
            print(json.dumps({"error": f"not ready after {spec['ready_timeout']} s: models {models}, up {up}"}))
            return 1
        time.sleep(1)
    warmup = {"tokens": chat(spec, -1), "requests": 1}
    time.sleep(spec["quiet"])
    results: list[int] = []
    errors: list[str] = []
    lock = threading.Lock()
    pending = list(range(spec["requests"]))

    def worker() -> None:
        while True:
            with lock:
                if not pending:
                    return
                index = pending.pop()
            try:
                tokens = chat(spec, index)
                with lock:
                    results.append(tokens)
            except OSError as error:
                with lock:
                    errors.append(repr(error))

    started = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(spec["concurrency"])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    burst = {"requests": len(results), "tokens": sum(results), "errors": errors,
             "seconds": round(time.monotonic() - started, 1)}
    time.sleep(spec["settle"])
    at = instant()  # records and counters read at one instant, on data complete up to it
    settled(spec["prometheus"], at)
    records = {name: query(spec["prometheus"], promql, at) for name, promql in spec["records"].items()}
    counters = {name: query(spec["prometheus"], promql, at) for name, promql in spec["counters"].items()}
    answer = get(f"{spec['prometheus']}/api/v1/alerts")
    alerts = [{"name": a["labels"]["alertname"], "state": a["state"], "labels": a["labels"]}
              for a in (answer or {}).get("data", {}).get("alerts", [])] if isinstance(answer, dict) else None
    print(json.dumps({"warmup": warmup, "burst": burst, "records": records, "counters": counters, "alerts": alerts}))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
