"""The GitHub workflows run what .ci/run runs, tier by tier, each job installing what its tier needs."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest
import yaml

from tests import conftest
from tests.helpers import REPO_ROOT, marks_may_select, marks_may_select_without

WORKFLOWS = sorted((REPO_ROOT / ".github" / "workflows").glob("*.yaml"))
CI_RUN = (REPO_ROOT / ".ci" / "run").read_text()
TEST_TIERS = (REPO_ROOT / "ci" / "test-tiers.sh").read_text()


def jobs() -> list[tuple[str, list[str]]]:
    """(workflow/job, the shell of each `run` step in order) of every job."""
    found = []
    for path in WORKFLOWS:
        for name, job in yaml.safe_load(path.read_text())["jobs"].items():
            found.append((f"{path.stem}/{name}", [step["run"] for step in job["steps"] if "run" in step]))
    return found


JOBS = jobs()
JOB_IDS = [name for name, _ in JOBS]


def installed(runs: list[str]) -> set[str]:
    return {name for run in runs for name in re.findall(r"-r (requirements-[a-z0-9]+\.txt)", run)}


def tiers(runs: list[str]) -> set[str]:
    """The test tiers a job runs: pytest's -m expression, or ci/lint.sh's offline tests."""
    selected = set()
    for run in runs:
        selected |= {m.group(1) for m in re.finditer(r'pytest[^\n]* -m "?([a-z0-9 ]+?)"?(?: -v)?$', run, re.M)}
        if "ci/lint.sh" in run and "SKIP_TESTS=1" not in run:
            selected.add("not e2e and not cluster")
    return selected


class TestWorkflows:
    def test_should_cover_every_tier_that_ci_runs(self):
        # .ci/run runs ci/test-tiers.sh: every tier in parallel workers, the serial, node and Argo CD tests, at once,
        # each group on a control plane of its own (README, docs/testing.md).
        assert "bash ci/test-tiers.sh" in CI_RUN
        assert '"$PYTHON" -m pytest -n 3 --dist loadfile -m "not serial and not node and not argocd"' in TEST_TIERS
        assert '"$PYTHON" -m pytest -m serial' in TEST_TIERS
        assert '"$PYTHON" -m pytest -m node' in TEST_TIERS
        assert '"$PYTHON" -m pytest -m argocd' in TEST_TIERS
        assert set().union(*(tiers(runs) for _, runs in JOBS)) == {"not e2e and not cluster", "e2e", "cluster"}

    def test_should_run_the_node_group_ahead_of_the_others(self):
        # The node's group waits on pods and is the longest: the others, and their planes, run behind it (nice, and in
        # sessions of their own at that niceness: python -m ci.cluster behind).
        assert re.search(r'^start_plane "\$node_plane" 0$', TEST_TIERS, re.M)
        assert re.search(r'^KUBECONFIG="\$node_plane/kubeconfig" GPT_OSS_NODE_STEPS_LOG="\$logs/node-steps.log" '
                         r'"\$PYTHON" -m pytest -m node', TEST_TIERS, re.M)
        behind = int(re.search(r"^behind=(\d+)$", TEST_TIERS, re.M).group(1))
        assert behind >= 10
        for plane in ("cluster", "serial", "gitops"):
            assert re.search(rf'^start_plane "\${plane}_plane" "\$behind" ', TEST_TIERS, re.M), plane
            assert re.search(rf'^KUBECONFIG="\${plane}_plane/kubeconfig" run_behind "\$PYTHON" -m pytest',
                             TEST_TIERS, re.M), plane
        assert re.search(r'^run_behind\(\) \{ "\$PYTHON" -m ci\.cluster behind "\$behind" -- "\$@"; \}$', TEST_TIERS, re.M)
        assert "python -m ci.cluster behind 10 -- bash -c 'python -m venv .venv-checkov" in CI_RUN

    def test_should_time_the_offline_tier_alone(self):
        # The set-up's background jobs (the venvs) are all waited for before the offline tier, whose time is the
        # budget's; the Go parts' build starts only after it.
        lines = CI_RUN.splitlines()
        offline = next(i for i, line in enumerate(lines) if re.search(r'-m "not e2e and not cluster" -n 2', line))
        started = [re.match(r"(\w+_pid)=\$!$", lines[i + 1]).group(1) for i, line in enumerate(lines[:offline])
                   if line.rstrip().endswith("&")]
        assert started == ["dynamo_16_pid", "dynamo_17_pid", "main_venv_pid"]
        waited = "\n".join(lines[:offline])
        for pid in started:
            assert re.search(rf'^for part in .*"\${pid}"', waited, re.M), pid
        assert re.search(r'^  wait "\$\{part#\*:\}"', waited, re.M)
        assert CI_RUN.index("go-parts build") > CI_RUN.index('-m "not e2e and not cluster" -n 2')

    def test_should_install_what_ci_installs_across_the_jobs(self):
        ci_files = set(re.findall(r"-r (requirements-[a-z0-9]+\.txt)", CI_RUN))
        assert ci_files == {"requirements-pip.txt", "requirements-test.txt", "requirements-cluster.txt",
                            "requirements-e2e.txt", "requirements-predict.txt", "requirements-checkov.txt"}
        assert set().union(*(installed(runs) for _, runs in JOBS)) >= ci_files - {"requirements-checkov.txt"}

    @pytest.mark.parametrize("name,runs", JOBS, ids=JOB_IDS)
    def test_should_install_each_tiers_requirements(self, name, runs):
        # A job that lints or tests needs the light set; the release's push job does neither (TestReleasePipeline).
        wanted = {"requirements-test.txt"} if tiers(runs) or any("ci/lint.sh" in run for run in runs) else set()
        wanted |= {"requirements-e2e.txt"} if "e2e" in tiers(runs) else set()
        wanted |= {"requirements-cluster.txt"} if "cluster" in tiers(runs) else set()
        assert wanted <= installed(runs)
        assert all((REPO_ROOT / name).is_file() for name in installed(runs))

    @pytest.mark.parametrize("name,runs", JOBS, ids=JOB_IDS)
    def test_should_fetch_the_pinned_crds_before_the_tests(self, name, runs):
        tests_at = [i for i, run in enumerate(runs) if tiers([run])]
        fetch_at = [i for i, run in enumerate(runs) if "python -m ci.cluster crds" in run]
        if tests_at:
            assert fetch_at and fetch_at[0] < tests_at[0], f"{name} runs tests without python -m ci.cluster crds first"

    def test_should_see_a_tier_in_a_pytest_command(self):
        # The parser above can fail: it reads the -m expression of each form the workflows use.
        assert tiers(['python -m pytest -m "not e2e and not cluster"']) == {"not e2e and not cluster"}
        assert tiers(["python -m pytest -m cluster -v", "SKIP_TESTS=1 PYTHON=python bash ci/lint.sh"]) == {"cluster"}
        assert tiers(["bash ci/lint.sh"]) == {"not e2e and not cluster"}


# --- The supply chain of CI (issue 55): what a job runs is pinned, and the registry token sits beside nothing else. --

WORKFLOW_TEXTS = {path.stem: path.read_text() for path in WORKFLOWS}
RELEASE = yaml.safe_load(WORKFLOW_TEXTS["release"])
# The shell CI runs outside the workflows: .ci/run and every script under ci/.
CI_SCRIPTS = {str(path.relative_to(REPO_ROOT)): path.read_text()
              for path in [REPO_ROOT / ".ci" / "run", *sorted((REPO_ROOT / "ci").rglob("*.sh"))]}
KIND_SETUP = CI_SCRIPTS["ci/cluster/kind-setup.sh"]
MODEL_FETCH = REPO_ROOT / "images" / "model-fetch"

# owner/repo[/path]@<commit SHA>  # <the tag it was>
PINNED_ACTION = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}\s+#\s*v\d+(\.\d+)*$")
USES_LINE = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<value>.*?)\s*$", re.M)


def steps(workflow: dict):
    for name, job in workflow["jobs"].items():
        for step in job["steps"]:
            yield name, step


def unpinned_actions(text: str) -> list[str]:
    """The `uses:` of a workflow's text not pinned to a commit SHA with the tag it stands for in a comment."""
    return [m["value"] for m in USES_LINE.finditer(text) if not PINNED_ACTION.match(m["value"])]


