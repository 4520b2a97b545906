"""Build the Go programs the cluster tier runs (Kubernetes, etcd, operators) from modules pinned in go.sum files.

    python -m ci.cluster go-parts build [PART ...]   builds each part that is not in the cache yet (all parts by default)
    python -m ci.cluster go-parts where PART         prints the part's bin folder; exits 1 when it is not built
    python -m ci.cluster go-parts list               each part, its cache key and whether it is built

One part is not a folder of ci/cluster/go/: dynamo-operator, built from the source archives in ../shared/dynamo/operator
(ci/cluster/dynamo_operator.py: the Go module proxy refuses the operator's module), cached the same way under
the archives' sha256.

A part is a folder ci/cluster/go/<part>/ holding a go.mod (with `tool` lines naming its main packages), its go.sum and a
build.json: {"binaries": {"<name>": "<main package>"}, "ldflags": [...], "gcflags": "...", "env": {...}}
("gcflags": "all=-N -l" turns optimizations off, for a part that shares no compile: docs/testing.md). "env" is the
environment of every go command run on the part, its build and `go mod download` (module_dir) alike: a part whose go.mod
names a Go newer than the machine's says which toolchain there ({"GOTOOLCHAIN": "go1.27.3"}: the go command fetches
that toolchain from the module proxy once per machine), and nothing else repeats it. A binary whose
pins must differ from the part's (etcd beside Kubernetes) comes from a nested module: "<folder>:<main package>". An ldflag may name the
version a module is pinned at in go.mod: {version:MODULE}, {number:MODULE}, {major:MODULE}, {minor:MODULE} (v1.37.2 ->
1.37.2, 1, 37), so the stamp cannot drift from the pin. Each part is built into $GPT_OSS_GO_CACHE (default ~/.cache/gpt-oss/go)
/<part>-<key>/bin, where key hashes build.json and every go.mod and go.sum of the part: a changed pin builds anew, an unchanged one
is reused. go.sum is checked by the go command (-mod=readonly), so a module whose hash differs fails the build.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from . import HERE, dynamo_operator
from .go_cache import building, cache_root, drop_other_keys

PARTS = HERE / "go"


def parts() -> list[str]:
    return sorted([p.name for p in PARTS.iterdir() if (p / "build.json").is_file()] + [dynamo_operator.PART])


def pin_files(part: str) -> list[Path]:
    """What a part's build depends on: build.json, and go.mod and go.sum of its module and any nested one."""
    folder = PARTS / part
    return [folder / "build.json"] + sorted(p for p in folder.rglob("go.*") if p.name in ("go.mod", "go.sum"))


