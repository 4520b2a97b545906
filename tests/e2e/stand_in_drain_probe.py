"""Drives the node tier's serving stand-in (ci/cluster/stand_in.py) through a SIGTERM with streams open; run by
tests/e2e/test_stand_in_drain.py inside a private network namespace.

usage: python stand_in_drain_probe.py MODEL_DIR WORK_DIR trtllm-serve|frontend
Starts the stand-in as trtllm-serve (its own HTTP front) or as a Dynamo frontend pod (`serve ... -- dynamo.frontend`),
with its mocker slowed, waits until /v1/models lists the model, opens 3 streaming chats of 60 tokens, sends SIGTERM
1 s later, then tries one new request, and prints {"streams": [...], "new": ..., "exit": ..., "seconds": ...}.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

# Run as a module from the checkout (python -m tests.e2e.stand_in_drain_probe).
from tests.cluster.streams import StreamingLoad

STAND_IN = Path(__file__).resolve().parents[2] / "ci" / "cluster" / "stand_in.py"
PORT = 8000


def main(model_dir: str, work: str, mode: str) -> int:
    env = dict(os.environ, HOME=f"{work}/home", TMPDIR=f"{work}/tmp", GPT_OSS_STAND_IN_SPEEDUP_RATIO="0.15",
               DYN_HTTP_GRACEFUL_SHUTDOWN_TIMEOUT_SECS="10")
    for folder in (env["HOME"], env["TMPDIR"]):
        os.makedirs(folder, exist_ok=True)
    if mode == "trtllm-serve":
        model = Path(model_dir).name
        argv = [sys.executable, str(STAND_IN), "trtllm-serve", model_dir, "--host", "127.0.0.1", "--port", str(PORT)]
    else:
        model = "openai/gpt-oss-120b"
        argv = [sys.executable, str(STAND_IN), "serve", "--model-path", model_dir, "--model-name", model, "--",
                sys.executable, "-m", "dynamo.frontend", "--http-host", "127.0.0.1", "--http-port", str(PORT)]
    log = open(f"{work}/stand-in.log", "w")
    process = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{PORT}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/v1/models", timeout=2) as answer:
                if model in [m["id"] for m in json.load(answer)["data"]]:
                    break
        except OSError:
            pass
        time.sleep(0.5)
    else:
        process.kill()
        print(json.dumps({"error": "the stand-in never listed its model"}))
        return 1
    client = StreamingLoad(url, model, max_tokens=60)
    results: list = [None] * 3

    def stream(index: int) -> None:
        began = time.monotonic()
        outcome, error = client.request(f"stream {index}")
        results[index] = {"outcome": outcome, "error": error, "seconds": round(time.monotonic() - began, 1)}

    threads = [threading.Thread(target=stream, args=(index,)) for index in range(3)]
    for thread in threads:
        thread.start()
    time.sleep(1)
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    outcome, error = StreamingLoad(url, model, max_tokens=5).request("after SIGTERM")
    for thread in threads:
        thread.join(120)
    code = process.wait(120)
    print(json.dumps({"streams": results, "new": {"outcome": outcome, "error": error}, "exit": code,
                      "seconds": round(time.monotonic() - started, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