def unchecked_downloads(shell: str) -> list[str]:
    """The curl and wget commands of a shell text whose file no `sha256sum --check` in the next lines verifies, or
    whose download is piped into another command (a pipe runs it before any check)."""
    lines = shell.splitlines()
    found = []
    for i, line in enumerate(lines):
        if line.lstrip().startswith("#"):
            continue
        command = re.search(r"(?<![\w./-])(curl|wget)\s", line)
        if not command:
            continue
        piped = re.search(r"(?<!\|)\|(?!\|)", line[command.start():])
        checked = re.search(r"sha256sum (--check|-c)\b", "\n".join(lines[i + 1:i + 4]))
        if piped or not checked:
            found.append(line.strip())
    return found


def unpinned_pip(shell: str) -> list[str]:
    """The `pip install` commands that install pip itself other than from the hash-locked requirements-pip.txt
    (`--upgrade pip`, `-U pip`, `pip`, `pip>=...`, even `pip==X` without its hashes)."""
    found = []
    for line in shell.splitlines():
        _, install, arguments = line.partition("pip install")
        if install and any(re.fullmatch(r"pip([<>=!~].*)?", word.strip("'\"")) for word in arguments.split()):
            found.append(line.strip())
    return found


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked(path: Path) -> dict[str, tuple[str | None, list[str]]]:
    """{name: (pinned version, sha256 hashes)} of a requirements file, continuation lines joined as pip joins them."""
    entries = {}
    for line in re.sub(r"(?m)^([^#\n]*)\\\n", r"\1 ", path.read_text()).splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        pin = re.fullmatch(r"([A-Za-z0-9_.-]+)==([^\s;]+)", words[0])
        hashes = [w.removeprefix("--hash=sha256:") for w in words[1:] if re.fullmatch(r"--hash=sha256:[0-9a-f]{64}", w)]
        entries[canonical(pin[1]) if pin else words[0]] = (pin[2] if pin else None, hashes)
    return entries


