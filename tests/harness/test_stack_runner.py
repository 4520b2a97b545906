"""The e2e stack runner (tests/e2e/stack.py) starts the platform's servers before what connects to them: a
1.2.1 frontend started before NATS listened exited at once (`Failed to connect to NATS ... Connection refused`),
and the planner's live test failed with it. Offline: a Python listener stands in for etcd and NATS."""
from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from tests.e2e import stack

LATE_LISTENER = """
import socket, sys, time
time.sleep(float(sys.argv[2]))
server = socket.create_server(("127.0.0.1", int(sys.argv[1])))
while True:  # a service keeps listening: the probe's connection must not end it
    server.accept()[0].close()
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class TestStackRunner:
    def test_should_wait_until_a_service_listens(self):
        port = free_port()
        process = subprocess.Popen([sys.executable, "-c", LATE_LISTENER, str(port), "0.25"])
        try:
            started = time.monotonic()
            stack.wait_listening("nats", process, f"127.0.0.1:{port}")
            assert time.monotonic() - started >= 0.25
            assert process.poll() is None
        finally:
            process.kill()
            process.wait()

    def test_should_refuse_a_service_that_exits_before_it_listens(self):
        process = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
        with pytest.raises(RuntimeError, match=r"nats exited \(3\) before it listened on 127.0.0.1:"):
            stack.wait_listening("nats", process, f"127.0.0.1:{free_port()}")
