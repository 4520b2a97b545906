"""Shipping the chart: Artifact Hub metadata, CHANGELOG.md, the version policy and the packaged archive."""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tarfile

import pytest
import yaml

from tests.helpers import (NETWORK_POLICY_ON, CHART_DIR, OVERLAYS, REPO_ROOT, VALUES_DIR, ChartRenderError, dgd_pods, load_values,
                           render_chart)
from tests.helpers.registry import load_release_tool

tool = load_release_tool()
CHART = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
VERSION = CHART["version"]
ANNOTATIONS = CHART["annotations"]
CHANGELOG = (REPO_ROOT / "CHANGELOG.md").read_text()
DGD_API_VERSIONS = ["nvidia.com/v1beta1"]

# Every optional component switched on, one value set each; the images list must cover them all. A new
# component that can render an image adds its switches here (a set the chart refuses for an overlay, e.g.
# Dynamo-only values with runtime trtllm-serve, is left out for that overlay only).
OPTIONAL_COMPONENTS = {
    "defaults": {},
    "monitoring": {"monitoring": {"podMonitor": {"enabled": True}, "dashboard": {"enabled": True}}},
    "networkPolicy": {"networkPolicy": NETWORK_POLICY_ON},
    "autoscaling": {"frontend": {"autoscaling": {"enabled": True}}},
    "trtllmServeAutoscaling": {"trtllmServe": {"autoscaling": {"enabled": True}}},
    # A budget of one 8-GPU node: the one-node overlays refuse a planner that may grow past their node.
    "planner": {"planner": {"enabled": True, "rbac": {"create": True}, "maxGpuBudget": 8}},
    "exposure": {"ingress": {"enabled": True, "hosts": [{"host": "gpt-oss.example.com",
                                                         "paths": [{"path": "/", "pathType": "Prefix"}]}]},
                 "httpRoute": {"enabled": True, "parentRefs": [{"name": "inference-gateway"}]},
                 # The endpoint picker reads gauges TensorRT-LLM serves from 1.3.0 on (refused on 1.2.0).
                 "inferencePool": {"enabled": True}, "trtllmServe": {"image": {"tag": "1.3.0rc29"}}},
}
# What the chart says when a component set belongs to the other runtime: that overlay is left out.
OTHER_RUNTIME_REFUSALS = ("so these Dynamo-only values would be ignored",
                          "is not deployed (runtime=",
                          "planner.enabled=true needs runtime=dynamo",
                          "inferencePool.enabled=true renders the upstream endpoint picker for runtime=trtllm-serve",
                          # The 1.2.1 planner cannot scale attention-DP roles (its planner image renders elsewhere).
                          "publishes none under attention DP")
# A tag only a test sets, to render a component that needs a newer release than the chart pins: not a chart image.
TEST_ONLY_IMAGES = {"nvcr.io/nvidia/tensorrt-llm/release:1.3.0"}