def plain_pins(path: Path) -> dict[str, str]:
    return {canonical(name): version for name, version in
            re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)$", path.read_text(), re.M)}


class TestSupplyChain:
    @pytest.mark.parametrize("workflow", sorted(WORKFLOW_TEXTS))
    def test_should_pin_every_action_by_commit_sha_with_its_tag_in_a_comment(self, workflow):
        text = WORKFLOW_TEXTS[workflow]
        used = [step["uses"] for _, step in steps(yaml.safe_load(text)) if "uses" in step]
        assert len(USES_LINE.findall(text)) == len(used), "a `uses:` the line pattern does not see"
        assert unpinned_actions(text) == []

    def test_should_pin_each_action_to_one_commit_across_the_workflows(self):
        pins = {}
        for text in WORKFLOW_TEXTS.values():
            for m in USES_LINE.finditer(text):
                action, _, pin = m["value"].partition("@")
                pins.setdefault(action, set()).add(pin)
        assert {action: pin for action, pin in pins.items() if len(pin) > 1} == {}

    @pytest.mark.parametrize("workflow", sorted(WORKFLOW_TEXTS))
    def test_should_leave_no_token_in_the_git_config_of_any_checkout(self, workflow):
        checkouts = [(job, step.get("with") or {}) for job, step in steps(yaml.safe_load(WORKFLOW_TEXTS[workflow]))
                     if step.get("uses", "").startswith("actions/checkout@")]
        assert checkouts
        assert [job for job, options in checkouts if options.get("persist-credentials") is not False] == []

    def test_should_give_the_write_permission_to_the_push_job_alone(self):
        assert RELEASE["permissions"] == {"contents": "read"}
        writers = {name for name, job in RELEASE["jobs"].items() if "write" in (job.get("permissions") or {}).values()}
        assert writers == {"push"}
        assert RELEASE["jobs"]["push"]["permissions"] == {"contents": "read", "packages": "write"}
        for path in WORKFLOWS:
            workflow = yaml.safe_load(path.read_text())
            assert "write" not in (workflow.get("permissions") or {}).values(), path.name
            if path.stem != "release":
                assert all("write" not in (job.get("permissions") or {}).values()
                           for job in workflow["jobs"].values()), path.name

    def test_should_reach_the_token_only_from_the_push_job(self):
        for name, job in RELEASE["jobs"].items():
            assert ("secrets." in yaml.safe_dump(job)) is (name == "push"), name

    def test_should_test_in_one_job_and_push_in_another(self):
        test, push = RELEASE["jobs"]["test"], RELEASE["jobs"]["push"]
        test_runs = [step["run"] for step in test["steps"] if "run" in step]
        push_runs = [step["run"] for step in push["steps"] if "run" in step]
        assert any('pytest -m "not e2e and not cluster"' in run for run in test_runs)
        assert any("ci/lint.sh" in run for run in test_runs)
        assert push["needs"] in ("test", ["test"])
        assert not tiers(push_runs) and not any("pytest" in run or "ci/lint.sh" in run for run in push_runs)
        # The push job packages again and pushes only the bytes the test job tested.
        assert "${{ needs.test.outputs.archive-sha256 }}" in yaml.safe_dump(push)
        assert any("ci.release package" in run and "sha256sum --check" in run for run in push_runs)

    def test_should_install_only_hash_locked_requirements_in_the_push_job(self):
        push_runs = [step["run"] for step in RELEASE["jobs"]["push"]["steps"] if "run" in step]
        installs = [line.strip() for run in push_runs for line in run.splitlines() if "pip install" in line]
        assert installs, "the push job installs its requirements"
        for install in installs:
            assert "--require-hashes" in install, install
            files = re.findall(r"-r (\S+)", install)
            assert files and len(files) == len(re.findall(r"\s-r\s|\s--requirement\s", f" {install} ")), install
            for name in files:
                entries = locked(REPO_ROOT / name)
                assert entries and all(version and hashes for version, hashes in entries.values()), name
        assert installed(push_runs) == {"requirements-pip.txt", "requirements-release.txt"}

    def test_should_push_with_the_helm_sdk_the_tests_ran(self):
        release = locked(REPO_ROOT / "requirements-release.txt")
        assert set(release) == {"helm-python-sdk", "pyyaml"}
        tested = plain_pins(REPO_ROOT / "requirements-test.txt")
        assert {name: version for name, (version, _) in release.items()} == {name: tested[name] for name in release}

    def test_should_pin_pip_by_version_and_hash(self):
        entries = locked(REPO_ROOT / "requirements-pip.txt")
        assert list(entries) == ["pip"]
        version, hashes = entries["pip"]
        assert re.fullmatch(r"\d+(\.\d+)+", version) and hashes

    def test_should_pin_uv_by_version_and_hash(self):
        entries = locked(REPO_ROOT / "requirements-uv.txt")
        assert list(entries) == ["uv"]
        version, hashes = entries["uv"]
        assert re.fullmatch(r"\d+(\.\d+)+", version) and len(hashes) >= 2

    def test_should_run_uv_only_as_installed_from_its_pin(self):
        # every uv install goes through ci/uv-install.sh, which installs uv from its hash-locked file first
        helper = CI_SCRIPTS["ci/uv-install.sh"]
        pinned = r'^"\$venv/bin/python" -m pip install --quiet --require-hashes -r requirements-uv\.txt$'
        assert re.search(pinned, helper, re.M)
        assert helper.count('"$venv/bin/uv" pip install') == 1
        for name, text in CI_SCRIPTS.items():
            if name != "ci/uv-install.sh":
                assert "uv pip" not in text and "/uv " not in text, name
        assert "bash ci/uv-install.sh .venv -r requirements-test.txt" in CI_RUN

    @pytest.mark.parametrize("script", sorted(CI_SCRIPTS))
    def test_should_install_pinned_pip_in_every_venv_a_script_makes(self, script):
        text = CI_SCRIPTS[script]
        assert unpinned_pip(text) == []
        venvs = len(re.findall(r"-m venv\b", text))
        assert len(re.findall(r"pip install (?:--quiet )?--require-hashes -r requirements-pip\.txt", text)) == venvs

    @pytest.mark.parametrize("name,runs", JOBS, ids=JOB_IDS)
    def test_should_install_pinned_pip_before_anything_else_in_a_job(self, name, runs):
        installs = [line.strip() for run in runs for line in run.splitlines() if "pip install" in line]
        assert unpinned_pip("\n".join(runs)) == []
        if installs:
            assert installs[0] == "python -m pip install --require-hashes -r requirements-pip.txt"

    @pytest.mark.parametrize("where", sorted(CI_SCRIPTS) + [f"{path.name}: run steps" for path in WORKFLOWS])
    def test_should_check_every_download_against_a_pinned_sha256(self, where):
        if where in CI_SCRIPTS:
            shell = CI_SCRIPTS[where]
        else:
            shell = "\n".join(step["run"] for _, step in steps(yaml.safe_load(WORKFLOW_TEXTS[where.split(".")[0]]))
                              if "run" in step)
        assert unchecked_downloads(shell) == []

    def test_should_pin_the_sha256_of_each_tool_for_amd64_and_arm64(self):
        table = dict(re.findall(r"^\s*\[([a-z]+-(?:amd64|arm64))\]=([0-9a-f]{64})$", KIND_SETUP, re.M))
        tools = re.findall(r'^\s*download "\S+" "\S+" "\$\{SHA256\[([a-z]+)-\$arch\]\}"$', KIND_SETUP, re.M)
        assert sorted(tools) == ["helm", "kind", "kubectl"]
        assert sorted(table) == sorted(f"{tool}-{arch}" for tool in tools for arch in ("amd64", "arm64"))
        # The download is kept only after its check: fetched aside, checked, then moved into place.
        body = re.search(r"^download\(\) \{\n(.*?)^\}", KIND_SETUP, re.M | re.S)[1]
        assert body.index("curl") < body.index("sha256sum --check") < body.index("mv ")
        # The helm versions of lint-test's matrix, each with its archive's sha256.
        matrix = yaml.safe_load(WORKFLOW_TEXTS["lint-test"])["jobs"]["lint-test"]["strategy"]["matrix"]["include"]
        assert [entry["helm"] for entry in matrix] == ["v3.2.0", "v4.2.3"]
        assert all(re.fullmatch(r"[0-9a-f]{64}", entry["helm-sha256"]) for entry in matrix)

    def test_should_pin_the_kind_node_image_by_digest(self):
        image = re.search(r"^KIND_NODE_IMAGE=(\S+)$", KIND_SETUP, re.M)[1]
        assert re.fullmatch(r"kindest/node:v\d+\.\d+\.\d+@sha256:[0-9a-f]{64}", image)
        assert '--image "$KIND_NODE_IMAGE"' in KIND_SETUP

    def test_should_hash_lock_every_package_of_the_model_fetch_image(self):
        lock = locked(MODEL_FETCH / "requirements-locked.txt")
        assert [name for name, (version, hashes) in lock.items() if not version or not hashes] == []
        # The same pins as requirements.txt, which the e2e tier and the node tests install.
        assert {name: version for name, (version, _) in lock.items()} == plain_pins(MODEL_FETCH / "requirements.txt")
        # The compiled ones name a wheel per architecture at least (amd64 and arm64: GB200 nodes are arm64).
        assert all(len(lock[name][1]) >= 2 for name in ("hf-xet", "pyyaml"))
        containerfile = (MODEL_FETCH / "Containerfile").read_text()
        assert re.search(r"^COPY requirements-locked\.txt /tmp/model-fetch-requirements\.txt$", containerfile, re.M)
        assert re.search(r"--require-hashes --only-binary :all: -r /tmp/model-fetch-requirements\.txt", containerfile)

    def test_should_find_what_each_rule_looks_for(self, tmp_path):
        # The checkers above can fail: each finds the fault it is written for, and passes its fixed form.
        assert unpinned_actions("    - uses: actions/checkout@v4\n") == ["actions/checkout@v4"]
        assert unpinned_actions(f"    - uses: actions/checkout@{'a' * 40}\n") == [f"actions/checkout@{'a' * 40}"]
        assert unpinned_actions(f"    - uses: actions/checkout@{'a' * 40}  # v4.2.2\n") == []
        assert unchecked_downloads('curl -fsSL "$url" | tar -xz') == ['curl -fsSL "$url" | tar -xz']
        assert unchecked_downloads('curl -fsSLo f "$url"\nchmod +x f') == ['curl -fsSLo f "$url"']
        assert unchecked_downloads('curl -fsSLo f "$url"\necho "$sum  f" | sha256sum --check') == []
        assert unchecked_downloads('wget -q "$url"') == ['wget -q "$url"']
        for line in ("python -m pip install --quiet --upgrade pip", "pip install -U pip setuptools",
                     "python -m pip install 'pip>=24'", "python -m pip install pip==26.3"):
            assert unpinned_pip(line) == [line]
        assert unpinned_pip("python -m pip install --require-hashes -r requirements-pip.txt") == []
        (tmp_path / "r.txt").write_text("# x \\\na==1.0 \\\n    --hash=sha256:" + "0" * 64 + "\nb==2.0\nc\n")
        assert locked(tmp_path / "r.txt") == {"a": ("1.0", ["0" * 64]), "b": ("2.0", []), "c": (None, [])}


