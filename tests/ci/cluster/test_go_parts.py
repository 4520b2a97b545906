"""The cluster tier's own parts: Go programs built from pinned modules (python -m ci.cluster go-parts), the processes the tiers
start and must end (ci/cluster/processes.py), and the node's socket paths (ci/cluster/node)."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ci.cluster import dynamo_operator as OPERATOR
from ci.cluster import go_parts as GO_PARTS
from ci.cluster import node as NODE
from ci.cluster import processes as PROCESSES
from ci.cluster.node import policies as POLICIES
from tests.helpers import REPO_ROOT, skip_for_missing_part
from tools.gptoss.yaml_text import load_yaml



class TestGoParts:
    def test_should_pin_kubernetes_1_37_and_etcd_3_6(self):
        assert GO_PARTS.pinned_versions("kubernetes")["k8s.io/kubernetes"] == "v1.37.2"
        # etcd's own module: its pin does not move with Kubernetes' (1.37 requires etcd's v3.7 modules)
        assert GO_PARTS.pinned_versions("kubernetes/etcd")["go.etcd.io/etcd/server/v3"] == "v3.6.16"

    def test_should_pin_the_staging_repositories_at_the_release_of_kubernetes(self):
        versions = GO_PARTS.pinned_versions("kubernetes")
        for module in ("k8s.io/api", "k8s.io/apimachinery", "k8s.io/apiserver", "k8s.io/client-go",
                       "k8s.io/component-base", "k8s.io/kubelet", "k8s.io/kube-proxy", "k8s.io/cri-api"):
            assert versions[module] == "v0.37.2", module

    def test_should_stamp_the_binaries_with_the_pinned_version(self):
        spec = json.loads((REPO_ROOT / "ci/cluster/go/kubernetes/build.json").read_text())
        flags = [GO_PARTS.expand(flag, GO_PARTS.pinned_versions("kubernetes")) for flag in spec["ldflags"]]
        for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
            assert f"{package}.gitVersion=v1.37.2" in flags
            assert f"{package}.gitMajor=1" in flags
            assert f"{package}.gitMinor=37" in flags
        assert set(spec["binaries"]) == {"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet",
                                         "kube-proxy", "etcd"}

    def test_should_pin_the_controllers_at_the_releases_the_tests_run(self):
        assert GO_PARTS.pinned_versions("keda")["github.com/kedacore/keda/v2"] == "v2.21.0"
        operator = GO_PARTS.pinned_versions("prometheus-operator")
        # The operator's go.mod replaces its API and client modules with its own folders: the published ones, pinned.
        for module in ("github.com/prometheus-operator/prometheus-operator",
                       "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring",
                       "github.com/prometheus-operator/prometheus-operator/pkg/client"):
            assert operator[module] == "v0.85.0", module
        # KEDA's go.mod replaces one module; a replace counts only in the main module, so ours repeats it.
        assert ("replace github.com/nexus-rpc/nexus-proto-annotations v0.1.0 => "
                "github.com/nexus-rpc/nexus-proto-annotations v0.1.1-0.20260629224316-835bd8d49cb4") in (
            REPO_ROOT / "ci/cluster/go/keda/go.mod").read_text()

    def test_should_stamp_prometheus_operator_with_its_version_number(self):
        spec = json.loads((REPO_ROOT / "ci/cluster/go/prometheus-operator/build.json").read_text())
        flags = [GO_PARTS.expand(flag, GO_PARTS.pinned_versions("prometheus-operator")) for flag in spec["ldflags"]]
        # Its images are tagged v<Version> (pkg/operator/defaults.go), so Version is the bare number of its VERSION file.
        assert "github.com/prometheus/common/version.Version=0.85.0" in flags

    def test_should_name_a_module_the_part_does_not_require(self):
        if not shutil.which("go"):
            pytest.skip("no go command here")
        with pytest.raises(LookupError, match="example.com/absent of keda"):
            GO_PARTS.module_dir("keda", "example.com/absent")

    def test_should_pin_the_endpoint_picker_at_the_release_the_chart_image_names(self):
        image = load_yaml((REPO_ROOT / "charts/gpt-oss/values.yaml").read_text())["inferencePool"][
            "endpointPicker"]["image"]
        assert image["repository"] == "registry.k8s.io/gateway-api-inference-extension/epp"
        pinned = GO_PARTS.pinned_versions("epp")["sigs.k8s.io/gateway-api-inference-extension"]
        assert pinned == image["tag"] == "v1.5.0"

    def test_should_pin_traefik_3_6_and_the_gateway_api_it_is_built_with(self):
        versions = GO_PARTS.pinned_versions("traefik")
        # v3.7 needs modules the proxy refuses (ci/cluster/go/traefik/go.mod says which); v3.6.12 resolves whole.
        assert versions["github.com/traefik/traefik/v3"] == "v3.6.12"
        assert versions["sigs.k8s.io/gateway-api"] == "v1.4.0"

    # Where a controller needs a newer version than Kubernetes pins (a require can only raise a version).
    NEWER_THAN_KUBERNETES = {"epp": set(), "traefik": {"github.com/json-iterator/go"}}

    @pytest.mark.parametrize("part", sorted(NEWER_THAN_KUBERNETES))
    def test_should_require_what_it_shares_with_kubernetes_at_kubernetes_versions(self, part):
        """A compiled package is reused only at the same versions of it and its dependencies: a controller whose
        shared modules drift from Kubernetes' pins compiles client-go, grpc and the rest again in a cold CI."""
        kubernetes, versions = GO_PARTS.pinned_versions("kubernetes"), GO_PARTS.pinned_versions(part)
        drifted = {m: (v, kubernetes[m]) for m, v in versions.items() if m in kubernetes and v != kubernetes[m]}
        assert set(drifted) == self.NEWER_THAN_KUBERNETES[part], drifted

    def test_should_turn_optimizations_off_only_where_no_compile_is_shared(self):
        """Optimizations off (-N -l) cut a cold compile's CPU by about 30% (kube-router: 150 s against 217 s), but a
        package compiled with other flags is compiled again: the parts that share Kubernetes' compiles keep its
        flags, the controllers that share none build without optimizations (they serve a test's load)."""
        flags = {part: json.loads((GO_PARTS.PARTS / part / "build.json").read_text()).get("gcflags")
                 for part in GO_PARTS.parts() if part != OPERATOR.PART}
        assert {part for part, value in flags.items() if value} == {"argocd", "keda", "kube-router"}
        assert {value for value in flags.values() if value} == {"all=-N -l"}
        assert not set(self.NEWER_THAN_KUBERNETES) & {part for part, value in flags.items() if value}

    def test_should_pass_the_parts_compiler_flags_to_go_build(self, tmp_path, monkeypatch):
        commands = []
        monkeypatch.setenv("GPT_OSS_GO_CACHE", str(tmp_path))
        monkeypatch.setattr(GO_PARTS.subprocess, "run", lambda command, **kwargs: commands.append(command) or (
            Path(command[command.index("-o") + 1]).parent.mkdir(parents=True, exist_ok=True)))
        GO_PARTS.build("kube-router")
        assert commands and all(command[:4] == ["go", "build", "-trimpath", "-gcflags"] and command[4] == "all=-N -l"
                                for command in commands), commands

    def test_should_keep_the_cached_folder_whole_when_a_build_fails(self, tmp_path):
        target = tmp_path / "part-1"
        with GO_PARTS.building("part", target) as scratch:
            (scratch / "bin").mkdir()
            (scratch / "bin" / "tool").write_text("new")
        assert (target / "bin" / "tool").read_text() == "new"
        with pytest.raises(SystemExit, match=r"^part: go build \./cmd failed \(exit 2\)$"):
            with GO_PARTS.building("part", target) as scratch:
                (scratch / "half").write_text("written before the failure")
                raise GO_PARTS.subprocess.CalledProcessError(2, ["go", "build", "./cmd"])
        assert (target / "bin" / "tool").read_text() == "new" and not (target / "half").exists()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["part-1"]  # no scratch folder left

    def test_should_run_every_go_command_on_a_part_in_its_build_env(self, tmp_path, monkeypatch):
        """A part's build.json "env" (a GOTOOLCHAIN newer than the machine's Go) is the one place that says it: the
        build and module_dir's `go mod download` both take it."""
        (tmp_path / "part").mkdir()
        (tmp_path / "part" / "build.json").write_text(json.dumps({"binaries": {"tool": "./cmd"},
                                                                  "env": {"GOTOOLCHAIN": "go9.9.9"}}))
        (tmp_path / "part" / "go.mod").write_text("module example.com/part\n")
        (tmp_path / "part" / "go.sum").write_text("")
        monkeypatch.setattr(GO_PARTS, "PARTS", tmp_path)
        monkeypatch.setenv("GPT_OSS_GO_CACHE", str(tmp_path / "cache"))
        seen = []

        def run(command, **kwargs):
            seen.append((command[:3], kwargs["env"]))
            if command[:2] == ["go", "build"]:
                Path(command[command.index("-o") + 1]).parent.mkdir(parents=True, exist_ok=True)
            return subprocess.CompletedProcess(command, 0, stdout='{"Dir": "/mod/x"}', stderr="")
        monkeypatch.setattr(GO_PARTS.subprocess, "run", run)
        GO_PARTS.build("part")
        assert GO_PARTS.module_dir("part", "example.com/x") == Path("/mod/x")
        assert [(command, env["GOTOOLCHAIN"], env["GOFLAGS"]) for command, env in seen] == [
            (["go", "build", "-trimpath"], "go9.9.9", "-mod=readonly -buildvcs=false"),
            (["go", "mod", "download"], "go9.9.9", "-mod=readonly")]

    def test_should_pin_argocd_3_6_2_and_the_helm_its_image_ships(self):
        assert GO_PARTS.pinned_versions("argocd")["github.com/argoproj/argo-cd/v3"] == "v3.6.2"
        # gitops-engine lives in the argo-cd repository since v3.4, tagged gitops-engine/v3.6.2 with the release
        assert GO_PARTS.pinned_versions("argocd")["github.com/argoproj/argo-cd/gitops-engine/v3"] == "v3.6.2"
        assert "github.com/argoproj/argo-cd/v2" not in GO_PARTS.pinned_versions("argocd")
        # hack/tool-versions.sh of argo-cd v3.6.2: HELM_VERSION=4.3.2 (v3.6 runs Helm v4 only); a module of its own
        # keeps both pins apart
        assert GO_PARTS.pinned_versions("argocd/helm")["helm.sh/helm/v4"] == "v4.3.2"
        assert "helm.sh/helm/v4" not in GO_PARTS.pinned_versions("argocd")
        assert "helm.sh/helm/v3" not in GO_PARTS.pinned_versions("argocd/helm")

    def test_should_repeat_the_replaces_of_argocd(self):
        # argo-cd's go.mod replaces the Kubernetes staging modules; only the main module's replaces count
        text = (REPO_ROOT / "ci/cluster/go/argocd/go.mod").read_text()
        replaces = dict(re.findall(r"^\s*(k8s\.io/[\w.-]+) => k8s\.io/[\w.-]+ (v\S+)$", text, re.M))
        assert set(replaces.values()) == {"v0.37.0"}, replaces
        assert {"k8s.io/cri-streaming", "k8s.io/externaljwt"} <= set(replaces)
        assert len(replaces) == 33, sorted(replaces)
        assert "golang.org/x/tools => golang.org/x/tools v0.35.0" in text
        # its local `gitops-engine/v3 => ./gitops-engine` is argo-cd's own folder: not repeated
        assert not re.search(r"^\s*(replace\s+)?github\.com/argoproj/argo-cd/gitops-engine/v3 =>", text, re.M)

    def test_should_run_every_go_command_on_argocd_with_the_go_its_go_mod_needs(self):
        """argo-cd v3.6's go.mod says go 1.27.0: with the machine's Go 1.26 and GOTOOLCHAIN=local every go command on
        the part fails, so its build.json names the toolchain once and the build and module_dir both take it."""
        assert re.search(r"^go 1\.27\.", (REPO_ROOT / "ci/cluster/go/argocd/go.mod").read_text(), re.M)
        assert GO_PARTS.go_env("argocd")["GOTOOLCHAIN"] == "go1.27.3"
        assert GO_PARTS.go_env("argocd", "-mod=readonly -buildvcs=false")["GOFLAGS"] == "-mod=readonly -buildvcs=false"
        assert "GOTOOLCHAIN" not in json.loads((REPO_ROOT / "ci/cluster/go/kubernetes/build.json").read_text())["env"]

    def test_should_stamp_argocd_and_its_helm_with_their_pins(self):
        spec = json.loads((REPO_ROOT / "ci/cluster/go/argocd/build.json").read_text())
        flags = [GO_PARTS.expand(flag, GO_PARTS.pinned_versions("argocd")) for flag in spec["ldflags"]]
        assert "github.com/argoproj/argo-cd/v3/common.version=3.6.2" in flags
        assert "github.com/argoproj/argo-cd/v3/common.kubectlVersion=v0.37.0" in flags
        assert "helm.sh/helm/v4/internal/version.version=v4.3.2" in flags
        # Helm v4 takes its default Kubernetes version from client-go's version in the binary's build info
        # (pkg/chart/common/capabilities.go: major + 1, minor): no ldflag, and 1.37 from client-go v0.37
        assert not [flag for flag in flags if "k8sVersion" in flag]
        assert GO_PARTS.pinned_versions("argocd/helm")["k8s.io/client-go"].startswith("v0.37.")
        assert spec["binaries"] == {"argocd": "github.com/argoproj/argo-cd/v3/cmd",
                                    "helm": "helm:helm.sh/helm/v4/cmd/helm"}

    def test_should_refuse_a_stamp_naming_a_module_go_mod_does_not_require(self):
        with pytest.raises(SystemExit, match="example.com/other"):
            GO_PARTS.expand("-X a.b={version:example.com/other}", GO_PARTS.pinned_versions("kubernetes"))

    def test_should_build_anew_when_the_pin_changes(self, tmp_path, monkeypatch):
        shutil.copytree(REPO_ROOT / "ci/cluster/go/kubernetes", tmp_path / "kubernetes")
        monkeypatch.setattr(GO_PARTS, "PARTS", tmp_path)
        monkeypatch.setenv("GPT_OSS_GO_CACHE", str(tmp_path / "cache"))
        before = GO_PARTS.bin_dir("kubernetes")
        with open(tmp_path / "kubernetes/etcd/go.sum", "a") as go_sum:  # a nested module's pin counts too
            go_sum.write("example.com/changed v1.0.0 h1:x=\n")
        after = GO_PARTS.bin_dir("kubernetes")
        assert before != after and before.parent.parent == after.parent.parent == tmp_path / "cache"
        assert GO_PARTS.built("kubernetes") is None


    def test_should_drop_older_pins_builds_and_keep_the_current_one(self, tmp_path, monkeypatch):
        monkeypatch.setenv("GPT_OSS_GO_CACHE", str(tmp_path))
        current = GO_PARTS.bin_dir("helm").parent
        for folder in (current / "bin", tmp_path / "helm-0123456789abcdef/bin", tmp_path / "helmfile-0123/bin",
                       tmp_path / "kubernetes-0123456789abcdef/bin", tmp_path / ".helm-abandoned"):
            folder.mkdir(parents=True)
        GO_PARTS.drop_other_keys("helm", current)
        # the scratch folder is young: another checkout may be building into it now
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            [".helm-abandoned", current.name, "helmfile-0123", "kubernetes-0123456789abcdef"])