# Kinds whose objects hold a pod template, and where.
POD_SPEC_PATHS = {
    "Pod": ("spec",),
    "Job": ("spec", "template", "spec"),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def pod_specs(obj: dict) -> list[dict]:
    if obj["kind"] == "DynamoGraphDeployment":
        return [pod["spec"] for pod in dgd_pods(obj).values()]
    if obj["kind"] in POD_SPEC_PATHS:
        return [functools.reduce(lambda node, key: node[key], POD_SPEC_PATHS[obj["kind"]], obj)]
    return []


def has_image_field(node) -> bool:
    if isinstance(node, dict):
        return "image" in node or any(has_image_field(value) for value in node.values())
    return isinstance(node, list) and any(has_image_field(value) for value in node)


@functools.cache
def rendered_images() -> dict[str, set[str]]:
    """{image: the renders (overlay, DGD API version, component set) that run it}."""
    images: dict[str, set[str]] = {}
    for component, values in OPTIONAL_COMPONENTS.items():
        rendered_somewhere = False
        for overlay in OVERLAYS:
            for api_version in DGD_API_VERSIONS:
                try:
                    objects = render_chart([overlay], {**values, "dynamo": {"apiVersion": api_version}})
                except ChartRenderError as error:
                    if any(refusal in str(error) for refusal in OTHER_RUNTIME_REFUSALS):
                        continue
                    raise
                rendered_somewhere = True
                for obj in objects:
                    specs = pod_specs(obj)
                    # An object with images where no pod spec is known would slip through: name it.
                    assert specs or not has_image_field(obj), f"{obj['kind']} carries images: add it to POD_SPEC_PATHS"
                    for spec in specs:
                        for container in (c for key in CONTAINER_LISTS for c in spec.get(key) or []):
                            images.setdefault(container["image"], set()).add(f"{overlay} {api_version} {component}")
        assert rendered_somewhere, f"component set {component} renders with no overlay"
    return images


def listed_images() -> list[dict]:
    return yaml.safe_load(ANNOTATIONS["artifacthub.io/images"])


class TestArtifactHubImages:
    def test_should_list_every_image_the_chart_renders(self):
        missing = {image: sorted(where)[:3] for image, where in rendered_images().items()
                   if image not in {entry["image"] for entry in listed_images()} | TEST_ONLY_IMAGES}
        assert not missing, f"rendered but not in artifacthub.io/images: {missing}"

    def test_should_list_only_images_the_chart_renders(self):
        extra = [entry["image"] for entry in listed_images() if entry["image"] not in rendered_images()]
        assert not extra, f"in artifacthub.io/images but rendered by no overlay, API version or component: {extra}"

    def test_should_name_each_image_once_with_a_pinned_tag(self):
        entries = listed_images()
        assert all(set(entry) == {"name", "image"} for entry in entries)
        assert len({entry["name"] for entry in entries}) == len({entry["image"] for entry in entries}) == len(entries)
        assert all(re.fullmatch(r"[a-z0-9.-]+(/[a-z0-9._-]+)+:[0-9A-Za-z._-]+", entry["image"]) for entry in entries)
        assert len(entries) == 6  # runtime, trtllm-serve, python, planner, endpoint picker, model-fetch


class TestChartMetadata:
    def test_should_declare_license_links_and_maintainers(self):
        assert ANNOTATIONS["artifacthub.io/license"] == "Apache-2.0"
        links = yaml.safe_load(ANNOTATIONS["artifacthub.io/links"])
        assert links and all(set(link) == {"name", "url"} and link["url"].startswith("https://") for link in links)
        assert CHART["maintainers"] and all(m.get("name") for m in CHART["maintainers"])

    def test_should_require_the_kubernetes_its_objects_are_validated_against(self):
        # tests/chart/test_upstream_schemas.py validates every rendered core object against this floor's schemas.
        assert CHART["kubeVersion"] == ">=1.29.0-0"


# --- CHANGELOG.md (Keep a Changelog) ------------------------------------------------------------------------
SECTION = re.compile(r"^## \[(?P<version>[^\]]+)\] - (?P<date>\d{4}-\d{2}-\d{2})$", re.M)
# Keep a Changelog's headings and Artifact Hub's change kinds.
KINDS = {"Added": "added", "Changed": "changed", "Deprecated": "deprecated", "Removed": "removed",
         "Fixed": "fixed", "Security": "security"}


def changelog_sections() -> dict[str, dict]:
    """{version: {"date", "entries": [(kind, description)]}}, in file order."""
    matches = list(SECTION.finditer(CHANGELOG))
    sections = {}
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(CHANGELOG)
        entries, kind = [], None
        for line in CHANGELOG[match.end():end].splitlines():
            if line.startswith("### "):
                assert line[4:] in KINDS, f"{match['version']}: unknown heading {line!r}, use one of {list(KINDS)}"
                kind = KINDS[line[4:]]
            elif line.startswith("- "):
                assert kind, f"{match['version']}: an entry before any ### heading: {line!r}"
                entries.append((kind, line[2:]))
        sections[match["version"]] = {"date": match["date"], "entries": entries}
    return sections


class TestChangelog:
    def test_should_open_with_the_chart_version(self):
        sections = changelog_sections()
        assert next(iter(sections)) == VERSION
        assert sections[VERSION]["entries"]

    def test_should_list_versions_newest_first(self):
        sections = changelog_sections()
        versions = list(sections)
        assert versions == sorted(versions, key=tool.semver_key, reverse=True)
        assert len(set(versions)) == len(versions)
        dates = [section["date"] for section in sections.values()]
        assert dates == sorted(dates, reverse=True)
        assert {"0.2.0", "0.1.0"} <= set(versions)

    def test_should_carry_this_versions_entries_as_artifacthub_changes(self):
        changes = [(change["kind"], change["description"]) for change in yaml.safe_load(ANNOTATIONS["artifacthub.io/changes"])]
        assert changes == changelog_sections()[VERSION]["entries"]

    def test_should_give_upgrade_notes_for_every_version(self):
        readme = (REPO_ROOT / "docs" / "releasing.md").read_text()
        upgrading = readme[readme.index("\n## Upgrading\n"):]
        upgrading = upgrading[:upgrading.find("\n## ", 1)]
        assert [v for v in changelog_sections() if f"\n### To {v}\n" not in upgrading] == ["0.1.0"]


# --- Version policy (chart-testing's check-version-increment, in a clone without network) ---------------------
class TestVersionPolicy:
    def test_should_use_a_semantic_version(self):
        assert tool.SEMVER.match(VERSION)
        with pytest.raises(tool.ReleaseError, match=re.escape(
                "'0.2' is not a semantic version (MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD])")):
            tool.semver_key("0.2")

    def test_should_bump_the_version_for_a_change_against_the_merge_base_with_main(self):
        if tool.git(REPO_ROOT, "rev-parse", "--git-dir", check=False).returncode:
            pytest.skip("not a git clone: no merge base to compare with")
        ref = tool.main_ref()
        if ref is None:
            pytest.skip(f"none of {', '.join(tool.MAIN_REFS)} in this clone (a shallow clone of one branch): "
                        "chart-testing compares against the target branch; fetch main to check")
        base = tool.git(REPO_ROOT, "merge-base", "HEAD", ref).stdout.strip()
        if not tool.charts_changed(REPO_ROOT, base):
            pytest.skip(f"charts/ and values/ are unchanged since the merge base {base[:12]} with {ref} (on main "
                        "itself the release-tag check applies)")
        assert tool.version_increment_problem(REPO_ROOT, base) is None

    def test_should_bump_the_version_after_the_last_release(self):
        # On main the merge base is HEAD: what must not happen there is a change shipped under a released version.
        if tool.git(REPO_ROOT, "rev-parse", "--git-dir", check=False).returncode:
            pytest.skip("not a git clone: no release tag to compare with")
        tag = tool.released_base()
        if tag is None:
            pytest.skip("no gpt-oss-<version> release tag in HEAD's history (none released yet, or a clone "
                        "without tags)")
        if not tool.charts_changed(REPO_ROOT, tag):
            pytest.skip(f"charts/ and values/ are unchanged since the release {tag}")
        assert tool.version_increment_problem(REPO_ROOT, tag) is None


@pytest.fixture
def scratch_repo(tmp_path):
    """A git repository with the chart's Chart.yaml at 0.1.0 and one template on main, and a branch off it."""
    repo = tmp_path / "repo"
    chart = repo / "charts" / "gpt-oss"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: gpt-oss\nversion: 0.1.0\n")
    (chart / "templates" / "configmap.yaml").write_text("kind: ConfigMap\n")
    (repo / "README.md").write_text("docs\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}

    def run(*args):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)

    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, capture_output=True)
    run("add", "-A")
    run("commit", "-qm", "chart 0.1.0")
    run("switch", "-qc", "feature")
    return repo, chart, run