def test_should_keep_the_process_title_in_a_pytest_xdist_worker(worker_id):
    """Helm's Go SDK reads its server-side-apply field manager from the process title (tests/conftest.py)."""
    if worker_id == "master":
        pytest.skip("not in a pytest-xdist worker")
    title = (Path("/proc/self/cmdline")).read_bytes()
    assert b"pytest-xdist" not in title, title


def test_should_start_the_workers_helm_at_gogc_800_and_their_children_at_gos_default_beside_servers(worker_id,
                                                                                                      request):
    """Helm's Go runtime reads GOGC from the environment its process started with (tests/conftest.py): a worker's
    starts with GOGC=800; what its tests start inherits it in the offline tier's run only (no servers there)."""
    if worker_id == "master":
        pytest.skip("not in a pytest-xdist worker")
    started_with = Path("/proc/self/environ").read_bytes().split(b"\0")
    if b"GPT_OSS_HELM_GOGC=800" not in started_with and any(entry.startswith(b"GOGC=") for entry in started_with):
        pytest.skip("GOGC was set for the whole run: the workers keep it")
    assert b"GOGC=800" in started_with, "the worker's Helm started at Go's default GOGC"
    child = subprocess.run(["env"], capture_output=True, text=True, check=True).stdout.splitlines()
    inherited = [line for line in child if line.startswith(("GOGC=", "GPT_OSS_HELM_GOGC="))]
    offline = not marks_may_select(request.config.option.markexpr, "cluster") and not marks_may_select(
        request.config.option.markexpr, "e2e")
    assert inherited == (["GOGC=800"] if offline else [])


