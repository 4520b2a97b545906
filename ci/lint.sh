#!/usr/bin/env bash
# Chart CI, offline: yamllint, helm lint --strict per overlay, chart-testing (when ct is installed),
# the value-docs check (python -m ci.generate --check: every generated file) and the offline tests. GitHub Actions runs this script
# (.github/workflows/lint-test.yaml); run it locally the same way: bash ci/lint.sh
#   PYTHON=...        interpreter with requirements-test.txt installed (default: python3)
#   SKIP_TESTS=1      stop after the linters (tests/chart/test_lint.py runs the same lint checks)
#   SKIP_GENERATED=1  leave the generated files' check to the tests (tests/ci/test_rooms.py runs the same command, and
#                     tests/tools/test_sizing_tables.py regenerates the sizing tables)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}

echo "== yamllint (.yamllint.yaml)"
# Templates are Go templates, not YAML: only the chart's values.yaml and Chart.yaml are linted.
"$PYTHON" -m yamllint --strict -c .yamllint.yaml \
  values examples ct.yaml .yamllint.yaml .github/workflows charts/gpt-oss/values.yaml charts/gpt-oss/values.schema.yaml \
  charts/gpt-oss/Chart.yaml
echo "yamllint: ok"

echo "== helm lint --strict per overlay (helm-python-sdk, Helm's own linter)"
"$PYTHON" - <<'PY'
import sys
from pathlib import Path

import helm_python
import yaml

chart = Path("charts/gpt-oss")
# Oldest and newest Kubernetes the chart is tested against, from Chart.yaml (one source of truth).
kube_versions = yaml.safe_load((chart / "Chart.yaml").read_text())["annotations"]["gpt-oss/tested-kube-versions"]
cases = [(path.name, yaml.safe_load(path.read_text()) or {}) for path in sorted(Path("values").glob("*.yaml"))]
# The opt-in monitoring templates render nothing by default: lint them switched on too.
agg = yaml.safe_load(Path("values/agg.yaml").read_text())
cases.append(("agg.yaml+monitoring", {**agg, "monitoring": {"podMonitor": {"enabled": True},
                                                            "dashboard": {"enabled": True}}}))
failed = 0
for name, values in cases:
    for kube in kube_versions.split(","):
        report = helm_python.lint(chart, values, strict=True, kube_version=kube)
        # Severity 2 is a warning, 3 an error; --strict fails on both, so does this.
        bad = [m for m in report["messages"] if m["severity"] >= 2]
        for message in bad:
            print(f"  {name} (kube {kube}): [{message['severity']}] {message['path']}: {message['error']}")
        for error in report.get("errors") or []:
            print(f"  {name} (kube {kube}): {error}")
        failed += bool(bad or report.get("errors"))
        print(f"{name} (kube {kube}): {'FAILED' if bad or report.get('errors') else 'ok'}")
sys.exit(1 if failed else 0)
PY

if command -v helm >/dev/null 2>&1; then
  # The CLI too, when installed: CI runs it with the oldest and the newest Helm the chart supports.
  echo "== helm lint --strict per overlay ($(helm version --short))"
  for overlay in values/*.yaml; do
    helm lint --strict charts/gpt-oss -f "$overlay"
  done
else
  echo "== helm CLI not found: skipping the CLI lint (helm-python-sdk linted above)"
fi

if command -v ct >/dev/null 2>&1; then
  echo "== chart-testing ($(ct version 2>/dev/null | head -n 1))"
  ct lint --config ct.yaml
else
  echo "== ct not found: skipping chart-testing (CI installs it with helm/chart-testing-action)"
fi

if [[ "${SKIP_GENERATED:-0}" == "1" ]]; then
  echo "== SKIP_GENERATED=1: generated files left to the tests (tests/ci/test_rooms.py, tests/tools/test_sizing_tables.py)"
else
  echo "== generated files (python -m ci.generate --check)"
  # Every file the chart and docs derive: the value docs (values.schema.json, the values.yaml key comments, the chart
  # README's values reference), the Dynamo defaults and TensorRT-LLM's key lists; aiconfigurator's only where installed.
  "$PYTHON" -m ci.generate --check
  echo "generated files: up to date"
fi

if [[ "${SKIP_TESTS:-0}" == "1" ]]; then
  echo "== SKIP_TESTS=1: offline tests skipped"
  exit 0
fi
echo "== offline tests (pytest, without the e2e and cluster markers)"
"$PYTHON" -m pytest -q -m "not e2e and not cluster" -n 2 tests