class TestVersionCheck:
    """The check itself, on a scratch repository: it fails where chart-testing's would."""

    PROBLEM = ("charts/ or values/ changed since {base} but charts/gpt-oss/Chart.yaml version {now} is not higher than "
               "0.1.0 there: bump version (semver) and add its CHANGELOG.md section")

    def test_should_refuse_a_template_change_without_a_bump(self, scratch_repo):
        repo, chart, run = scratch_repo
        (chart / "templates" / "configmap.yaml").write_text("kind: ConfigMap\ndata: {}\n")
        run("commit", "-qam", "change a template")
        assert tool.version_increment_problem(repo, "main") == self.PROBLEM.format(base="main", now="0.1.0")

    def test_should_refuse_an_uncommitted_new_file_without_a_bump(self, scratch_repo):
        repo, chart, _ = scratch_repo
        (chart / "templates" / "service.yaml").write_text("kind: Service\n")
        assert tool.version_increment_problem(repo, "main") == self.PROBLEM.format(base="main", now="0.1.0")

    def test_should_refuse_a_pre_release_of_the_same_version(self, scratch_repo):
        repo, chart, _ = scratch_repo
        (chart / "Chart.yaml").write_text("apiVersion: v2\nname: gpt-oss\nversion: 0.1.0-rc.1\n")
        assert tool.version_increment_problem(repo, "main") == self.PROBLEM.format(base="main", now="0.1.0-rc.1")

    def test_should_accept_a_bumped_version(self, scratch_repo):
        repo, chart, run = scratch_repo
        (chart / "templates" / "configmap.yaml").write_text("kind: ConfigMap\ndata: {}\n")
        (chart / "Chart.yaml").write_text("apiVersion: v2\nname: gpt-oss\nversion: 0.1.1\n")
        run("commit", "-qam", "change a template, bump")
        assert tool.version_increment_problem(repo, "main") is None

    def test_should_refuse_an_overlay_change_without_a_bump(self, scratch_repo):
        # The archive carries the overlays: a changed overlay is a changed chart.
        repo, _, run = scratch_repo
        (repo / "values").mkdir()
        (repo / "values" / "agg.yaml").write_text("runtime: dynamo\n")
        run("add", "values")
        run("commit", "-qm", "an overlay")
        assert tool.version_increment_problem(repo, "main") == self.PROBLEM.format(base="main", now="0.1.0")

    def test_should_ignore_changes_outside_charts_and_values(self, scratch_repo):
        repo, _, run = scratch_repo
        (repo / "README.md").write_text("more docs\n")
        run("commit", "-qam", "docs")
        assert tool.version_increment_problem(repo, "main") is None

    def test_should_compare_with_the_newest_release_tag(self, scratch_repo):
        repo, chart, run = scratch_repo
        run("tag", "gpt-oss-0.1.0")
        (chart / "Chart.yaml").write_text("apiVersion: v2\nname: gpt-oss\nversion: 0.10.0\n")
        run("commit", "-qam", "0.10.0")
        run("tag", "gpt-oss-0.10.0")
        run("tag", "gpt-oss-0.9.0")
        assert tool.released_base(repo) == "gpt-oss-0.10.0"