@pytest.mark.parametrize("markexpr, selectable", [
    ("not e2e and not cluster", False), ("not cluster", False), ("e2e and not cluster", False),
    ("", True), ("cluster", True), ("serial", True), ("node or argocd", True),
    ("not serial and not node and not argocd", True), ("not (e2e or serial)", True)])
def test_should_tell_whether_m_can_select_a_cluster_test(markexpr, selectable):
    assert marks_may_select(markexpr, "cluster") is selectable


@pytest.mark.parametrize("markexpr, selectable", [
    ("serial", False), ("node", False), ("argocd", False), ("node or argocd", False), ("serial and e2e", False),
    ("", True), ("not serial and not node and not argocd", True), ("cluster", True), ("not e2e and not cluster", True),
    ("serial or cluster", True)])
def test_should_tell_whether_m_can_select_a_test_without_the_alone_marks(markexpr, selectable):
    assert marks_may_select_without(markexpr, ("serial", "node", "argocd")) is selectable


class TestAloneGroupsCollection:
    """The serial, node and Argo CD groups collect only the folders whose modules carry their marks."""

    @staticmethod
    def ignored(path, markexpr: str):
        config = types.SimpleNamespace(option=types.SimpleNamespace(markexpr=markexpr))
        return conftest.pytest_ignore_collect(path, config)

    @pytest.mark.parametrize("markexpr", ["serial", "node", "argocd"])
    def test_should_skip_every_other_folder_in_an_alone_group(self, markexpr):
        tests = REPO_ROOT / "tests"
        for folder in ("chart", "ci", "docs", "tools", "examples"):
            assert self.ignored(tests / folder, markexpr) is True, folder
        assert self.ignored(tests / "cluster", markexpr) is None
        assert self.ignored(tests / "e2e", markexpr) is None

    def test_should_collect_every_folder_in_the_other_groups(self):
        for markexpr in ("not serial and not node and not argocd", ""):
            assert self.ignored(REPO_ROOT / "tests" / "chart", markexpr) is None, markexpr

    def test_should_find_the_alone_marks_only_in_their_folders(self):
        carries = re.compile(r"mark\.(?:serial|node|argocd)\b|add_marker\([\"'](?:serial|node|argocd)[\"']")
        outside = [str(path.relative_to(REPO_ROOT)) for path in (REPO_ROOT / "tests").rglob("*.py")
                   if not any(path.is_relative_to(folder) for folder in conftest.ALONE_FOLDERS)
                   and carries.search(path.read_text())]
        assert outside == []
        inside = [path for folder in conftest.ALONE_FOLDERS for path in folder.rglob("test_*.py")
                  if carries.search(path.read_text())]
        assert len(inside) >= 9, inside