class TestDynamoOperatorPart:
    """The operator's part (ci/cluster/dynamo_operator.py): pinned by ../shared/dynamo/operator/SOURCE.md's table,
    read at build time; nothing of it is copied into the project."""

    @pytest.fixture
    def source(self):
        try:
            return OPERATOR.read_source()
        except OPERATOR.SourceMissing as missing:
            skip_for_missing_part(str(missing))

    @pytest.fixture
    def copy(self, source, tmp_path):
        """SOURCE.md and the archives in a folder of the test's own (1.8 MB)."""
        for name in ["SOURCE.md", *source.archives]:
            shutil.copy(OPERATOR.source_dir() / name, tmp_path / name)
        return tmp_path

    def test_should_pin_four_archives_of_main_at_2a6da14c(self, source):
        assert sorted(source.archives) == ["dynamo-operator-2a6da14c.tar.gz", "dynamo-platform-chart-2a6da14c.tar.gz",
                                           "grove-operator-api-v0.1.0-alpha.12-rc1.tar.gz",
                                           "snapshot-api-v0.1.0-alpha.1.tar.gz"]
        assert source.commit == "2a6da14c83617f5412caba5777dbf0e2399e9c5f"
        assert source.archives["dynamo-operator-2a6da14c.tar.gz"] == (
            "0a62365b08dbe0e47e7f3f9f27308f706c6e3943138ba70b40f68cccc2b6697a")

    def test_should_verify_every_archive_against_source_md(self, source, copy):
        OPERATOR.verify(OPERATOR.read_source(copy), copy)  # as shipped: no error

    def test_should_refuse_an_archive_whose_sha256_differs_naming_both(self, source, copy):
        with open(copy / "snapshot-api-v0.1.0-alpha.1.tar.gz", "ab") as archive:
            archive.write(b"\0")
        changed = OPERATOR.sha256_of(copy / "snapshot-api-v0.1.0-alpha.1.tar.gz")
        with pytest.raises(SystemExit) as refused:
            OPERATOR.verify(OPERATOR.read_source(copy), copy)
        assert (f"snapshot-api-v0.1.0-alpha.1.tar.gz: sha256 {changed}, SOURCE.md pins "
                "07dc6b417ef77be4da5ffe9e1a785d99aabcca1dc60ab02df2db5ec70589b8f4") in str(refused.value)

    def test_should_refuse_a_missing_archive(self, source, copy):
        (copy / "grove-operator-api-v0.1.0-alpha.12-rc1.tar.gz").unlink()
        with pytest.raises(SystemExit, match="grove-operator-api-v0.1.0-alpha.12-rc1.tar.gz: missing"):
            OPERATOR.verify(OPERATOR.read_source(copy), copy)

    def test_should_build_anew_when_an_archive_pin_changes(self, source, copy, monkeypatch, tmp_path):
        monkeypatch.setenv("GPT_OSS_GO_CACHE", str(tmp_path / "cache"))
        before = OPERATOR.folder(OPERATOR.read_source(copy))
        text = (copy / "SOURCE.md").read_text().replace("07dc6b417ef77be4", "17dc6b417ef77be4")
        (copy / "SOURCE.md").write_text(text)
        after = OPERATOR.folder(OPERATOR.read_source(copy))
        assert before != after and before.parent == after.parent == tmp_path / "cache"
        assert before.name.startswith("dynamo-operator-") and GO_PARTS.built("dynamo-operator") is None

    def test_should_be_a_part_go_parts_builds_and_lists(self, source):
        assert "dynamo-operator" in GO_PARTS.parts()
        assert GO_PARTS.key("dynamo-operator") == OPERATOR.key()

    def test_should_name_the_image_after_the_components_release_and_the_commit(self, source):
        assert OPERATOR.release() == "1.5.0"
        assert OPERATOR.image() == "nvcr.io/nvidia/ai-dynamo/kubernetes-operator:1.5.0-dev.2a6da14c"

    def test_should_extract_without_leaving_the_target(self, tmp_path):
        import io
        import tarfile
        archive = tmp_path / "evil.tar.gz"
        with tarfile.open(archive, "w:gz") as tar:
            info = tarfile.TarInfo("../escaped")
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
        (tmp_path / "into").mkdir()
        with pytest.raises(tarfile.OutsideDestinationError):
            OPERATOR.extract(archive, tmp_path / "into")
        assert not (tmp_path / "escaped").exists()


