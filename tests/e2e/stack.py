"""Run one e2e plan (tests/e2e/plan.py) and write what happened as JSON. Standard library only.

usage: unshare --net -- python tests/e2e/stack.py PLAN.json RESULT.json

Meant to run in a private network namespace that holds only `lo`: it brings `lo` up, starts the
services (frontend, mockers, each with the environment the Dynamo operator would give it: tests/e2e/plan.py)
in order, waiting for a service that names an address it `listens` on (the platform's etcd and NATS: the Dynamo
components connect at start and exit when refused, where a cluster would restart them until it answers). It runs
the jobs one after the other (smoke test, benchmark) while watching that no service dies, then reads /v1/models
and each mocker's request counters, stops every service (SIGTERM to its process group, SIGKILL after
STOP_TIMEOUT) and kills whatever still carries the run's marker variable, recording it as a leftover. Every
process writes to <run_dir>/logs/<name>.log.
"""
from __future__ import annotations

import ctypes
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

STOP_TIMEOUT = 10.0
LISTEN_TIMEOUT = 60.0
POLL = 0.5
PR_SET_PDEATHSIG = 1
COUNTER = "dynamo_component_requests_total"
_no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _in_the_child() -> None:
    # SIGKILL the child should this runner die without stopping it (e.g. killed by a timeout).
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    # Its new session is scheduled as a group of its own at nice 0 (Linux's sched_autogroup): keep the runner's
    # niceness (ci/test-tiers.sh runs this tier under `nice`, behind the node's tests). Without autogroups: no change.
    try:
        with open("/proc/self/autogroup", "w") as autogroup:
            autogroup.write(str(os.getpriority(os.PRIO_PROCESS, 0)))
    except OSError:
        pass


def start(spec: dict, log_dir: Path, cwd: str) -> subprocess.Popen:
    log = open(log_dir / f"{spec['name']}.log", "wb")
    try:
        return subprocess.Popen(spec["argv"], env=spec["env"], cwd=cwd, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_in_the_child)
    finally:
        log.close()


def wait_listening(name: str, process: subprocess.Popen, address: str) -> None:
    """Until the service accepts a connection at host:port; it must not exit meanwhile."""
    host, port = address.rsplit(":", 1)
    deadline = time.monotonic() + LISTEN_TIMEOUT
    while True:
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
            return
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited ({process.returncode}) before it listened on {address}") from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not listen on {address} within {LISTEN_TIMEOUT:.0f}s") from None
            time.sleep(0.1)


def signal_group(process: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:
        pass


def run_job(job: dict, services: dict[str, subprocess.Popen], log_dir: Path, cwd: str) -> dict:
    """Run a job to completion; abort it when it overruns its timeout or any service exits."""
    started = time.monotonic()
    process = start(job, log_dir, cwd)
    aborted = None
    while process.poll() is None:
        dead = {name: p.returncode for name, p in services.items() if p.poll() is not None}
        if dead:
            aborted = f"service(s) exited while {job['name']} ran: {dead}"
        elif time.monotonic() - started > job["timeout"]:
            aborted = f"{job['name']} overran its {job['timeout']}s timeout"
        if aborted:
            signal_group(process, signal.SIGTERM)
            try:
                process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                signal_group(process, signal.SIGKILL)
                process.wait()
            break
        time.sleep(POLL)
    strays = group_members(process.pid)  # helpers that outlived the job (AIPerf spawns several)
    signal_group(process, signal.SIGKILL)
    return {"returncode": process.returncode, "seconds": round(time.monotonic() - started, 1),
            "aborted": aborted, "strays": strays,
            "output": (log_dir / f"{job['name']}.log").read_text(errors="replace")}


def group_members(pgid: int) -> dict[str, str]:
    """pid -> command line of the live processes in a process group."""
    members = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # /proc/<pid>/stat is "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses.
            state, _ppid, group = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:3]
            if int(group) == pgid and state != "Z":
                members[entry.name] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError):
            continue
    return members


def http_get(url: str, timeout: float = 10.0) -> tuple[int | None, str]:
    try:
        with _no_proxy.open(url, timeout=timeout) as response:
            return response.status, response.read().decode(errors="replace")
    except OSError as error:
        return None, str(error)


def series_label_values(metrics_text: str, label: str) -> list[str]:
    """The distinct values of one label over a Prometheus text exposition, sorted."""
    return sorted({value for value in re.findall(rf'[{{,]{label}="([^"]*)"', metrics_text)})