# --- The packaged archive ----------------------------------------------------------------------------------------
def members(archive) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(archive) as tar:
        return {member.name: member for member in tar.getmembers()}


def tracked_chart_files() -> set[str]:
    listed = tool.git(REPO_ROOT, "ls-files", "--", "charts/gpt-oss", check=False)
    if listed.returncode:
        pytest.skip("not a git clone: the chart's tracked files are unknown")
    return {f"gpt-oss/{path.removeprefix('charts/gpt-oss/')}" for path in listed.stdout.split()}


class TestPackage:
    def test_should_carry_the_chart_files_and_the_overlays_only(self, chart_archive):
        expected = tracked_chart_files() | {f"gpt-oss/values/{overlay}" for overlay in OVERLAYS}
        assert set(members(chart_archive)) == expected
        assert {"gpt-oss/values.schema.json", "gpt-oss/README.md", "gpt-oss/templates/NOTES.txt",
                "gpt-oss/values/agg.yaml"} <= expected
        assert chart_archive.name == f"gpt-oss-{VERSION}.tgz"

    def test_should_build_the_same_bytes_from_a_checkout_made_at_another_time(self, chart_archive, tmp_path):
        # Helm archives each file's modification time; a fresh clone has new ones.
        chart, overlays = tmp_path / "src" / "gpt-oss", tmp_path / "src" / "values"
        shutil.copytree(CHART_DIR, chart)
        shutil.copytree(VALUES_DIR, overlays)
        for path in [*chart.rglob("*"), *overlays.rglob("*")]:
            os.utime(path, (1_000_000_000, 1_000_000_000))

        again = tool.package(tmp_path / "out", chart_dir=chart, overlays=overlays)

        assert again.read_bytes() == chart_archive.read_bytes()

    def test_should_stamp_every_file_with_the_source_date(self, tmp_path, monkeypatch):
        monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
        archive = tool.package(tmp_path)
        assert {member.mtime for member in members(archive).values()} == {1700000000}

    def test_should_keep_stray_files_out(self, chart_archive, tmp_path):
        chart = tmp_path / "gpt-oss"
        shutil.copytree(CHART_DIR, chart)
        for stray in [".venv/lib/site.py", "templates/__pycache__/x.pyc", "templates/dgd.yaml.orig", "notes.swp",
                      "gpt-oss-0.1.0.tgz", ".pytest_cache/v/cache", ".git/HEAD", ".vscode/settings.json", "build.log"]:
            (chart / stray).parent.mkdir(parents=True, exist_ok=True)
            (chart / stray).write_text("stray\n")

        archive = tool.package(tmp_path / "out", chart_dir=chart)

        assert set(members(archive)) == set(members(chart_archive))

    def test_should_lint_the_archive_strictly(self, chart_archive):
        import helm_python
        report = helm_python.lint(chart_archive, yaml.safe_load((VALUES_DIR / "agg.yaml").read_text()), strict=True)
        assert [m for m in report["messages"] if m["severity"] >= 2] == [] and not report.get("errors")

    def test_should_refuse_a_tag_that_is_not_the_chart_version(self, tmp_path):
        with pytest.raises(tool.ReleaseError) as error:
            tool.package(tmp_path, expect_version="9.9.9")
        assert str(error.value) == (f"the tag asks for version 9.9.9, but gpt-oss/Chart.yaml says {VERSION}: "
                                    f"tag gpt-oss-{VERSION}, or bump version in Chart.yaml")
        assert not list(tmp_path.iterdir())