class TestProcesses:
    @pytest.fixture()
    def fake_kubelet(self, tmp_path):
        """A `sleep` copied under the name kubelet: what the end-of-CI check must find."""
        binary = tmp_path / "kubelet"
        shutil.copy(shutil.which("sleep"), binary)
        with open(tmp_path / "log", "ab") as log:
            entry = PROCESSES.spawn([str(binary), "60"], log)
        yield entry
        PROCESSES.terminate(entry, signal.SIGKILL, grace=0)

    def test_should_find_a_kubelet_left_running(self, fake_kubelet):
        def listed():
            return any(line.split(" ", 1)[0] == str(fake_kubelet["pid"]) for line in PROCESSES.running_servers())
        deadline = time.monotonic() + 5  # a loaded machine may not have shown the new command line yet
        while not listed() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert listed(), PROCESSES.running_servers()

    def test_should_know_a_process_by_its_pid_and_start_time(self, fake_kubelet):
        assert PROCESSES.alive(fake_kubelet)
        reused = {**fake_kubelet, "start_time": fake_kubelet["start_time"] - 1}  # the same pid, another process
        assert not PROCESSES.alive(reused)
        assert not PROCESSES.terminate(reused), "signalled a process that is not the one recorded"
        assert PROCESSES.alive(fake_kubelet)

    def test_should_start_a_server_with_the_go_runtime_settings(self, fake_kubelet):
        environ = dict(entry.split("=", 1) for entry in
                       Path(f"/proc/{fake_kubelet['pid']}/environ").read_text().split("\0") if "=" in entry)
        expected = "400" if "GOGC" not in os.environ else os.environ["GOGC"]
        assert (environ.get("GOGC"), environ.get("GOMEMLIMIT", "1GiB")) == (expected, "1GiB")

    def test_should_leave_a_gogc_the_environment_sets(self, monkeypatch):
        monkeypatch.setenv("GOGC", "100")
        assert PROCESSES.server_env({"KUBECONFIG": "/k"})["GOGC"] == "100"
        monkeypatch.delenv("GOGC")
        assert PROCESSES.server_env({"KUBECONFIG": "/k"})["GOGC"] == "400"
        assert PROCESSES.server_env({"GOGC": "off"})["GOGC"] == "off"

    def test_should_end_the_process_and_its_group(self, fake_kubelet):
        assert PROCESSES.terminate(fake_kubelet, grace=5)
        assert not PROCESSES.alive(fake_kubelet)
        assert not any(line.split(" ", 1)[0] == str(fake_kubelet["pid"]) for line in PROCESSES.running_servers())


