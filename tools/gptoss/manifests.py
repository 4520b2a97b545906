"""Rendered templates printed as `helm template` prints them: the same documents, in the same order.

A port of Helm v4.2.3's (the Helm helm-python-sdk 0.2.2 binds) pkg/release/v1/util (SplitManifests, SortManifests, InstallOrder) and of the printing in
pkg/action/action.go (renderResources) and pkg/cmd/template.go: each file's documents in file order, files in
path order; hooks (documents with a helm.sh/hook annotation) apart; both stably sorted by kind in Helm's install
order (kinds it does not know last, alphabetically); every document under `---` and a `# Source:` line; the
manifests first, then the hooks. tests/tools/test_tools.py compares the manifests with Helm's own (a client-side
dry-run install through helm-python-sdk).
"""
from __future__ import annotations

import posixpath
import re

import yaml

# releaseutil.InstallOrder.
INSTALL_ORDER = [
    "PriorityClass", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
    "PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass", "PersistentVolume",
    "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole", "ClusterRoleList", "ClusterRoleBinding",
    "ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList", "Service", "DaemonSet", "Pod",
    "ReplicationController", "ReplicaSet", "Deployment", "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob",
    "IngressClass", "Ingress", "APIService", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
]
# The hook events Helm knows (release.HookEvent, plus Helm 2's test-success); a document naming another is dropped.
HOOK_EVENTS = {"pre-install", "post-install", "pre-delete", "post-delete", "pre-upgrade", "post-upgrade",
               "pre-rollback", "post-rollback", "test", "test-success"}
# v4.2.3's separator (later releases keep the whitespace before it): blanks before `---` go with it.
_SEPARATOR = re.compile(r"(?:\A|\s*\n)---\s*", re.ASCII)


def split_manifests(text: str) -> list[str]:
    """releaseutil.SplitManifests: the documents of one rendered file, in order, blank ones dropped."""
    return [doc.lstrip() for doc in _SEPARATOR.split(text.lstrip()) if doc.strip()]


def _head(doc: str) -> dict:
    """What Helm reads of a document (releaseutil.SimpleHead): apiVersion, kind, name and annotations."""
    loaded = yaml.load(doc, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return loaded if isinstance(loaded, dict) else {}


def sort_manifests(files: dict[str, str]) -> tuple[list[dict], list[dict]]:
    """releaseutil.SortManifests with InstallOrder: (hooks, manifests), each {"path", "kind", "content"}.

    `files` is what the engine rendered (template path -> text); partials, NOTES.txt and empty files are skipped.
    """
    hooks, generic = [], []
    for path in sorted(files):
        if posixpath.basename(path).startswith("_") or path.endswith("NOTES.txt") or not files[path].strip():
            continue
        for doc in split_manifests(files[path]):
            head = _head(doc)
            annotations = (head.get("metadata") or {}).get("annotations") or {}
            entry = {"path": path, "kind": head.get("kind") or "", "content": doc}
            if "helm.sh/hook" not in annotations:
                generic.append(entry)
                continue
            events = [event.strip().lower() for event in str(annotations["helm.sh/hook"]).split(",")]
            if all(event in HOOK_EVENTS for event in events):  # Helm skips a document with an unknown hook
                hooks.append(dict(entry, events=events))
    return _by_kind(hooks), _by_kind(generic)


def _by_kind(entries: list[dict]) -> list[dict]:
    """releaseutil's lessByKind, stable: known kinds in install order, then unknown kinds alphabetically."""
    rank = {kind: index for index, kind in enumerate(INSTALL_ORDER)}
    return sorted(entries, key=lambda e: (0, rank[e["kind"]], "") if e["kind"] in rank else (1, 0, e["kind"]))


def template_output(files: dict[str, str]) -> str:
    """What `helm template` prints for these rendered files (no --include-crds, hooks included)."""
    hooks, manifests = sort_manifests(files)
    release_manifest = "".join(f"---\n# Source: {m['path']}\n{m['content']}\n" for m in manifests)
    text = release_manifest.strip() + "\n"
    return text + "".join(f"---\n# Source: {h['path']}\n{h['content']}\n" for h in hooks)
