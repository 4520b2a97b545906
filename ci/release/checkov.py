"""Scan every overlay's rendered objects with Checkov, plus the DGD's pods as the operator will create them.

    python -m ci.release scan [--checkov PATH] [--markdown]

Renders each values/ overlay (helm-python-sdk, as the tests do) into a scratch folder: the chart's objects,
and for both DGD API versions the frontend and worker pod templates written out as Pods (tools.gptoss.objects.dgd_pods),
because Checkov does not look inside a custom resource. Waivers are scoped to objects: checkov.io/skip<N>
annotations "CKV_..=<reason>" on the chart's objects and on the DGD's pod templates (templates/_checkov.tpl),
which Checkov reports as skipped with that reason; the few checks that concern every object are the
skip-check list of .checkov.yaml. Runs `checkov --framework kubernetes` on each overlay with .checkov.yaml minus
that list, so a globally waived check is still run and counted: prints passed / failed / waived (global) /
skipped (annotation) per overlay, then each annotation waiver with its reason, and exits 1 on any failed check
that is not waived, or a skip annotation without a reason.
CHECKOV (env) or --checkov names the binary; CI installs it from requirements-checkov.txt in its own venv.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from tools.gptoss.objects import dgd_pods
from tools.gptoss.render import parse_manifests, render_manifests
from tools.gptoss.values import overlays
from tools.gptoss.yaml_text import dump_yaml_all

from . import REPO

API_VERSIONS = ("nvidia.com/v1beta1",)
CONFIG = REPO / ".checkov.yaml"


# Besides every overlay as it ships: one target per runtime with every optional component on, so the pods
# only they render (the SLA planner, the endpoint picker) are scanned too.
# NetworkPolicies need the Kubernetes API's peers when a pod calls it (an address made up for the scan), and
# Prometheus' (in a namespace it names) where PodMonitors or the planner need it.
NETWORK_POLICY = {"enabled": True, "apiServer": {"to": [{"ipBlock": {"cidr": "10.0.0.10/32"}}]},
                  "prometheus": {"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}},
                                         "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}}]}}
OPTIONAL_COMPONENTS = {
    "networkPolicy": NETWORK_POLICY,
    "monitoring": {"podMonitor": {"enabled": True}},
    "ingress": {"enabled": True, "hosts": [{"host": "gpt-oss.example.com", "paths": [{"path": "/"}]}]},
    "httpRoute": {"enabled": True, "parentRefs": [{"name": "inference-gateway"}]},
}
SCAN_TARGETS = {overlay: {} for overlay in overlays()} | {
    # The 1.2.1 planner decides from forward-pass metrics, which workers publish only without attention DP.
    "agg.yaml + optional components": {**OPTIONAL_COMPONENTS, "frontend": {"autoscaling": {"enabled": True}},
                                       "planner": {"enabled": True, "rbac": {"create": True}},
                                       "workers": {"worker": {"attentionDP": False}}},
    # The endpoint picker reads gauges TensorRT-LLM serves from 1.3.0 on: the default 1.3.0rc29 serves them (a bare
    # 1.3.0 tag is refused since the chart has no engine key list of that release).
    "trtllm-serve-low-latency.yaml + optional components": {**OPTIONAL_COMPONENTS,
                                                            "trtllmServe": {"autoscaling": {"enabled": True}},
                                                            "inferencePool": {"enabled": True}},
} | {
    # The model sources that change the pods (docs/model-sources.md): image volumes and their check-model init
    # containers in every pod; a download Job with a workload identity, a CA bundle and a proxy; one that pulls
    # an OCI image with the pull secrets.
    "agg.yaml + model from an OCI image volume": {"modelCache": {
        "source": "oci", "manifestSha256": "5" * 64,
        "oci": {"repository": "registry.example.com/models/gpt-oss-120b", "digest": "sha256:" + "d" * 64}}},
    "disagg-k8s.yaml + model from S3 with a workload identity": {"networkPolicy": NETWORK_POLICY, "modelCache": {
        "source": "s3", "manifestSha256": "5" * 64, "proxy": {"httpsProxy": "http://proxy.example.com:3128"},
        "caBundle": {"configMap": "corp-ca"}, "s3": {"bucket": "models", "serviceAccount": {
            "create": True, "annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/reader"}}}}},
    "trtllm-serve-low-latency.yaml + model pulled from OCI": {
        "dynamo": {"imagePullSecrets": [{"name": "registry-credentials"}]}, "modelCache": {
            "source": "oci", "manifestSha256": "5" * 64,
            "oci": {"repository": "registry.example.com/models/gpt-oss-120b", "digest": "sha256:" + "d" * 64,
                    "mount": "pull"}}},
}


def write_scan_input(target: str, folder: Path) -> None:
    """The target's rendered objects, and the DGD pods of both API versions, as YAML files in `folder`."""
    folder.mkdir(parents=True)
    overlay, values = target.split(" + ")[0], SCAN_TARGETS[target]
    objects = parse_manifests(render_manifests([overlay], values))
    (folder / "chart.yaml").write_text(dump_yaml_all(objects))
    if not any(obj["kind"] == "DynamoGraphDeployment" for obj in objects):
        return  # runtime trtllm-serve: its Deployment is already a pod template Checkov reads
    for api_version in API_VERSIONS:
        for obj in parse_manifests(render_manifests([overlay], {**values, "dynamo": {"apiVersion": api_version}})):
            if obj["kind"] != "DynamoGraphDeployment":
                continue
            pods = list(dgd_pods(obj).values())
            for pod in pods:  # both versions make pods of the same names: keep them apart in the report
                pod["metadata"]["name"] += "-" + api_version.split("/")[1]
                pod["metadata"]["namespace"] = "llm"
            (folder / f"dgd-pods-{api_version.split('/')[1]}.yaml").write_text(dump_yaml_all(pods))