# A child at niceness 15 (CI's cluster group already runs at 10: `nice -n` would add to it) starts `sleep` in a session
# of its own, one way or the other, and prints that session's autogroup line ("/autogroup-N nice K") before it ends it.
CHILD_NICENESS = 15
NICE_SESSION = {
    "processes.spawn": "from ci.cluster import processes; started = processes.spawn(['sleep', '30'], log)['pid']",
    "e2e stack runner": "from tests.e2e import stack; started = stack.start({'name': 'sleep', 'argv': ['sleep', '30'], "
                        "'env': dict(os.environ)}, pathlib.Path(folder), folder).pid",
    # ci/test-tiers.sh's groups behind the node's: `sleep` is the verb's own process once it has exec'd
    "python -m ci.cluster behind": "import subprocess, time; started = subprocess.Popen([sys.executable, '-m', "
                                   "'ci.cluster', 'behind', '15', '--', 'sleep', '30']).pid; "
                                   "[time.sleep(0.05) for _ in iter(lambda: not open(f'/proc/{started}/cmdline', "
                                   "'rb').read().startswith(b'sleep'), False)]",
}


class TestSessionPriority:
    @pytest.mark.parametrize("how", NICE_SESSION)
    def test_should_give_a_new_session_the_niceness_of_its_starter(self, how, tmp_path):
        if not Path("/proc/self/autogroup").exists():
            pytest.skip("this kernel schedules no autogroups: a session's niceness is its processes'")
        if os.getpriority(os.PRIO_PROCESS, 0) > CHILD_NICENESS:
            pytest.skip(f"this test runs above niceness {CHILD_NICENESS}: its child cannot go back to it")
        child = (f"import os, pathlib, signal, sys; os.setpriority(os.PRIO_PROCESS, 0, {CHILD_NICENESS}); "
                 "folder = sys.argv[1]; log = open(os.devnull, 'wb'); "
                 f"{NICE_SESSION[how]}; print(open(f'/proc/{{started}}/autogroup').read().strip()); "
                 "os.killpg(started, signal.SIGKILL)")
        shown = subprocess.run([sys.executable, "-c", child, str(tmp_path)], cwd=REPO_ROOT, capture_output=True,
                               text=True, timeout=60)
        assert shown.returncode == 0, shown.stderr
        assert re.fullmatch(r"/autogroup-\d+ nice 15", shown.stdout.strip()), shown.stdout


