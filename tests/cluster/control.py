"""Kill and restart components of the control plane python -m ci.cluster control-plane started (the fault tests' lever).

Only a control plane whose state folder (pids.json) sits beside the kubeconfig qualifies: the functions act
on the processes that script recorded and nothing else. A cluster from kind or a real one does not qualify,
and the fault tests skip there, saying so.
"""
from __future__ import annotations

import signal
from dataclasses import dataclass
from pathlib import Path

from ci.cluster import control_plane
from tests.helpers.relays import TcpRelay

def _script():
    return control_plane


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


class SlowProxy(TcpRelay):
    """A TCP proxy on 127.0.0.1 to the API server that passes at most `rate` bytes/s towards it.

    TLS passes through untouched (the server certificate names 127.0.0.1, whatever the port). Helm behind it
    sends its release record and objects slowly, so a test can act between one object and the next.
    """

    def __init__(self, upstream_port: int, rate: float = 16 * 1024):
        super().__init__(upstream_port, upload_rate=rate)

    def kubeconfig(self, kubeconfig: Path) -> str:
        """The kubeconfig's content with its server behind this proxy."""
        import re
        return re.sub(r"(server: https://127\.0\.0\.1:)\d+", rf"\g<1>{self.port}", kubeconfig.read_text())
