"""Streaming chat completions at a fixed concurrency, counted: the load of the node tests' no-dropped-request checks
(tests/cluster/test_node.py). Standard library only.

Each of `concurrency` threads sends one streaming chat request after another, each on a new connection (as a client
without connection reuse; a reused connection stays pinned to the pod that accepted it), until stop(). A request is
started when it is sent; completed when its stream ends with the last chunk (a finish_reason, then `data: [DONE]`);
failed when no 200 answer comes (refused, reset, an error status); cut when a 200 stream ends without its last chunk.
"""
from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.parse


class StreamingLoad:
    def __init__(self, url: str, model: str, concurrency: int = 4, max_tokens: int = 200, timeout: float = 120):
        parsed = urllib.parse.urlparse(url)
        self.host, self.port = parsed.hostname, parsed.port or 80
        self.model, self.concurrency, self.max_tokens, self.timeout = model, concurrency, max_tokens, timeout
        self.counts = {"started": 0, "completed": 0, "failed": 0, "cut": 0}
        self.errors: list[str] = []
        self.durations: list[float] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(concurrency)]

    def start(self) -> "StreamingLoad":
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> dict:
        """Stop sending; every request already sent is followed to its end. The counts, a few errors, the longest
        request's seconds."""
        self._stop.set()
        for thread in self._threads:
            thread.join(self.timeout + 10)
        with self._lock:
            return {**self.counts, "errors": self.errors[:5],
                    "longest_seconds": round(max(self.durations, default=0.0), 1)}

    def _count(self, outcome: str, error: str | None = None, seconds: float | None = None) -> None:
        with self._lock:
            self.counts[outcome] += 1
            if error:
                self.errors.append(error)
            if seconds is not None:
                self.durations.append(seconds)

    def _run(self, worker: int) -> None:
        index = 0
        while not self._stop.is_set():
            index += 1
            self._count("started")
            started = time.monotonic()
            outcome, error = self.request(f"worker {worker} request {index}")
            self._count(outcome, error, time.monotonic() - started)

    def request(self, label: str) -> tuple[str, str | None]:
        body = json.dumps({"model": self.model, "stream": True, "max_tokens": self.max_tokens, "ignore_eos": True,
                           "messages": [{"role": "user", "content": f"{label}: stream some tokens"}]})
        connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            try:
                connection.request("POST", "/v1/chat/completions", body,
                                   {"Content-Type": "application/json", "Connection": "close"})
                response = connection.getresponse()
            except (OSError, http.client.HTTPException) as exc:
                return "failed", f"{label}: {type(exc).__name__}: {exc}"
            if response.status != 200:
                return "failed", f"{label}: HTTP {response.status}: {response.read()[:200]!r}"
            finished = done = False
            try:
                for line in response:
                    if line.startswith(b"data: [DONE]"):
                        done = True
                    elif line.startswith(b"data:") and b'"finish_reason":"' in line.replace(b" ", b""):
                        finished = True
            except (OSError, http.client.HTTPException) as exc:
                return "cut", f"{label}: stream broke: {type(exc).__name__}: {exc}"
            if not (finished and done):
                return "cut", f"{label}: stream ended without its last chunk (finish_reason {finished}, DONE {done})"
            return "completed", None
        finally:
            connection.close()
