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


# The Go servers' garbage collector (kube-apiserver, etcd, kubelet, the controllers): at Go's default, GOGC=100, it
# took about a fifth of a busy API server's CPU (CI's cluster plane, 2026-12-05:
# go_cpu_classes_gc_total_cpu_seconds_total 9.8 s beside 35 s of user code), on two cores the tiers share. At 400 it
# runs a quarter as often, the heap growing to five times what is live; GOMEMLIMIT bounds each process's memory all the
# same. Measured on a scratch plane (the generated values, 300 cases; GOMEMLIMIT then 1.5 GiB): the API server's CPU
# 8.5 and 8.8 s against 9.9 and 10.7 s at 100, 1.4 GB at most against 0.65 GB. A GOGC the environment sets wins.
GO_SERVER_ENV = {"GOGC": "400", "GOMEMLIMIT": "1GiB"}


def server_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a server starts with: GO_SERVER_ENV, this process's environment, then `env`."""
    return {**GO_SERVER_ENV, **os.environ, **(env or {})}


def spawn(argv: list[str], log, env: dict[str, str] | None = None) -> dict:
    """Start argv in its own session (with server_env(env)) at this process's niceness; the record names the process
    for as long as it lives."""
    process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               start_new_session=True, env=server_env(env))
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


def behind(niceness: int, argv: list[str]) -> None:
    """Exec argv at `niceness` in a session of its own whose autogroup has that niceness too. A plain `nice -n` is not
    enough beside the node's pods: under sched_autogroup the session it runs in (CI's own, holding the node tests) is
    one group at nice 0, so the CPU-bound groups of ci/test-tiers.sh would take the node's share whatever their
    processes' niceness."""
    if os.getpid() != os.getsid(0):
        try:
            os.setsid()
        except PermissionError:  # already a process group leader: a child can start a session
            if os.fork():
                code = os.waitstatus_to_exitcode(os.wait()[1])
                os._exit(code if code >= 0 else 128 - code)
            os.setsid()
    os.setpriority(os.PRIO_PROCESS, 0, max(niceness, os.getpriority(os.PRIO_PROCESS, 0)))
    keep_niceness(os.getpid())
    os.execvp(argv[0], argv)


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    import argparse
    parser = argparse.ArgumentParser(prog=prog, description="Run a command behind the node's tests: at NICENESS, in a "
                                     "session of its own scheduled (sched_autogroup) at that niceness too.")
    parser.add_argument("niceness", type=int, choices=range(0, 20), metavar="NICENESS", help="0-19")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command: behind NICENESS -- COMMAND [ARGS...]")
    behind(args.niceness, command)
    return 0  # not reached: behind execs
