"""The one-node-per-machine lock: a node whose session was killed must not block the next run (CI failed on one)."""
import json
import os

from ci.cluster import node, processes


def _record(state, pid, start_time):
    state.mkdir(parents=True, exist_ok=True)
    (state / "pids.json").write_text(json.dumps({"kubelet": {"pid": pid, "start_time": start_time}}))


class TestNodeLock:
    def test_should_clear_a_lock_whose_processes_all_exited(self, tmp_path, monkeypatch):
        lock = tmp_path / "gpt-oss-node.lock"
        monkeypatch.setattr(node, "LOCK", lock)
        other = tmp_path / "killed-session"
        _record(other, os.getpid(), 1)  # this pid, another start time: a reused pid is not the node's process
        lock.write_text(str(other))
        assert node.clear_stale_lock(other, None) is True
        assert not lock.exists()

    def test_should_keep_a_lock_whose_process_still_runs(self, tmp_path, monkeypatch):
        lock = tmp_path / "gpt-oss-node.lock"
        monkeypatch.setattr(node, "LOCK", lock)
        other = tmp_path / "running-session"
        _record(other, os.getpid(), processes.start_time(os.getpid()))
        lock.write_text(str(other))
        assert node.clear_stale_lock(other, None) is False
        assert lock.read_text() == str(other)