class TestNodePaths:
    def test_should_keep_the_sockets_short_under_a_deep_state_folder(self):
        state = Path("/" + "/".join(["a-ci-work-folder-of-some-depth"] * 8)) / ".envtest"
        assert len(str(state)) > 200
        socket = NODE.socket(state)
        assert len(str(socket) + ".ttrpc") <= 107, socket  # sun_path: 108 bytes with the NUL
        assert str(socket).startswith("/run/gpt-oss-node/")

    def test_should_give_each_state_folder_its_own_node_folder(self):
        assert NODE.node_dir(Path("/work/a/.envtest")) != NODE.node_dir(Path("/work/b/.envtest"))


class TestKubeRouterPart:
    """The node's NetworkPolicy engine (ci/cluster/node/policies.py), as GO-CONTROLLERS-FACTS.md pins it."""

    def test_should_pin_kube_router_2_1_0_on_its_own_kubernetes_client(self):
        versions = GO_PARTS.pinned_versions("kube-router")
        assert versions["github.com/cloudnativelabs/kube-router/v2"] == "v2.1.0"
        assert versions["k8s.io/client-go"] == versions["k8s.io/api"] == "v0.29.2"

    def test_should_build_the_one_binary_stamped_with_its_pin(self):
        spec = json.loads((REPO_ROOT / "ci/cluster/go/kube-router/build.json").read_text())
        assert spec["binaries"] == {"kube-router": "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router"}
        flags = [GO_PARTS.expand(flag, GO_PARTS.pinned_versions("kube-router")) for flag in spec["ldflags"]]
        assert "github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=v2.1.0" in flags