def test_should_not_collect_the_cluster_tier_when_m_selects_none_of_it(request):
    if marks_may_select(request.config.option.markexpr, "cluster"):
        pytest.skip("this run's -m can select cluster tests")
    # collecting a folder registers its conftest as a plugin (a test importing one of its modules does not)
    cluster = str(REPO_ROOT / "tests" / "cluster")
    assert [plugin.__name__ for plugin in request.config.pluginmanager.get_plugins()
            if str(getattr(plugin, "__file__", "")).startswith(cluster)] == []


def test_should_collect_every_offline_test_module(request):
    """A pytest plugin of an installed package (ai-dynamo's dynamo.trtllm ignores test_trtllm_*.py) must not drop
    a module silently: a whole-suite run collects every offline test module (every tests/**/test_*.py outside the
    cluster and e2e tiers' folders)."""
    config = request.config
    whole_suite = [str(arg).rstrip("/") for arg in config.args] in (["tests"], [str(REPO_ROOT / "tests")])
    if not whole_suite or config.option.keyword or config.option.deselect:
        pytest.skip("runs only when the whole suite is collected (python -m pytest, or pytest tests)")
    collected = {item.path for item in request.session.items}
    tiers = {REPO_ROOT / "tests" / "cluster", REPO_ROOT / "tests" / "e2e"}
    offline = [p for p in (REPO_ROOT / "tests").rglob("test_*.py") if not tiers & set(p.parents)]
    assert len(offline) >= 40
    assert sorted(p.relative_to(REPO_ROOT).as_posix() for p in offline if p not in collected) == []


