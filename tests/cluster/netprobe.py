"""Connection attempts from inside a pod's network namespace, for the NetworkPolicy tests (test_node_policies.py).

    nsenter --net=<the pod's netns> -- python -m tests.cluster.netprobe < checks.json

Reads a JSON list of checks and prints one JSON object, check id -> result; all checks run at once, each within
TIMEOUT seconds:
  {"id": ..., "kind": "tcp", "host": ..., "port": ...}         open when the connection is established
  {"id": ..., "kind": "dns", "host": ..., "port": 53, "name": ...}  a DNS query for the name's A record over UDP; open
                                                               when an answer comes back, with its addresses
The packets leave from the pod's own interface and address, as the pod's own would: the policy engine sees the pod.
A refused connection (the engine's REJECT, or nothing listening) and a timeout are both closed; the tests check from
the host that every target listens, so closed means the policies closed it.
"""
from __future__ import annotations

import json
import random
import socket
import struct
import sys
import threading

TIMEOUT = 3.0


def tcp(host: str, port: int) -> dict:
    try:
        with socket.create_connection((host, port), timeout=TIMEOUT):
            return {"open": True, "detail": "connected"}
    except OSError as error:
        return {"open": False, "detail": type(error).__name__ + (f" {error.errno}" if error.errno else "")}


def dns_query(name: str) -> tuple[int, bytes]:
    ident = random.randrange(1 << 16)
    question = b"".join(bytes([len(label)]) + label.encode() for label in name.rstrip(".").split(".")) + b"\0"
    return ident, struct.pack("!HHHHHH", ident, 0x0100, 1, 0, 0, 0) + question + struct.pack("!HH", 1, 1)


def dns_answers(reply: bytes) -> list[str]:
    """The A records of a DNS reply (names compressed or not)."""
    count = struct.unpack("!H", reply[6:8])[0]
    offset = 12
    while reply[offset]:  # the question's name
        offset += reply[offset] + 1
    offset += 5
    found = []
    for _ in range(count):
        if reply[offset] & 0xC0 == 0xC0:
            offset += 2
        else:
            while reply[offset]:
                offset += reply[offset] + 1
            offset += 1
        kind, _, _, length = struct.unpack("!HHIH", reply[offset:offset + 10])
        offset += 10
        if kind == 1 and length == 4:
            found.append(socket.inet_ntoa(reply[offset:offset + 4]))
        offset += length
    return found


def dns(host: str, port: int, name: str) -> dict:
    ident, query = dns_query(name)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(TIMEOUT)
        try:
            sock.connect((host, port))
            sock.send(query)
            reply = sock.recv(4096)
        except OSError as error:
            return {"open": False, "detail": type(error).__name__ + (f" {error.errno}" if error.errno else "")}
    if len(reply) < 12 or struct.unpack("!H", reply[:2])[0] != ident:
        return {"open": True, "detail": "an answer that is not a reply to the query", "answers": []}
    try:
        answers = dns_answers(reply)
    except (IndexError, struct.error):
        answers = []
    return {"open": True, "detail": f"answered ({len(answers)} address(es))", "answers": answers}


def run(checks: list[dict]) -> dict[str, dict]:
    results: dict[str, dict] = {}

    def one(check: dict) -> None:
        if check["kind"] == "tcp":
            results[check["id"]] = tcp(check["host"], check["port"])
        else:
            results[check["id"]] = dns(check["host"], check["port"], check["name"])

    threads = [threading.Thread(target=one, args=(check,)) for check in checks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT + 2)
    return results


if __name__ == "__main__":
    print(json.dumps(run(json.load(sys.stdin))))
