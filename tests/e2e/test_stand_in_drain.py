"""The node tier's serving stand-in drains on SIGTERM the way the servers it stands in for do (docs/operations.md,
"Where the servers' shutdown comes from"): as trtllm-serve (uvicorn's shutdown) its listener closes at once, so a new
request is refused, and the streams it had accepted run to their end before it exits 0; as a Dynamo frontend pod the
real 1.2.1 frontend drains them with its own timeout. Runs tests/e2e/stand_in_drain_probe.py in a private network
namespace, with the e2e tier's tokenizer as the checkpoint.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT

# heavy: its seconds in CI's cluster plane (python -m ci.cluster timings), so that pytest-xdist starts it before the
# quick files and it does not run last while the other workers idle (tests/conftest.py)
pytestmark = [pytest.mark.e2e, pytest.mark.heavy(25)]
PROBE = "tests.e2e.stand_in_drain_probe"  # run as a module from the checkout's root


def drain(mode: str, tokenizer_dir: Path, tmp_path: Path) -> dict:
    model = tmp_path / "gpt-oss-120b"
    shutil.copytree(tokenizer_dir, model)
    result = subprocess.run(["unshare", "--net", "--", "sh", "-c", 'ip link set lo up && exec "$@"', "sh",
                             sys.executable, "-m", PROBE, str(model), str(tmp_path), mode],
                            capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    log = (tmp_path / "stand-in.log").read_text(errors="replace") if (tmp_path / "stand-in.log").exists() else ""
    last = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert last.startswith("{") and "error" not in json.loads(last), f"{result.stdout}\n{result.stderr}\n{log}"
    return {**json.loads(last), "log": log}


class TestStandInDrain:
    def test_should_refuse_new_requests_and_finish_open_streams_as_trtllm_serve(self, e2e_python, tokenizer_dir,
                                                                               tmp_path):
        found = drain("trtllm-serve", tokenizer_dir, tmp_path)
        assert [s["outcome"] for s in found["streams"]] == ["completed"] * 3, found
        # The streams outlived the signal: they were open when it came.
        assert min(s["seconds"] for s in found["streams"]) > 1.5, found
        assert found["new"]["outcome"] == "failed" and "ConnectionRefusedError" in found["new"]["error"], found
        assert found["exit"] == 0, found
        assert "SIGTERM: listener closed, draining 3 open requests" in found["log"], found["log"]

    def test_should_let_the_frontend_drain_its_streams_as_a_dynamo_frontend_pod(self, e2e_python, tokenizer_dir,
                                                                              tmp_path):
        found = drain("frontend", tokenizer_dir, tmp_path)
        assert [s["outcome"] for s in found["streams"]] == ["completed"] * 3, found
        assert min(s["seconds"] for s in found["streams"]) > 1.5, found
        assert found["exit"] == 0, found
        # The frontend alone got the signal; the mocker stopped after it.
        assert "frontend drains its requests first" in found["log"], found["log"]
        assert "frontend exited with 0 after" in found["log"], found["log"]
