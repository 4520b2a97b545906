"""Concurrent requests for the admission-gate e2e test; standard library only, run inside the stack's namespace.

usage: python gate_probe.py FRONTEND_URL MODEL REQUESTS MAX_TOKENS
Waits for /v1/models to list MODEL, then sends REQUESTS chat requests at once (one thread each, MAX_TOKENS tokens, so
they overlap on a mocker running at real speed) and prints {"statuses": [...], "errors": [...]} as its last line:
each request's HTTP status and, for an error, the type its body names.
"""
from __future__ import annotations

import json
import sys
import threading
import time
import urllib.error
import urllib.request

# Run as a script (tests/e2e on sys.path).
from stack import http_get

READY_TIMEOUT, REQUEST_TIMEOUT = 120, 120
_no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def chat(frontend: str, model: str, max_tokens: int) -> tuple[int | None, str]:
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": "hello"}], "max_tokens": max_tokens,
                       "ignore_eos": True}).encode()
    request = urllib.request.Request(f"{frontend}/v1/chat/completions", body, {"Content-Type": "application/json"})
    try:
        with _no_proxy.open(request, timeout=REQUEST_TIMEOUT) as response:
            response.read()
            return response.status, ""
    except urllib.error.HTTPError as error:
        text = error.read().decode(errors="replace")
        try:
            return error.code, str(json.loads(text).get("type", ""))
        except ValueError:
            return error.code, text[:200]
    except OSError as error:
        return None, str(error)


def main(frontend: str, model: str, requests: int, max_tokens: int) -> int:
    deadline = time.monotonic() + READY_TIMEOUT
    while model not in (http_get(f"{frontend}/v1/models")[1] or ""):
        if time.monotonic() > deadline:
            print(f"{model} not listed at {frontend}/v1/models within {READY_TIMEOUT}s", file=sys.stderr)
            return 1
        time.sleep(1)
    results: list[tuple[int | None, str]] = [(None, "not sent")] * requests
    start = threading.Barrier(requests)

    def send(index: int) -> None:
        start.wait()
        results[index] = chat(frontend, model, max_tokens)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(REQUEST_TIMEOUT + 10)
    print(json.dumps({"statuses": [status for status, _ in results], "errors": [error for _, error in results]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
