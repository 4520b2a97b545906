"""The processes the cluster tier starts, known by what cannot race: the pid and its start time, recorded at spawn.

A pid alone can be reused, and a command line read from /proc is empty while a process is a zombie or between fork
and exec. A pid's start time (field 22 of /proc/<pid>/stat, in clock ticks since boot) is fixed at fork and unique
among the pids alive at once, so (pid, start time) names one process for its whole life. Each component runs in a
session of its own (start_new_session), so its process group is its pid: stopping it ends its children too.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

# What the tiers start and the end of CI must not find running.
SERVER_NAMES = ("kubelet", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "etcd",
                "containerd", "dynamo-operator", "argocd-application-controller", "argocd-repo-server",
                "kube-router", "prometheus-operator", "keda", "keda-adapter", "traefik", "epp")


def _stat(pid: int) -> list[str] | None:
    """/proc/<pid>/stat's fields after the command name (which may hold spaces): [state, ppid, ...]."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
    except (OSError, IndexError):
        return None


def start_time(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[19]) if fields else None  # field 22 of stat; the list starts at field 3


def keep_niceness(pid: int) -> None:
    """Give the session `pid` leads this process's niceness. Linux (sched_autogroup) schedules each session as one
    group of weight nice 0 whatever its processes' niceness, so a server started in a session of its own by a tier run
    under `nice` (ci/test-tiers.sh) would compete with the node's at full weight."""
    try:
        Path(f"/proc/{pid}/autogroup").write_text(str(os.getpriority(os.PRIO_PROCESS, 0)))
    except OSError:  # no autogroups here (a kernel without them, or a cgroup of its own), or not allowed: no change
        pass


def spawn(argv: list[str], log, env: dict[str, str] | None = None) -> dict:
    """Start argv in its own session (with `env` added to this process's environment) at this process's niceness; the
    record names the process for as long as it lives."""
    process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               start_new_session=True, env={**os.environ, **env} if env else None)
    keep_niceness(process.pid)
    return {"pid": process.pid, "start_time": start_time(process.pid), "exe": argv[0]}


def alive(entry: dict) -> bool:
    """Whether the recorded process still runs: same pid, same start time, not a zombie."""
    fields = _stat(entry["pid"])
    if fields is None or fields[0] == "Z":
        return False
    if "start_time" not in entry:  # a record from before start times were kept
        return True
    return int(fields[19]) == entry["start_time"]


def terminate(entry: dict, sig: int = signal.SIGTERM, grace: float = 10.0) -> bool:
    """Signal the recorded process's group (it leads its session), then SIGKILL it after `grace` seconds.
    Returns False when the process was not running (nothing was signalled)."""
    if not alive(entry):
        return False
    pid = entry["pid"]
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        os.kill(pid, sig)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not alive(entry):
            return True
        time.sleep(0.1)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    while alive(entry) and time.monotonic() < deadline + 5:
        time.sleep(0.1)
    return True


def running_servers() -> list[str]:
    """`pid name` of every process on this machine whose executable is one of SERVER_NAMES."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv0 = (entry / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        fields = _stat(int(entry.name))
        if argv0 and os.path.basename(argv0) in SERVER_NAMES and fields and fields[0] != "Z":
            found.append(f"{entry.name} {argv0}")
    return found
