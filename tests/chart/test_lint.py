"""helm lint --strict on every overlay at the oldest and newest Kubernetes, and yamllint on the repo's YAML."""
from __future__ import annotations

import helm_python
import pytest
import yaml
from yamllint import linter
from yamllint.config import YamlLintConfig

from tests.helpers import CHART_DIR, DYNAMO_OVERLAYS, OVERLAYS, REPO_ROOT, VALUES_DIR, load_values

CHART = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
# The chart's own list (Chart.yaml annotation), the same one ci/lint.sh lints against.
KUBE_VERSIONS = CHART["annotations"]["gpt-oss/tested-kube-versions"].split(",")
MONITORING_ON = {"monitoring": {"podMonitor": {"enabled": True}, "dashboard": {"enabled": True}}}
YAMLLINT_CONFIG = YamlLintConfig(file=str(REPO_ROOT / ".yamllint.yaml"))
# What ci/lint.sh yamllints: everything YAML except the chart's templates (Go templates, not YAML).
YAML_FILES = sorted(
    [*VALUES_DIR.glob("*.yaml"), *(REPO_ROOT / "examples").rglob("*.yaml"), REPO_ROOT / "ct.yaml",
     REPO_ROOT / ".yamllint.yaml", *(REPO_ROOT / ".github" / "workflows").glob("*.yaml"),
     CHART_DIR / "values.yaml", CHART_DIR / "values.schema.yaml", CHART_DIR / "Chart.yaml"])
YAML_IDS = [str(path.relative_to(REPO_ROOT)) for path in YAML_FILES]


def lint(values: dict, kube_version: str) -> dict:
    """helm lint --strict's report without the values' schema, which is not these tests' subject: lint checks it twice
    (its values rule, then again before it renders: about 30 ms of a lint's 80), every render of the tests checks it,
    test_should_report_a_broken_value below lints with it, and CI's ci/lint.sh runs the full lint of each overlay."""
    return helm_python.lint(CHART_DIR, values, strict=True, kube_version=kube_version, skip_schema_validation=True)


def problems(report: dict) -> list[str]:
    # Severity 2 is a warning, 3 an error: --strict fails on both.
    found = [f"[{m['severity']}] {m['path']}: {m['error']}" for m in report["messages"] if m["severity"] >= 2]
    return found + list(report.get("errors") or [])


class TestHelmLint:
    def test_should_lint_the_kubeversion_floor_and_1_37(self):
        assert KUBE_VERSIONS == ["1.29.0", "1.37.0"]
        assert CHART["kubeVersion"].startswith(">=1.29.0")

    @pytest.mark.parametrize("kube_version", KUBE_VERSIONS)
    @pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
    def test_should_lint_each_overlay_strictly(self, overlay, kube_version):
        report = lint(load_values([overlay]), kube_version)
        assert not problems(report), "\n".join(problems(report))

    @pytest.mark.parametrize("kube_version", KUBE_VERSIONS)
    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_lint_the_monitoring_templates_strictly(self, overlay, kube_version):
        # They render nothing by default, so the lint above never sees them. Dynamo only: trtllm-serve
        # refuses them (and helm lint does not run `fail`, so it would pass without linting anything).
        report = lint(load_values([overlay], MONITORING_ON), kube_version)
        assert not problems(report), "\n".join(problems(report))

    def test_should_report_a_broken_value(self):
        # The lint is live: a value the schema refuses is an error, not a silent pass.
        report = helm_python.lint(CHART_DIR, load_values(["agg.yaml"], {"gpu": {"type": "A100"}}), strict=True,
                                  kube_version=KUBE_VERSIONS[0])
        assert problems(report)


class TestYamllint:
    @pytest.mark.parametrize("path", YAML_FILES, ids=YAML_IDS)
    def test_should_pass_yamllint(self, path):
        found = [f"{path.relative_to(REPO_ROOT)}:{p.line}:{p.column} [{p.level}] {p.message} ({p.rule})"
                 for p in linter.run(path.read_text(), YAMLLINT_CONFIG, str(path))]
        assert not found, "\n".join(found)

    def test_should_cover_the_overlays_and_the_argocd_examples(self):
        assert {f"values/{overlay}" for overlay in OVERLAYS} <= set(YAML_IDS)
        assert any(name.startswith("examples/argocd/") for name in YAML_IDS)
