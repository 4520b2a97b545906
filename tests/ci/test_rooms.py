"""ci/ in three rooms (cluster, generate, release), each with one way in, importing downward only and never in a circle."""
from __future__ import annotations

import ast
import importlib
import subprocess
import sys

import pytest

from tests.helpers import REPO_ROOT

CI = REPO_ROOT / "ci"
ROOMS = ("cluster", "generate", "release")
# What each room may import of the others ("ci" is the floor, ci/__init__.py).
MAY_IMPORT = {"ci": set(), "cluster": {"ci"}, "generate": {"ci"}, "release": {"ci"}}


def module_name(path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def ci_imports(path, modules) -> set[str]:
    """The ci.* modules a file imports (relative imports resolved; `from X import name` counts X.name when that is a
    module, else X)."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            found |= {f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules else module
                      for alias in node.names}
    return {name for name in found if name == "ci" or name.startswith("ci.")}


def graph() -> dict[str, set[str]]:
    modules = {module_name(path): path for path in CI.rglob("*.py")}
    return {name: {m for m in ci_imports(path, modules) if m in modules} - {name} for name, path in modules.items()}


def room_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ROOMS else "ci"


class TestRooms:
    def test_should_have_three_rooms_and_the_floor_only(self):
        assert sorted(p.name for p in CI.iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(ROOMS)
        assert sorted(p.name for p in CI.glob("*.py")) == ["__init__.py"]

    def test_should_import_downward_only(self):
        upward = sorted(f"{module} imports {target}" for module, targets in graph().items() for target in targets
                        if room_of(target) != room_of(module) and room_of(target) not in MAY_IMPORT[room_of(module)])
        assert upward == []

    def test_should_import_without_a_circle(self):
        edges = graph()
        assert len(edges) >= 35

        def reaches(start, goal, seen=()):
            return any(n == goal or (n not in seen and reaches(n, goal, (*seen, n))) for n in edges.get(start, ()))
        circles = [m for m in edges if reaches(m, m)]
        assert circles == []

    def test_should_find_the_circle_it_forbids(self):
        # The check above must be able to fail: the old pair (go_parts <-> dynamo_operator) is a circle to it.
        edges = {"ci.cluster.go_parts": {"ci.cluster.dynamo_operator"},
                 "ci.cluster.dynamo_operator": {"ci.cluster.go_parts"}}

        def reaches(start, goal, seen=()):
            return any(n == goal or (n not in seen and reaches(n, goal, (*seen, n))) for n in edges.get(start, ()))
        assert all(reaches(m, m) for m in edges)

    @pytest.mark.parametrize("room", ROOMS)
    def test_should_list_every_verb_in_its_help(self, room):
        verbs = importlib.import_module(f"ci.{room}.__main__").VERBS
        result = subprocess.run([sys.executable, "-m", f"ci.{room}", "--help"], capture_output=True, text=True,
                                cwd=REPO_ROOT, timeout=60)
        assert result.returncode == 0, result.stderr
        assert [verb for verb in verbs if f"\n  {verb} " not in result.stdout] == []

    def test_should_refuse_an_unknown_verb_naming_the_verbs(self):
        result = subprocess.run([sys.executable, "-m", "ci.release", "publish"], capture_output=True, text=True,
                                cwd=REPO_ROOT, timeout=60)
        assert result.returncode == 2 and "invalid choice: 'publish'" in result.stderr and "'package'" in result.stderr

    def test_should_check_every_generated_file_in_one_command(self, shared_dir, monkeypatch):
        monkeypatch.setenv("GPT_OSS_SHARED_DIR", str(shared_dir))
        # The sizing tables take aiconfigurator a minute of CPU: tests/tools/test_sizing_tables.py
        # regenerates them where it is installed.
        result = subprocess.run([sys.executable, "-m", "ci.generate", "--check", "--skip", "sizing-tables"],
                                capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        for verb in ("schema", "dynamo-defaults", "trtllm-fields"):
            assert f"{verb}: up to date" in result.stdout
        assert "sizing-tables: left out (--skip)" in result.stdout
        assert "target-figures: left out (about 15 minutes; --slow runs it)" in result.stdout
