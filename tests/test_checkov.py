"""The policy-scan set-up (ci/checkov.py, .checkov.yaml): waivers with reasons, and what the scanner is shown."""
import importlib.util
import re

import pytest
import yaml

from tests.helpers import DYNAMO_OVERLAYS, REPO_ROOT, TRTLLM_SERVE_OVERLAYS
from tests.schemas import kubernetes_errors

CONFIG = REPO_ROOT / ".checkov.yaml"


def load_scan_script():
    spec = importlib.util.spec_from_file_location("checkov_scan", REPO_ROOT / "ci" / "checkov.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TestWaivers:
    def test_should_give_every_waived_check_a_reason(self):
        lines = CONFIG.read_text().splitlines()
        entries = [(i, line.strip()[2:]) for i, line in enumerate(lines) if re.match(r"^\s+- CKV2?_K8S_\d+$", line)]
        assert len(entries) == len(yaml.safe_load(CONFIG.read_text())["skip-check"]) == 10
        for index, check in entries:
            # The reason is the comment block above the entry, or above a run of entries sharing it.
            above = index - 1
            while re.match(r"^\s+- CKV", lines[above]):
                above -= 1
            assert lines[above].strip().startswith("#") and len(lines[above].strip()) > 20, check

    def test_should_waive_each_check_once_and_keep_the_fixed_ones_active(self):
        waived = yaml.safe_load(CONFIG.read_text())["skip-check"]
        assert len(waived) == len(set(waived))
        # Fixed in the chart, so never waived: secrets as files, and the kubernetes framework only.
        assert "CKV_K8S_35" not in waived
        assert yaml.safe_load(CONFIG.read_text())["framework"] == ["kubernetes"]


class TestScanInput:
    @pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS, ids=DYNAMO_OVERLAYS)
    def test_should_show_the_scanner_every_dgd_pod_as_a_valid_pod(self, overlay, tmp_path):
        load_scan_script().write_scan_input(overlay, tmp_path / "scan")
        pods = {}
        for api in ("v1beta1", "v1alpha1"):
            docs = list(yaml.safe_load_all((tmp_path / "scan" / f"dgd-pods-{api}.yaml").read_text()))
            pods[api] = sorted(d["metadata"]["name"].removesuffix(f"-{api}") for d in docs)
            for pod in docs:
                assert kubernetes_errors(pod, "1.29.0") == [], pod["metadata"]["name"]
                assert pod["spec"]["containers"][0]["name"] == "main"
        assert pods["v1beta1"] == pods["v1alpha1"] and "gpt-oss-frontend" in pods["v1beta1"] and len(pods["v1beta1"]) >= 2
        chart = list(yaml.safe_load_all((tmp_path / "scan" / "chart.yaml").read_text()))
        assert {"Job", "Pod", "ConfigMap", "PersistentVolumeClaim"} <= {o["kind"] for o in chart}

    @pytest.mark.parametrize("overlay", TRTLLM_SERVE_OVERLAYS, ids=TRTLLM_SERVE_OVERLAYS)
    def test_should_show_the_scanner_the_trtllm_serve_deployment(self, overlay, tmp_path):
        load_scan_script().write_scan_input(overlay, tmp_path / "scan")
        assert sorted(p.name for p in (tmp_path / "scan").iterdir()) == ["chart.yaml"]
        chart = list(yaml.safe_load_all((tmp_path / "scan" / "chart.yaml").read_text()))
        assert {"Deployment", "Service", "Job", "Pod"} <= {o["kind"] for o in chart}
