"""The cluster tier's own parts: Go programs built from pinned modules (ci/go_parts.py), the processes the tiers
start and must end (ci/gptoss_ci/processes.py), and the node's socket paths (ci/gptoss_ci/node)."""
from __future__ import annotations

import json
import shutil
import signal
import time
from pathlib import Path

import pytest

from ci.gptoss_ci import dynamo_operator as OPERATOR
from ci.gptoss_ci import go_parts as GO_PARTS
from ci.gptoss_ci import node as NODE
from ci.gptoss_ci import processes as PROCESSES
from tests.helpers import REPO_ROOT, skip_for_missing_part



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
        spec = json.loads((REPO_ROOT / "ci/go/kubernetes/build.json").read_text())
        flags = [GO_PARTS.expand(flag, GO_PARTS.pinned_versions("kubernetes")) for flag in spec["ldflags"]]
        for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
            assert f"{package}.gitVersion=v1.37.2" in flags
            assert f"{package}.gitMajor=1" in flags
            assert f"{package}.gitMinor=37" in flags
        assert set(spec["binaries"]) == {"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet",
                                         "kube-proxy", "etcd"}

    def test_should_refuse_a_stamp_naming_a_module_go_mod_does_not_require(self):
        with pytest.raises(SystemExit, match="example.com/other"):
            GO_PARTS.expand("-X a.b={version:example.com/other}", GO_PARTS.pinned_versions("kubernetes"))

    def test_should_build_anew_when_the_pin_changes(self, tmp_path, monkeypatch):
        shutil.copytree(REPO_ROOT / "ci/go/kubernetes", tmp_path / "kubernetes")
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
        GO_PARTS.drop_other_keys("helm")
        # the scratch folder is young: another checkout may be building into it now
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            [".helm-abandoned", current.name, "helmfile-0123", "kubernetes-0123456789abcdef"])


class TestDynamoOperatorPart:
    """The operator's part (ci/gptoss_ci/dynamo_operator.py): pinned by ../shared/dynamo/operator/SOURCE.md's table,
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

    def test_should_end_the_process_and_its_group(self, fake_kubelet):
        assert PROCESSES.terminate(fake_kubelet, grace=5)
        assert not PROCESSES.alive(fake_kubelet)
        assert not any(line.split(" ", 1)[0] == str(fake_kubelet["pid"]) for line in PROCESSES.running_servers())


class TestNodePaths:
    def test_should_keep_the_sockets_short_under_a_deep_state_folder(self):
        state = Path("/" + "/".join(["a-ci-work-folder-of-some-depth"] * 8)) / ".envtest"
        assert len(str(state)) > 200
        socket = NODE.socket(state)
        assert len(str(socket) + ".ttrpc") <= 107, socket  # sun_path: 108 bytes with the NUL
        assert str(socket).startswith("/run/gpt-oss-node/")

    def test_should_give_each_state_folder_its_own_node_folder(self):
        assert NODE.node_dir(Path("/work/a/.envtest")) != NODE.node_dir(Path("/work/b/.envtest"))