def request_counters(metrics_text: str) -> dict[str, float]:
    """{dynamo_component: requests} of the `generate` endpoint, from a Prometheus text exposition."""
    counters: dict[str, float] = {}
    for line in metrics_text.splitlines():
        match = re.match(rf"{COUNTER}\{{(.*)\}}\s+(\S+)$", line)
        if not match:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1)))
        if labels.get("dynamo_endpoint") == "generate":
            component = labels.get("dynamo_component", "")
            counters[component] = counters.get(component, 0.0) + float(match.group(2))
    return counters


def stop(services: dict[str, subprocess.Popen]) -> dict[str, dict]:
    """SIGTERM every service's process group at once, SIGKILL the ones still up after STOP_TIMEOUT."""
    stopped = {}
    started = time.monotonic()
    for process in services.values():
        if process.poll() is None:
            signal_group(process, signal.SIGTERM)
    for name, process in services.items():
        exited_before = process.returncode is not None
        killed = False
        try:
            process.wait(max(0.0, STOP_TIMEOUT - (time.monotonic() - started)))
        except subprocess.TimeoutExpired:
            signal_group(process, signal.SIGKILL)
            process.wait()
            killed = True
        stopped[name] = {"pid": process.pid, "returncode": process.returncode, "exited_before_stop": exited_before,
                         "killed": killed, "seconds": round(time.monotonic() - started, 1)}
    return stopped


def processes_with(variable: str, value: str) -> dict[int, str]:
    """pid -> command line of every process whose environment has variable=value (this one excluded)."""
    wanted = f"{variable}={value}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if wanted in (entry / "environ").read_bytes().split(b"\0"):
                found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
    return found


def kill_leftovers(variable: str, value: str) -> dict[int, str]:
    leftovers = processes_with(variable, value)
    for pid in leftovers:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return leftovers


def run(plan: dict, result: dict) -> None:
    """Carry out the plan, recording into result as it goes (so a crash still leaves the evidence)."""
    run_dir = Path(plan["run_dir"])
    log_dir = run_dir / "logs"
    for folder in plan["dirs"]:
        Path(folder).mkdir(parents=True, exist_ok=True)
    for path, text in plan["files"].items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)
    result.update(services={s["name"]: {k: s.get(k) for k in ("role", "component", "metrics_url")}
                            for s in plan["services"]}, jobs={}, log_dir=str(log_dir))
    lo_up = subprocess.run(["ip", "link", "set", "lo", "up"], capture_output=True, text=True)
    result["lo_up"] = {"returncode": lo_up.returncode, "output": lo_up.stdout + lo_up.stderr}
    services: dict[str, subprocess.Popen] = {}
    started = time.monotonic()
    try:
        for spec in plan["services"]:
            services[spec["name"]] = start(spec, log_dir, str(run_dir))
            if spec.get("listens"):
                wait_listening(spec["name"], services[spec["name"]], spec["listens"])
        for job in plan["jobs"]:
            result["jobs"][job["name"]] = run_job(job, services, log_dir, str(run_dir))
        result["models"] = http_get(f"{plan['frontend_url'].rstrip('/')}/v1/models")
        for spec in plan["services"]:
            if spec.get("metrics_url"):
                status, text = http_get(spec["metrics_url"])
                result["services"][spec["name"]]["metrics_status"] = status
                result["services"][spec["name"]]["requests"] = request_counters(text) if status == 200 else None
                # The Dynamo namespace the runtime labels its own series with (the operator's DYN_NAMESPACE).
                result["services"][spec["name"]]["dynamo_namespaces"] = (
                    series_label_values(text, "dynamo_namespace") if status == 200 else None)
    except BaseException as error:  # noqa: BLE001 - recorded, then everything is still stopped
        result["error"] = repr(error)
        raise
    finally:
        result["seconds_up"] = round(time.monotonic() - started, 1)
        for name, stopped in stop(services).items():
            result["services"][name].update(stopped)
        result["leftovers"] = {str(pid): cmd for pid, cmd in kill_leftovers(plan["run_env"], plan["run_dir"]).items()}


def main(plan_path: str, result_path: str) -> int:
    def terminate(signum, _frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminate)
    plan = json.loads(Path(plan_path).read_text())
    result: dict = {}
    try:
        run(plan, result)
    finally:
        Path(result_path).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
