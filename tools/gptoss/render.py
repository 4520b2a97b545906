"""Render the chart with Helm's own engine (helm-python-sdk binds Helm v4's Go SDK), memoized, and parse it."""
from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Iterable

import helm_python

from .values import REPO_ROOT, load_values
from .yaml_text import load_yaml_all

CHART_DIR = REPO_ROOT / "charts" / "gpt-oss"
# The release the plan and the tests render by default: `helm install gpt-oss charts/gpt-oss -n llm`.
RELEASE_NAME = "gpt-oss"
NAMESPACE = "llm"
NOTES = f"{CHART_DIR.name}/templates/NOTES.txt"


class ChartRenderError(Exception):
    """Helm refused the values or a template failed; the message is Helm's."""


_chart_cache: dict[str, helm_python.Chart] = {}


def load_chart(chart_dir: Path = CHART_DIR) -> helm_python.Chart:
    key = str(chart_dir)
    if key not in _chart_cache:
        _chart_cache[key] = helm_python.Chart.load(chart_dir)
    return _chart_cache[key]


# Renders of equal inputs within one process (the chart does not change meanwhile): the merged values, release
# name and namespace -> Helm's output or its refusal. Many tests render the same overlay; Helm renders it once.
_render_cache: dict[str, dict[str, str] | ChartRenderError] = {}


def render_key(*parts) -> str:
    """A memo key of a render's inputs (the merged values, release, namespace, ...)."""
    return json.dumps(parts, sort_keys=True, default=repr)


def render_manifests(values_files=(), values=None, name=RELEASE_NAME, namespace=NAMESPACE,
                     fresh: bool = False) -> dict[str, str]:
    """Template path -> rendered text, NOTES.txt included; raises ChartRenderError with Helm's message.

    Memoized on the merged values (files read each call, so a changed file is a new key); fresh=True renders
    anew and leaves the memo alone (for tests about rendering itself, e.g. two renders being identical).
    """
    merged = load_values(values_files, values)
    key = render_key(merged, name, namespace)
    cached = None if fresh else _render_cache.get(key)
    if cached is None:
        try:
            cached = load_chart().render(merged, name=name, namespace=namespace, is_install=True)
        except helm_python.HelmError as error:
            cached = ChartRenderError(str(error))
        if not fresh:
            _render_cache[key] = cached
    if isinstance(cached, ChartRenderError):
        raise ChartRenderError(str(cached)) from cached
    return dict(cached)


# A template's documents by its rendered text, pickled (each caller gets objects of its own): renders of different
# values share most templates' text, and unpickling is many times faster than reading the YAML again.
_documents_cache: dict[str, bytes] = {}


def _documents(text: str) -> list[dict]:
    pickled = _documents_cache.get(text)
    if pickled is None:
        pickled = _documents_cache[text] = pickle.dumps([doc for doc in load_yaml_all(text) if doc],
                                                        protocol=pickle.HIGHEST_PROTOCOL)
    return pickle.loads(pickled)


def parse_manifests(manifests: dict[str, str], show_only: Iterable[str] | None = None) -> list[dict]:
    """The objects of rendered templates (NOTES.txt and empty documents left out), in template-path order."""
    wanted = None if show_only is None else {f"{CHART_DIR.name}/{path}" for path in show_only}
    if wanted is not None and not wanted <= manifests.keys():
        raise ChartRenderError(f"no such template(s): {sorted(wanted - manifests.keys())}")
    objects = []
    for path in sorted(manifests):
        if not path.endswith(".yaml") or (wanted is not None and path not in wanted):
            continue
        objects.extend(_documents(manifests[path]))
    return objects


def render_notes(values_files=(), values=None, name=RELEASE_NAME, namespace=NAMESPACE) -> str:
    return render_manifests(values_files, values, name=name, namespace=namespace)[NOTES]
