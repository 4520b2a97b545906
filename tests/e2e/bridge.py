"""Byte relays between the e2e stack's network namespace and the host, through unix sockets; standard library only.

The stack runs in a namespace that holds only `lo` (tests/e2e/stack.py), so its 127.0.0.1 is not the host's. A
unix socket is a file, which both sides see: one end of a bridge listens on TCP in its namespace and connects to the
socket; the other listens on the socket and connects to TCP in its namespace. Bytes pass unchanged (TLS stays end to
end), so Prometheus' Kubernetes discovery and KEDA reach the host's API server from the stack at 127.0.0.1:PORT, and
the API server reaches KEDA's metrics server in the stack.

    python bridge.py RULE [RULE ...]     run in the stack, until SIGTERM
    RULE: tcp:PORT=unix:PATH             listen on 127.0.0.1:PORT, connect to the socket PATH
          unix:PATH=tcp:PORT             listen on the socket PATH, connect to 127.0.0.1:PORT
The test's own side uses Bridge (same rules) in threads.
"""
from __future__ import annotations

import os
import signal
import socket
import sys
import threading


def hang_up(*ends: socket.socket) -> None:
    """Shuts down and closes each socket, whichever side went first (tests/helpers/relays.py's pumps end the same way)."""
    for end in ends:
        try:
            end.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        end.close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        hang_up(sink, source)


def _endpoint(text: str) -> tuple[str, str | int]:
    kind, _, where = text.partition(":")
    if kind == "tcp":
        return kind, int(where)
    if kind == "unix":
        return kind, where
    raise ValueError(f"not tcp:PORT or unix:PATH: {text}")


class Bridge:
    """One rule: a listener that hands each client to a fresh connection to the other end, in threads."""

    def __init__(self, rule: str):
        listen, _, connect = rule.partition("=")
        self.rule = rule
        (self.listen_kind, self.listen_at), (self.connect_kind, self.connect_to) = _endpoint(listen), _endpoint(connect)
        if self.listen_kind == "tcp":
            self.listener = socket.create_server(("127.0.0.1", self.listen_at))
            self.port = self.listener.getsockname()[1]  # tcp:0 takes a free port
        else:
            if os.path.exists(self.listen_at):
                os.unlink(self.listen_at)
            self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.listener.bind(self.listen_at)
            self.listener.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()

    def _connect(self) -> socket.socket:
        if self.connect_kind == "tcp":
            return socket.create_connection(("127.0.0.1", self.connect_to), timeout=10)
        peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        peer.settimeout(10)
        peer.connect(self.connect_to)
        return peer

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                peer = self._connect()
            except OSError:
                client.close()
                continue
            peer.settimeout(None)
            threading.Thread(target=_pump, args=(client, peer), daemon=True).start()
            threading.Thread(target=_pump, args=(peer, client), daemon=True).start()

    def close(self) -> None:
        self.listener.close()
        if self.listen_kind == "unix" and os.path.exists(self.listen_at):
            os.unlink(self.listen_at)


def main(rules: list[str]) -> int:
    if not rules:
        sys.exit(__doc__)
    bridges = [Bridge(rule) for rule in rules]
    print(f"bridge: {', '.join(b.rule for b in bridges)}", flush=True)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    while not stop.wait(0.5):
        pass
    for bridge in bridges:
        bridge.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
