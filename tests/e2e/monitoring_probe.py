"""A bounded burst against the e2e frontends while reading Prometheus; standard library only, run inside the stack's
network namespace (tests/e2e/test_monitoring_live.py).

usage: python monitoring_probe.py SPEC.json
Waits until every frontend lists its model and every Prometheus scrapes all its targets, then sends each frontend
`requests` chat requests at once (prompts of `words` words, `max_tokens` each; `bursts` times, one after the other,
when given) and, every second while they run,
evaluates every query of the spec on every Prometheus it names, all at one instant on data complete up to it
(settled()), and reads that Prometheus's alerts. With `until_log`
({"path", "pattern"}) it sends bursts until that log file holds the pattern (the planner's decision) or `load_timeout`
passes. When the load is over it waits `settle` seconds and evaluates the queries again. Prints {"targets": {...},
"load": [...], "after": {...}, "alerts": [...], "requests": {...}} as its last line (targets: how many each
Prometheus scrapes once ready).
"""
from __future__ import annotations

import json
import sys
import threading
import time
import urllib.parse
import urllib.request

_no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def get(url: str, timeout: float = 10.0) -> dict | str | None:
    try:
        with _no_proxy.open(url, timeout=timeout) as response:
            body = response.read().decode()
        return json.loads(body) if body.startswith("{") else body
    except OSError:
        return None


def query(prometheus: str, promql: str, at: float | None = None) -> list[dict] | None:
    """An instant query's samples, at `at` (epoch seconds) or now; None when Prometheus does not answer it."""
    params = {"query": promql, **({"time": f"{at:.3f}"} if at is not None else {})}
    answer = get(f"{prometheus}/api/v1/query?" + urllib.parse.urlencode(params))
    if not isinstance(answer, dict) or answer.get("status") != "success":
        return None
    return [{"labels": r["metric"], "value": float(r["value"][1])} for r in answer["data"]["result"]]


def settled(prometheus: str, at: float, timeout: float = 15.0) -> bool:
    """Wait until every target of this Prometheus has a scrape committed after `at`. A scrape's samples carry its
    start time but are appended when it ends, so a query of `at` made too early misses samples of `at` and earlier
    that arrive later, and two such queries, one after the other, see different data. A scrape commits all its samples
    with its `up` at once, and a target's scrapes follow one another: once the oldest `up` is younger than `at`,
    everything up to `at` is in."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        oldest = query(prometheus, "min(timestamp(up))")
        if oldest and oldest[0]["value"] >= at:
            return True
        time.sleep(0.2)
    return False


def sample(spec: dict, at: float) -> tuple[dict, bool]:
    """{query name: {prometheus name: result}}, every query evaluated at the one instant `at` (the API's time=), and
    whether the data was complete up to it on every Prometheus asked (settled())."""
    complete = all([settled(spec["prometheus"][where], at)
                    for where in sorted({where for q in spec["queries"].values() for where in q["on"]})])
    return {name: {where: query(spec["prometheus"][where], q["promql"], at) for where in q["on"]}
            for name, q in spec["queries"].items()}, complete


def instant() -> float:
    """The instant a sample reads: a second ago, so that most targets have already scraped past it."""
    return time.time() - 1.0


def chat(frontend: dict, index: int, outcome: dict) -> None:
    words = " ".join(f"w{index} {i % 97}" for i in range(frontend["words"]))
    body = json.dumps({"model": frontend["model"], "max_tokens": frontend["max_tokens"],
                       "messages": [{"role": "user", "content": words}]}).encode()
    post = urllib.request.Request(f"{frontend['url']}/v1/chat/completions", data=body,
                                  headers={"Content-Type": "application/json"})
    try:
        with _no_proxy.open(post, timeout=180) as response:
            response.read()
        outcome["ok"] += 1
    except OSError as error:
        outcome["errors"].append(repr(error))


def ready(spec: dict) -> str | None:
    """None once every frontend serves its model and every Prometheus has all its targets up; else what is missing."""
    for frontend in spec["frontends"]:
        models = get(f"{frontend['url']}/v1/models")
        if not isinstance(models, dict) or frontend["model"] not in [m["id"] for m in models.get("data", [])]:
            return f"{frontend['url']} does not list {frontend['model']}"
    for name, url in spec["prometheus"].items():
        up = query(url, "up", time.time())
        if up is None or len(up) < spec["targets"][name] or any(r["value"] != 1 for r in up):
            return f"Prometheus {name}: targets up {up}"
    return None


def main(spec_path: str) -> int:
    spec = json.loads(open(spec_path).read())
    deadline = time.monotonic() + spec["ready_timeout"]
    while (missing := ready(spec)) is not None:
        if time.monotonic() > deadline:
            print(json.dumps({"error": f"not ready after {spec['ready_timeout']} s: {missing}"}))
            return 1
        time.sleep(1)
    targets = {name: len(query(url, "up", time.time()) or []) for name, url in spec["prometheus"].items()}
    time.sleep(spec["settle"])  # a few scrapes of the idle deployment
    idle, _ = sample(spec, instant())
    outcome = {"ok": 0, "errors": []}
    started = time.monotonic()
    threads: list[threading.Thread] = []

    def burst() -> None:
        batch = [threading.Thread(target=chat, args=(frontend, len(threads) + i, outcome))
                 for frontend in spec["frontends"] for i in range(frontend["requests"])]
        threads.extend(batch)
        for thread in batch:
            thread.start()

    def logged() -> bool:
        until = spec.get("until_log")
        try:
            return bool(until) and until["pattern"] in open(until["path"], errors="replace").read()
        except OSError:
            return False

    burst()
    bursts = 1
    load, alerts = [], []
    while time.monotonic() - started < spec["load_timeout"]:
        if not any(thread.is_alive() for thread in threads):
            if bursts >= spec.get("bursts", 1) and (not spec.get("until_log") or logged()):
                break
            burst()
            bursts += 1
        time.sleep(1)
        at = instant()
        results, complete = sample(spec, at)
        load.append({"at": at, "results": results, "settled": complete})
        answer = get(f"{spec['prometheus'][spec['alerts_on']]}/api/v1/alerts")
        if isinstance(answer, dict):
            alerts.append({"at": at, "alerts": [{"name": a["labels"]["alertname"], "state": a["state"]}
                                                for a in answer["data"]["alerts"]]})
    for thread in threads:
        thread.join(timeout=max(0.0, spec["load_timeout"] - (time.monotonic() - started)))
    seconds = round(time.monotonic() - started, 1)
    time.sleep(spec["settle"])
    after, _ = sample(spec, instant())
    print(json.dumps({"targets": targets, "idle": idle, "load": load, "after": after, "alerts": alerts,
                      "requests": {**outcome, "sent": len(threads), "seconds": seconds}}))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