def waived_checks() -> list[str]:
    return yaml.safe_load(CONFIG.read_text()).get("skip-check", [])


def scan(checkov: str, folder: Path, config: Path) -> dict:
    result = subprocess.run([checkov, "--framework", "kubernetes", "--directory", str(folder), "--config-file",
                             str(config), "--output", "json", "--compact", "--skip-download"],
                            # Not the repository: Checkov would add the .checkov.yaml it finds in the working folder.
                            capture_output=True, text=True, cwd=folder)
    if result.returncode not in (0, 1):
        raise SystemExit(f"checkov failed ({result.returncode}):\n{result.stderr[-3000:]}")
    report = json.loads(result.stdout)
    reports = report if isinstance(report, list) else [report]
    waived = set(waived_checks())
    # Not --quiet: it drops the skipped checks, and with them their reasons.
    summary = {"passed": 0, "failed": 0, "waived": 0, "skipped": 0, "failures": [], "reasons": set()}
    for item in reports:
        summary["passed"] += item.get("summary", {}).get("passed", 0)
        for check in item.get("results", {}).get("skipped_checks", []):
            summary["skipped"] += 1
            reason = (check.get("check_result") or {}).get("suppress_comment") or ""
            summary["reasons"].add((check["check_id"], reason))
            if reason in ("", "No comment provided"):  # Checkov's text for an annotation without "=<reason>"
                summary["failed"] += 1
                summary["failures"].append(f"{check['check_id']} skipped without a reason: {check['resource']}")
        for check in item.get("results", {}).get("failed_checks", []):
            if check["check_id"] in waived:
                summary["waived"] += 1
                continue
            summary["failed"] += 1
            summary["failures"].append(f"{check['check_id']} {check['check_name']}: {check['resource']} "
                                       f"({check['file_path']})")
    return summary


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--checkov", default=os.environ.get("CHECKOV") or shutil.which("checkov"))
    parser.add_argument("--markdown", action="store_true", help="print the table of docs/security.md")
    args = parser.parse_args(argv)
    if not args.checkov:
        print("checkov not found: pip install -r requirements-checkov.txt (own venv), then set CHECKOV", file=sys.stderr)
        return 2
    if os.sep in args.checkov:  # a relative path would break once Checkov runs in the scratch folder
        args.checkov = str(Path(args.checkov).resolve())
    version = subprocess.run([args.checkov, "--version"], capture_output=True, text=True).stdout.strip()
    unwaived = 0
    rows = []
    reasons: set = set()
    with tempfile.TemporaryDirectory() as scratch:
        # Waived checks still run, so the report can count them.
        config = Path(scratch) / "checkov-unwaived.yaml"
        config.write_text(yaml.safe_dump({k: v for k, v in yaml.safe_load(CONFIG.read_text()).items()
                                          if k != "skip-check"}))
        for overlay in SCAN_TARGETS:
            folder = Path(scratch) / overlay.replace(".yaml", "").replace(" + ", "-").replace(" ", "-")
            write_scan_input(overlay, folder)
            summary = scan(args.checkov, folder, config)
            rows.append((overlay, summary))
            unwaived += summary["failed"]
            reasons |= summary["reasons"]
            print(f"{overlay}: {summary['passed']} passed, {summary['failed']} failed, {summary['waived']} waived, "
                  f"{summary['skipped']} skipped")
            for failure in summary["failures"]:
                print(f"  FAILED {failure}")
    print("skipped by the objects' checkov.io/skip annotations:")
    for check_id, reason in sorted(reasons):
        print(f"  {check_id}: {reason}")
    if args.markdown:
        print(f"\n| Overlay (Checkov {version}) | passed | failed | waived | skipped |\n|---|---|---|---|---|")
        for overlay, summary in rows:
            print(f"| `{overlay}` | {summary['passed']} | {summary['failed']} | {summary['waived']} | "
                  f"{summary['skipped']} |")
    print(f"checkov {version}: {unwaived} unwaived failure(s)")
    return 1 if unwaived else 0