class TestUpgradeAcrossVersions:
    def test_should_rename_the_download_job_for_a_new_chart_version(self, tmp_path):
        # Its pod template carries helm.sh/chart: kept under one name, `helm upgrade` to a new version would
        # patch an immutable pod template of a Job that outlives its run (ttlSecondsAfterFinished: null).
        import helm_python
        previous = tmp_path / "gpt-oss"
        shutil.copytree(CHART_DIR, previous)
        chart_yaml = previous / "Chart.yaml"
        chart_yaml.write_text(chart_yaml.read_text().replace(f"\nversion: {VERSION}\n", "\nversion: 0.1.0\n"))

        def download_job(chart) -> dict:
            rendered = chart.render(load_values(["agg.yaml"]), name="gpt-oss", namespace="llm", is_install=True)
            return next(doc for doc in yaml.safe_load_all(rendered["gpt-oss/templates/model-cache/job.yaml"]) if doc)

        old, new = download_job(helm_python.Chart.load(previous)), download_job(helm_python.Chart.load(CHART_DIR))
        assert old["spec"]["template"]["metadata"]["labels"]["helm.sh/chart"] == "gpt-oss-0.1.0"
        assert new["spec"]["template"]["metadata"]["labels"]["helm.sh/chart"] == f"gpt-oss-{VERSION}"
        assert old["metadata"]["name"] != new["metadata"]["name"]


def readme_section(text: str, heading: str) -> str:
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else len(text)]


def code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


class TestInstallFromRegistryDocs:
    """docs/releasing.md's and the chart README's install snippets pin this version and use targets the archive
    carries."""

    SECTION = readme_section((REPO_ROOT / "docs" / "releasing.md").read_text(), "## Install from a registry")
    CHART_README = (CHART_DIR / "README.md").read_text()

    def test_should_pin_this_version_in_every_helm_command(self):
        commands = "\n".join(code_blocks(self.SECTION, "sh") + code_blocks(self.CHART_README, "sh"))
        versions = re.findall(r"--version (\S+)", commands)
        assert versions and set(versions) == {VERSION}
        targets = re.findall(r"gpt-oss/values/(\S+\.yaml)", commands)
        assert targets and set(targets) <= set(OVERLAYS)

    def test_should_pin_this_version_in_the_argo_cd_application(self):
        (app,) = [doc for block in code_blocks(self.SECTION, "yaml") for doc in yaml.safe_load_all(block)
                  if doc["kind"] == "Application"]
        source = app["spec"]["source"]
        assert source["repoURL"] == "oci://ghcr.io/OWNER/charts/gpt-oss"
        assert source["targetRevision"] == VERSION
        assert source["path"] == "."
        assert [f.removeprefix("values/") for f in source["helm"]["valueFiles"]] == ["agg.yaml"]

    def test_should_pin_this_version_in_the_flux_oci_repository(self):
        docs = {doc["kind"]: doc for block in code_blocks(self.SECTION, "yaml") for doc in yaml.safe_load_all(block)}
        source, release = docs["OCIRepository"], docs["HelmRelease"]
        assert source["spec"]["url"] == "oci://ghcr.io/OWNER/charts/gpt-oss"
        assert source["spec"]["ref"] == {"tag": VERSION}
        # The chart archive is the layer Helm pushes.
        assert source["spec"]["layerSelector"]["mediaType"] == "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
        assert release["spec"]["chartRef"] == {"kind": "OCIRepository", "name": source["metadata"]["name"]}
        assert release["metadata"]["namespace"] == source["metadata"]["namespace"]
