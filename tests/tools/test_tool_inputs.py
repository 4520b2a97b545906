"""tools/: no traceback and no hang from any tool (issue 53, item 6), each run as a user runs it, in its own process.

Special files (a FIFO, /dev/zero, a directory, a file over the bound) are refused before an open can wait on them;
an unreachable URL, a missing optional module, an unsupported destination, an existing file where a folder goes and
a --from-dir folder that is not the revision it claims end in one `Error:` line with the documented exit code
(docs/tools.md). Every wait is bounded by a timeout, so a hang fails the test instead of hanging it. Nothing here
needs the network: "unreachable" is a closed port of 127.0.0.1, the Hub a listing served from this process.
"""
from __future__ import annotations

import hashlib
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT
from tools import gptoss
from tools.gptoss import model_copy

TOOLS = REPO_ROOT / "tools"
TIMEOUT = 60
MODEL = "openai/gpt-oss-120b"
REVISION = "b5c939de8f754692c1647ca79fbf85e8c1e70f8a"  # FACTS.md: the pinned revision
DESTINATIONS = "a folder (made if missing; or file:///path), s3://BUCKET/PREFIX, or oci://REGISTRY/REPOSITORY[:TAG]"
VALUES_ALLOWED = "allowed: a regular file of at most 1 MiB (1048576 bytes), or - for standard input"
NEVER_ENDS = "not a regular file: reading it may wait forever or never end"


