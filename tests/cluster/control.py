"""Kill and restart components of the control plane ci/control-plane.py started (the fault tests' lever).

Only a control plane whose state folder (pids.json) sits beside the kubeconfig qualifies: the functions act
on the processes that script recorded and nothing else. A cluster from kind or a real one does not qualify,
and the fault tests skip there, saying so.
"""
from __future__ import annotations

import importlib.util
import signal
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import REPO_ROOT

SCRIPT = REPO_ROOT / "ci" / "control-plane.py"


def _script():
    spec = importlib.util.spec_from_file_location("gpt_oss_control_plane", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class ControlPlane:
    state: Path

    @classmethod
    def beside(cls, kubeconfig: Path) -> "ControlPlane | None":
        state = kubeconfig.resolve().parent
        return cls(state) if (state / "pids.json").is_file() else None

    def kill(self, component: str, sig: int = signal.SIGKILL) -> None:
        _script().kill_component(self.state, component, sig)

    def start(self, component: str) -> None:
        """Start it again on its recorded ports and data directory; returns once it answers its health check."""
        script = _script()
        script.start_component(self.state, component)
        script.revive(self.state)

    def restart(self, component: str, down_seconds: float = 0.0, sig: int = signal.SIGKILL) -> None:
        _script().restart(self.state, component, down_seconds, sig)

    def log(self, component: str) -> str:
        path = self.state / "logs" / f"{component}.log"
        return path.read_text(errors="replace") if path.exists() else ""


class SlowProxy:
    """A TCP proxy on 127.0.0.1 to the API server that passes at most `rate` bytes/s towards it.

    TLS passes through untouched (the server certificate names 127.0.0.1, whatever the port). Helm behind it
    sends its release record and objects slowly, so a test can act between one object and the next.
    """

    def __init__(self, upstream_port: int, rate: float = 16 * 1024):
        import socket
        import threading
        self.upstream_port, self.rate = upstream_port, rate
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket
        import threading
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.upstream_port))
            except OSError:
                client.close()
                continue
            threading.Thread(target=self._pump, args=(client, server, self.rate), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, None), daemon=True).start()

    @staticmethod
    def _pump(source, sink, rate: float | None) -> None:
        import time
        try:
            while True:
                data = source.recv(1024 if rate else 65536)
                if not data:
                    break
                sink.sendall(data)
                if rate:
                    time.sleep(len(data) / rate)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.close()
                except OSError:
                    pass

    def kubeconfig(self, kubeconfig: Path) -> str:
        """The kubeconfig's content with its server behind this proxy."""
        import re
        return re.sub(r"(server: https://127\.0\.0\.1:)\d+", rf"\g<1>{self.port}", kubeconfig.read_text())

    def close(self) -> None:
        self.closed = True
        self.listener.close()