def test_should_hand_pytest_xdist_the_longest_modules_first():
    """tests/conftest.py: in a pytest-xdist worker, heavy modules by their seconds, then the others by their number of
    tests; each file's tests stay together and in order. Without workers the order stays."""

    class Item:
        def __init__(self, nodeid: str, seconds: int | None = None):
            self.nodeid, self.seconds = nodeid, seconds

        def get_closest_marker(self, name):
            return pytest.mark.heavy(self.seconds).mark if name == "heavy" and self.seconds else None

    def items():
        return [Item("a.py::one"), Item("b.py::one", 60), Item("c.py::one"), Item("c.py::two"),
                Item("d.py::one", 800), Item("d.py::two", 800), Item("e.py::one")]

    worker = items()
    conftest.pytest_collection_modifyitems(types.SimpleNamespace(workerinput={}), worker)
    assert [item.nodeid for item in worker] == ["d.py::one", "d.py::two", "b.py::one", "c.py::one", "c.py::two",
                                                "a.py::one", "e.py::one"]
    alone = items()
    conftest.pytest_collection_modifyitems(types.SimpleNamespace(), alone)
    assert [item.nodeid for item in alone] == [item.nodeid for item in items()]


def test_should_mark_as_extras_each_offline_module_that_asks_what_is_installed():
    """CI's cluster plane leaves out the offline tests that passed in the light venv (GPT_OSS_SKIP_PASSED,
    tests/conftest.py) unless marked extras: a module that asks whether a package is installed (find_spec) to choose
    what it checks has the mark (a skip needs none: a skipped test runs again anyway)."""
    tiers = {REPO_ROOT / "tests" / "cluster", REPO_ROOT / "tests" / "e2e"}
    asking = [p.relative_to(REPO_ROOT).as_posix() for p in (REPO_ROOT / "tests").rglob("test_*.py")
              if not tiers & set(p.parents) and "find_spec(" in p.read_text()]
    assert "tests/docs/test_commands.py" in asking
    assert [path for path in asking if "mark.extras" not in (REPO_ROOT / path).read_text()] == []