def key(part: str) -> str:
    if part == dynamo_operator.PART:
        return dynamo_operator.key()
    digest = hashlib.sha256()
    for path in pin_files(part):
        digest.update(str(path.relative_to(PARTS / part)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def bin_dir(part: str) -> Path:
    if part == dynamo_operator.PART:
        return dynamo_operator.folder() / "bin"
    return cache_root() / f"{part}-{key(part)}" / "bin"


def built(part: str) -> Path | None:
    """The part's bin folder when every binary of its build.json is there."""
    if part == dynamo_operator.PART:
        done = dynamo_operator.built()
        return done / "bin" if done else None
    folder = bin_dir(part)
    names = json.loads((PARTS / part / "build.json").read_text())["binaries"]
    return folder if all((folder / name).is_file() for name in names) else None


def go_env(part: str, goflags: str = "-mod=readonly") -> dict[str, str]:
    """The environment of a go command on the part: this process's, GOFLAGS, then the part's build.json "env" (its
    GOTOOLCHAIN, when its go.mod needs a newer Go than the machine has)."""
    spec = json.loads((PARTS / part / "build.json").read_text())
    return {**os.environ, "GOFLAGS": goflags, **spec.get("env", {})}


def pinned_versions(part: str) -> dict[str, str]:
    """Each module's version as go.mod requires it (single-line and block requires)."""
    versions = {}
    for line in (PARTS / part / "go.mod").read_text().splitlines():
        match = re.match(r"^\s*(?:require\s+)?([\w.\-/]+\.[\w.\-/]+)\s+(v\S+)", line)
        if match:
            versions[match.group(1)] = match.group(2)
    return versions


def expand(flag: str, versions: dict[str, str]) -> str:
    def version_of(match: re.Match) -> str:
        what, module = match.group(1), match.group(2)
        if module not in versions:
            raise SystemExit(f"build.json names {module}, which go.mod does not require")
        numbers = re.match(r"v(\d+)\.(\d+)", versions[module])
        return {"version": versions[module], "number": versions[module][1:], "major": numbers.group(1),
                "minor": numbers.group(2)}[what]
    return re.sub(r"\{(version|number|major|minor):([^}]+)\}", version_of, flag)


def build(part: str) -> Path:
    """Builds the part into the cache (once); returns its bin folder."""
    if part == dynamo_operator.PART:
        return dynamo_operator.build() / "bin"
    done = built(part)
    if done:
        print(f"{part}: cached in {done}", flush=True)
        drop_other_keys(part, done.parent)
        return done
    spec = json.loads((PARTS / part / "build.json").read_text())
    versions = pinned_versions(part)
    ldflags = " ".join(expand(flag, versions) for flag in spec.get("ldflags", []))
    env = go_env(part, "-mod=readonly -buildvcs=false")
    target = bin_dir(part).parent
    started = time.monotonic()
    with building(part, target) as scratch:
        for name, package in spec["binaries"].items():
            # "package" or "<nested module folder>:package" (a module of its own, with its own pins)
            module_dir, _, package = package.rpartition(":")
            print(f"{part}: go build {package} -> {name}", flush=True)
            gcflags = ["-gcflags", spec["gcflags"]] if spec.get("gcflags") else []
            output = str(scratch / "bin" / name)
            subprocess.run(["go", "build", "-trimpath", *gcflags, "-ldflags", ldflags, "-o", output, package],
                           cwd=PARTS / part / module_dir, env=env, check=True)
        (scratch / "go.sum").write_bytes((PARTS / part / "go.sum").read_bytes())
    print(f"{part}: built {', '.join(spec['binaries'])} in {time.monotonic() - started:.0f}s -> {target / 'bin'}",
          flush=True)
    drop_other_keys(part, target)
    return target / "bin"


def module_dir(part: str, module: str) -> Path:
    """Where the Go module cache holds `module` at the version the part's go.mod selects, downloaded and checked
    against its go.sum when missing: the tests read a controller's own files (its CRDs) from there."""
    try:
        result = subprocess.run(["go", "mod", "download", "-json", module], cwd=PARTS / part, capture_output=True,
                                text=True, timeout=600, env=go_env(part))
    except FileNotFoundError:
        raise LookupError(f"{module} of {part}: no go command on PATH") from None
    info = json.loads(result.stdout or "{}")
    if result.returncode or info.get("Error") or not info.get("Dir"):
        raise LookupError(f"{module} of {part}: {info.get('Error') or result.stderr.strip()}")
    return Path(info["Dir"])


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    build_parser = sub.add_parser("build")
    build_parser.add_argument("parts", nargs="*")
    where_parser = sub.add_parser("where")
    where_parser.add_argument("part")
    sub.add_parser("list")
    args = parser.parse_args(argv)
    if args.command == "build":
        for part in args.parts or parts():
            try:
                build(part)
            except dynamo_operator.SourceMissing as missing:
                if os.environ.get("CI", "").strip().lower() == "true" or args.parts:
                    raise SystemExit(f"{part}: {missing}") from None
                print(f"{part}: not built: {missing}", flush=True)  # a clone without ../shared
        return 0
    if args.command == "where":
        folder = built(args.part)
        if folder is None:
            print(f"{args.part} is not built: python -m ci.cluster go-parts build {args.part}", file=sys.stderr)
            return 1
        print(folder)
        return 0
    for part in parts():
        try:
            print(f"{part}\t{key(part)}\t{'built' if built(part) else 'not built'}")
        except dynamo_operator.SourceMissing as missing:
            print(f"{part}\t-\tno source: {missing}")
    return 0