class TestPolicyEngineHostRecord:
    """What the policy tests' last check compares (ci/cluster/node/policies.py): the host's iptables and ipsets."""

    BEFORE = """# Generated by iptables-nft-save v1.8.9
*filter
:INPUT ACCEPT [10:20]
:FORWARD ACCEPT [0:0]
:KUBE-FIREWALL - [0:0]
:KUBE-SERVICES - [0:0]
-A INPUT -j KUBE-FIREWALL
-A KUBE-SERVICES -d 10.0.0.5/32 -p tcp -j REJECT
COMMIT
"""

    def snapshot(self, text, ipsets=()):
        return {"iptables": {"ipv4": POLICIES.parse_save(text), "ipv6": {}}, "ipsets": sorted(ipsets)}

    def test_should_find_nothing_between_equal_hosts_whatever_the_counters(self):
        after = self.BEFORE.replace("[10:20]", "[99:1000]")
        assert POLICIES.differences(self.snapshot(self.BEFORE), self.snapshot(after)) == []

    def test_should_name_a_chain_and_a_jump_left_behind(self):
        after = self.BEFORE.replace(":KUBE-FIREWALL", ":KUBE-ROUTER-INPUT - [0:0]\n:KUBE-FIREWALL").replace(
            "-A INPUT -j KUBE-FIREWALL", "-A INPUT -j KUBE-ROUTER-INPUT\n-A INPUT -j KUBE-FIREWALL")
        found = POLICIES.differences(self.snapshot(self.BEFORE), self.snapshot(after))
        assert found == ["ipv4 filter INPUT: rules changed (added ['-A INPUT -j KUBE-ROUTER-INPUT'], removed [])",
                         "ipv4 filter: chain KUBE-ROUTER-INPUT added"]

    def test_should_name_an_ipset_left_behind_and_ignore_kube_proxys_service_rules(self):
        after = self.BEFORE.replace("-A KUBE-SERVICES -d 10.0.0.5/32 -p tcp -j REJECT\n", "")
        found = POLICIES.differences(self.snapshot(self.BEFORE), self.snapshot(after, ["create KUBE-SRC-X hash:ip"]))
        assert found == ["ipsets: added ['create KUBE-SRC-X hash:ip'], removed []"]

    def test_should_count_an_empty_accepting_table_as_absent(self):
        after = self.BEFORE + "*mangle\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n"
        assert POLICIES.differences(self.snapshot(self.BEFORE), self.snapshot(after)) == []