class TestPassedElsewhere:
    """GPT_OSS_RECORD_PASSED and GPT_OSS_SKIP_PASSED (tests/passed_elsewhere.py) on a scratch suite, with pytest-xdist."""

    SUITE = '''
import pytest

def test_passes():
    pass

def test_fails():
    assert False

def test_skips():
    pytest.skip("not here")

@pytest.mark.extras
def test_passes_with_extras():
    pass
'''

    def run(self, folder, *options, **env):
        # the project's pytest settings and this plugin alone (no other plugin's start-up): a second, not ten; one
        # pytest-xdist worker, whose reports reach the controller as CI's two workers' do
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "xdist", "-p", "tests.passed_elsewhere",
                               "-p", "no:cacheprovider", "-n", "1", *options, "--rootdir", str(folder),
                               "-c", str(REPO_ROOT / "pyproject.toml"), "--confcutdir", str(folder),
                               str(folder / "test_scratch.py")],
                              capture_output=True, text=True, cwd=REPO_ROOT, timeout=120,
                              env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **env})

    def test_should_record_the_passed_and_leave_them_out_but_extras(self, tmp_path):
        (tmp_path / "test_scratch.py").write_text(self.SUITE)
        record = tmp_path / "passed.txt"
        first = self.run(tmp_path, GPT_OSS_RECORD_PASSED=str(record))
        assert first.returncode == 1, first.stdout[-2000:]
        assert record.read_text().splitlines() == ["test_scratch.py::test_passes",
                                                   "test_scratch.py::test_passes_with_extras"]
        second = self.run(tmp_path, "-rA", GPT_OSS_SKIP_PASSED=str(record))
        assert "2 tests that passed in passed.txt are not run again (those marked extras are)" in second.stdout
        ran = sorted(re.findall(r"^(PASSED|FAILED|SKIPPED) .*?::?(test_\w+)", second.stdout, re.M))
        assert ran == [("FAILED", "test_fails"), ("PASSED", "test_passes_with_extras")], second.stdout[-2000:]


def test_should_give_a_worker_its_next_file_at_its_last_pending_test(monkeypatch):
    """tests/conftest.py's scheduler: a worker with two tests of a file pending gets nothing more (pytest-xdist's own
    would queue the next file behind them); with one left it gets the next file."""
    from xdist.scheduler import loadscope

    monkeypatch.setattr(loadscope, "parse_tx_spec_config", lambda config: ["popen", "popen"])
    config = types.SimpleNamespace(getvalue=lambda name: {"dist": "loadfile"}[name])
    scheduler = conftest.pytest_xdist_make_scheduler(config, None)
    assert conftest.pytest_xdist_make_scheduler(types.SimpleNamespace(getvalue=lambda name: "load"), None) is None
    class Node:
        shutting_down = False
    node = Node()
    given = []
    monkeypatch.setattr(scheduler, "_assign_work_unit", lambda worker: given.append(worker))
    scheduler.workqueue["tests/b.py"] = {"tests/b.py::one": False}
    scheduler.assigned_work[node] = {"tests/a.py": {"tests/a.py::long": False, "tests/a.py::tally": False}}
    scheduler._reschedule(node)
    assert given == []
    scheduler.assigned_work[node]["tests/a.py"]["tests/a.py::long"] = True
    scheduler._reschedule(node)
    assert given == [node]