def run(tool: str, *args: str, cwd: Path = REPO_ROOT, python: str = sys.executable, options=(), env=None,
        stdin=subprocess.DEVNULL) -> subprocess.CompletedProcess:
    """tools/<tool>.py in its own process, bounded by TIMEOUT (a hang raises TimeoutExpired and fails the test)."""
    return subprocess.run([python, *options, str(TOOLS / f"{tool}.py"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=TIMEOUT, stdin=stdin, env=env)


def assert_one_error(result: subprocess.CompletedProcess, code: int, line: str) -> None:
    """Exit code `code`, exactly one stderr line starting with `Error:` (this one), no traceback, nothing printed."""
    assert "Traceback" not in result.stderr, result.stderr
    assert [text for text in result.stderr.splitlines() if text.startswith("Error:")] == [line], result.stderr
    assert (result.returncode, result.stdout) == (code, "")


def closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "values.fifo"
    os.mkfifo(path)
    return path


class TestSpecialFiles:
    # plan.py and predict.py read -f and --set-file through tools/gptoss/values.py: each path checked with os.stat
    # before any open (an open of a FIFO waits for a writer; Helm's --set-file reader read /dev/zero until the Go
    # runtime died).
    @pytest.mark.parametrize("case", ["fifo", "dev-zero-set-file", "directory", "huge-file", "dev-stdin-pipe",
                                      "predict-fifo"])
    def test_should_refuse_a_file_that_is_not_a_regular_file_of_the_bound(self, case, fifo, tmp_path):
        huge = tmp_path / "huge.yaml"
        tool, stdin = "plan", subprocess.DEVNULL
        if case == "fifo":
            args, line = ["-f", str(fifo)], f"values file {fifo}: a named pipe (FIFO), {NEVER_ENDS}; {VALUES_ALLOWED}"
        elif case == "dev-zero-set-file":
            args = ["-f", "values/agg.yaml", "--set-file", "x=/dev/zero"]
            line = (f"--set-file x=/dev/zero: a character device, {NEVER_ENDS}; allowed: a regular file of at most "
                    "1 MiB (1048576 bytes)")
        elif case == "directory":
            args = ["-f", str(tmp_path)]
            line = (f"values file {tmp_path}: a directory, not a regular file: reading it as a file fails; "
                    f"{VALUES_ALLOWED}")
        elif case == "huge-file":
            huge.write_bytes(b"a: " + b"x" * (4 << 20) + b"\n")
            args = ["-f", str(huge)]
            line = (f"values file {huge}: 4194308 bytes, larger than 1 MiB (1048576 bytes), the most this file may "
                    f"hold here; {VALUES_ALLOWED}")
        elif case == "dev-stdin-pipe":  # /dev/stdin is what the shell connected: a pipe here (`-` reads it, bounded)
            args, stdin = ["-f", "/dev/stdin"], subprocess.PIPE
            line = f"values file /dev/stdin: a named pipe (FIFO), {NEVER_ENDS}; {VALUES_ALLOWED}"
        else:
            tool, args = "predict", ["-f", str(fifo)]
            line = f"values file {fifo}: a named pipe (FIFO), {NEVER_ENDS}; {VALUES_ALLOWED}"
        assert_one_error(run(tool, *args, stdin=stdin), 2, "Error: " + line)


class TestInterpreter:
    SYSTEM = "/usr/bin/python3"

    @pytest.mark.parametrize("tool,isolated", [("plan", True), ("predict", True), ("mirror-model", True),
                                               ("plan", False), ("predict", False)],
                             ids=["plan-isolated", "predict-isolated", "mirror-model-isolated", "plan-no-user-site",
                                  "predict-no-user-site"])
    def test_should_name_the_set_up_command_under_the_system_interpreter(self, tool, isolated):
        """python3 tools/plan.py without the venv: one line naming the command that sets it up, exit code 2. -I (and
        -P) also leave the script's own folder off sys.path, so tools/gptoss is not found either."""
        if not Path(self.SYSTEM).exists():
            pytest.skip(f"no {self.SYSTEM} on this machine")
        has = subprocess.run([self.SYSTEM, "-s", "-c", "import helm_python"], capture_output=True, timeout=TIMEOUT)
        if has.returncode == 0 and tool != "mirror-model":
            pytest.skip(f"{self.SYSTEM} has helm-python-sdk: it is the project's interpreter here")
        result = run(tool, "-f", "values/agg.yaml", python=self.SYSTEM, options=["-I"] if isolated else ["-s", "-E"])
        set_up = "python3 -m venv .venv && .venv/bin/pip install -r requirements-test.txt"
        if isolated:
            line = (f"Error: {self.SYSTEM} does not look for modules beside tools/{tool}.py (python -I or -P): run "
                    f".venv/bin/python tools/{tool}.py (set up the venv once: {set_up})")
            assert_one_error(result, 2, line)
        else:
            assert_one_error(result, 2, f"Error: {self.SYSTEM} has no module 'helm_python', which tools/{tool}.py "
                                        f"needs: set up the project's venv once ({set_up}) and run .venv/bin/python "
                                        f"tools/{tool}.py")


class TestLastResort:
    # gptoss.run(), around each script's main(): an exception no tool expects is a bug, shown in one line.
    def test_should_print_one_line_and_exit_3_on_a_bug(self, capsys, monkeypatch):
        monkeypatch.delenv("GPT_OSS_DEBUG", raising=False)

        def broken():
            return {}["alert"]
        assert gptoss.run(broken, "tools/plan.py") == 3
        captured = capsys.readouterr()
        assert (captured.out, captured.err) == ("", "Error: tools/plan.py stopped on an unexpected KeyError: 'alert' "
                                                    "(a bug in the tool: run it again with GPT_OSS_DEBUG=1 for the "
                                                    "traceback, and report it)\n")

    def test_should_raise_with_gpt_oss_debug(self, monkeypatch):
        monkeypatch.setenv("GPT_OSS_DEBUG", "1")
        with pytest.raises(KeyError):
            gptoss.run(lambda: {}["alert"], "tools/plan.py")

    def test_should_end_in_one_line_on_ctrl_c(self, capsys):
        def interrupted():
            raise KeyboardInterrupt
        assert gptoss.run(interrupted, "tools/plan.py") == 130
        assert capsys.readouterr().err == "Error: interrupted\n"


def two_file_folder(folder: Path) -> Path:
    """The issue's folder: two files named like the revision's, nothing like it."""
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "gpt_oss"}\n')  # 26 bytes
    (folder / "model-00000-of-00014.safetensors").write_bytes(b"\0" * 100)
    return folder


# A stand-in for the Hub's listing of the revision (/api/models/<id>/revision/<sha>?blobs=true): sizes and hashes
# per file, original/ left out by the chart's ignore patterns. Not the real sizes: what matters is that the tool
# names what differs.
CONFIG = b'{"model_type": "gpt_oss"}\n'
LISTING = {"sha": REVISION, "siblings": [
    {"rfilename": "config.json", "size": len(CONFIG),
     "blobId": hashlib.sha1(b"blob %d\0" % len(CONFIG) + CONFIG).hexdigest()},
    {"rfilename": "model-00000-of-00014.safetensors", "size": 135, "lfs": {"size": 4000, "sha256": "a" * 64}},
    {"rfilename": "model-00001-of-00014.safetensors", "size": 135, "lfs": {"size": 5000, "sha256": "b" * 64}},
    {"rfilename": "original/model.safetensors", "size": 135, "lfs": {"size": 9000, "sha256": "c" * 64}},
]}


@pytest.fixture
def hub():
    """A Hub endpoint on 127.0.0.1 that lists LISTING for the pinned revision (and nothing else)."""
    class Listing(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            found = self.path == f"/api/models/{MODEL}/revision/{REVISION}?blobs=true"
            body = json.dumps(LISTING if found else {"error": "not found"}).encode()
            self.send_response(200 if found else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Listing)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class TestMirrorModel:
    def test_should_refuse_an_unreachable_vocabulary_url(self, tmp_path):
        url = f"http://127.0.0.1:{closed_port()}/o200k_base.tiktoken"
        result = run("mirror-model", "--tiktoken", url, str(tmp_path / "copy"), cwd=tmp_path)
        assert_one_error(result, 1, f"Error: cannot fetch the vocabulary --tiktoken {url} ([Errno 111] Connection "
                                    "refused); allowed: a reachable URL, --tiktoken FILE (a copy of "
                                    "o200k_base.tiktoken), or --no-tiktoken (then set model.tiktoken.url to a URL "
                                    "the pods reach)")
        assert not (tmp_path / "copy").exists()

    def test_should_refuse_an_unreachable_hub(self, tmp_path):
        endpoint = f"http://127.0.0.1:{closed_port()}"
        result = run("mirror-model", "--no-tiktoken", "--endpoint", endpoint, str(tmp_path / "copy"), cwd=tmp_path)
        assert_one_error(result, 1, f"Error: cannot reach {endpoint} ([Errno 111] Connection refused): check "
                                    "--endpoint (or HF_ENDPOINT), the proxy variables (HTTPS_PROXY) and --ca-bundle")

    def test_should_refuse_an_s3_destination_without_boto3_before_any_download(self, tmp_path):
        # boto3 hidden as if not installed: a sitecustomize on PYTHONPATH marks it missing in sys.modules.
        shim = tmp_path / "shim"
        shim.mkdir()
        (shim / "sitecustomize.py").write_text("import sys\nsys.modules['boto3'] = None  # boto3 not installed\n")
        env = {**os.environ, "PYTHONPATH": str(shim)}
        result = run("mirror-model", "--no-tiktoken", "--endpoint", f"http://127.0.0.1:{closed_port()}",
                     "s3://models/gpt-oss-120b", env=env, cwd=tmp_path)
        assert_one_error(result, 2, f"Error: {sys.executable} has no module 'boto3', which an s3:// destination "
                                    "needs: pip install boto3 into the interpreter you run "
                                    "(images/model-fetch/requirements.txt pins the version the chart uses), or set up "
                                    "the project's venv once (python3 -m venv .venv && .venv/bin/pip install -r "
                                    "requirements-test.txt) and add it there")

    @pytest.mark.parametrize("destination", ["ftp://host/x", "file://host/x"])
    def test_should_refuse_a_destination_scheme_it_does_not_write(self, destination, tmp_path):
        result = run("mirror-model", "--no-tiktoken", destination, cwd=tmp_path)
        why = ("a file:// URL names a local absolute path (file:///path)" if destination.startswith("file:")
               else f"{destination.split(':')[0]}:// is not a destination this tool writes to")
        assert_one_error(result, 2, f"Error: destination {destination}: {why}; allowed: {DESTINATIONS}")
        assert list(tmp_path.iterdir()) == []  # ftp://host/x once became ./ftp:/host/x

    def test_should_refuse_an_existing_file_as_destination(self, tmp_path):
        (tmp_path / "copy").write_text("mine\n")
        result = run("mirror-model", "--no-tiktoken", "copy", cwd=tmp_path)
        assert_one_error(result, 2, f"Error: destination copy: a regular file exists there, not a folder; allowed: "
                                    f"{DESTINATIONS}")
        assert (tmp_path / "copy").read_text() == "mine\n"

    @pytest.mark.parametrize("case", ["tiktoken-fifo", "ca-bundle-dev-zero", "from-dir-file", "tiktoken-ftp"])
    def test_should_refuse_a_path_argument_of_the_wrong_kind(self, case, fifo, tmp_path):
        (tmp_path / "file").write_text("x\n")
        args, line = {
            "tiktoken-fifo": (["--tiktoken", str(fifo)],
                              f"--tiktoken {fifo}: a named pipe (FIFO), {NEVER_ENDS}; allowed: a regular file of at "
                              "most 16 MiB (16777216 bytes)"),
            "ca-bundle-dev-zero": (["--no-tiktoken", "--ca-bundle", "/dev/zero"],
                                   f"--ca-bundle /dev/zero: a character device, {NEVER_ENDS}; allowed: a regular file "
                                   "of at most 1 MiB (1048576 bytes)"),
            "from-dir-file": (["--no-tiktoken", "--from-dir", "file"],
                              "--from-dir file: a regular file, not a directory; allowed: a folder holding the files "
                              "of the revision (and, from an earlier copy, its model-manifest.json)"),
            "tiktoken-ftp": (["--tiktoken", "ftp://host/o200k_base.tiktoken"],
                             "--tiktoken ftp://host/o200k_base.tiktoken: ftp:// is not fetched; allowed: an https:// "
                             "or http:// URL, or the path of a file"),
        }[case]
        assert_one_error(run("mirror-model", *args, "copy", cwd=tmp_path), 2, "Error: " + line)
        assert not (tmp_path / "copy").exists()


class TestFromDir:
    # --from-dir is checked against the revision it claims before install values are printed: the folder's
    # model-manifest.json (an earlier copy's), else the Hub's listing of the revision.
    def test_should_refuse_a_two_file_folder_against_the_hubs_listing(self, hub, tmp_path):
        folder = two_file_folder(tmp_path / "model")
        result = run("mirror-model", "--no-tiktoken", "--endpoint", hub, "--from-dir", str(folder), "copy",
                     cwd=tmp_path)
        assert_one_error(result, 1, f"Error: --from-dir {folder} is not {MODEL}@{REVISION} as the Hub's listing at "
                                    f"{hub} lists it (3 files, 9026 bytes): missing 1: "
                                    "model-00001-of-00014.safetensors; wrong size or kind 1: "
                                    "model-00000-of-00014.safetensors (100 bytes, listed 4000); allowed: a folder "
                                    "holding every file of that revision at its size (ignore patterns ['original/*', "
                                    "'metal/*']), e.g. what `hf download` or this tool wrote")
        assert not (tmp_path / "copy").exists()

    def test_should_refuse_a_two_file_folder_when_the_hub_is_unreachable(self, tmp_path):
        folder = two_file_folder(tmp_path / "model")
        endpoint = f"http://127.0.0.1:{closed_port()}"
        result = run("mirror-model", "--no-tiktoken", "--endpoint", endpoint, "--from-dir", str(folder), "copy",
                     cwd=tmp_path)
        assert_one_error(result, 1, f"Error: cannot check --from-dir {folder} against {MODEL}@{REVISION}: cannot "
                                    f"reach {endpoint} ([Errno 111] Connection refused): check --endpoint (or "
                                    "HF_ENDPOINT), the proxy variables (HTTPS_PROXY) and --ca-bundle; allowed: a Hub "
                                    "that lists the revision's files (--endpoint URL of a mirror, or HF_ENDPOINT), or "
                                    "a folder holding the model-manifest.json of a copy of that revision")

    @pytest.mark.parametrize("content", ["as-listed", "other-bytes"])
    def test_should_check_a_folder_against_its_manifest(self, content, tmp_path):
        folder = two_file_folder(tmp_path / "model")
        zeros = hashlib.sha256(b"\0" * 100).hexdigest()
        files = [{"path": "config.json", "size": 26, "sha256": hashlib.sha256(CONFIG).hexdigest()},
                 {"path": "model-00000-of-00014.safetensors", "size": 100,
                  "sha256": zeros if content == "as-listed" else hashlib.sha256(b"\1" * 100).hexdigest()}]
        (folder / model_copy.MANIFEST).write_bytes(model_copy.manifest_bytes(MODEL, REVISION, files))
        result = run("mirror-model", "--no-tiktoken", "--endpoint", f"http://127.0.0.1:{closed_port()}",
                     "--from-dir", str(folder), "copy", cwd=tmp_path)
        if content == "as-listed":
            assert (result.returncode, "Error" in result.stderr) == (0, False), result.stderr
            assert "values:\n  model:\n    id: openai/gpt-oss-120b\n" in result.stdout
            assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == [
                "config.json", "model-00000-of-00014.safetensors", "model-manifest.json"]
        else:
            assert_one_error(result, 1, f"Error: --from-dir {folder} is not {MODEL}@{REVISION} as "
                                        f"{folder / model_copy.MANIFEST} lists it (2 files, 126 bytes): different "
                                        "content 1: model-00000-of-00014.safetensors (sha256 differs: "
                                        f"{zeros}, model-manifest.json "
                                        f"lists {files[1]['sha256']}); allowed: a folder holding every file of that "
                                        "revision at its size (ignore patterns ['original/*', 'metal/*']), e.g. what "
                                        "`hf download` or this tool wrote")
