"""The Dynamo operator, built from the upstream source archives in ../shared/dynamo/operator (a Go part of its own).

The Go module proxy refuses the operator's module (docs/cluster-tests.md), so it cannot be pinned by module name
like ci/cluster/go/'s parts. Its SOURCE.md names four archives (the operator module, the platform chart users install it
with, and the two ai-dynamo API modules the operator requires) with their sha256. Here:

  1. each archive's sha256 is checked against SOURCE.md's table, read at build time (the project keeps no copy of
     an upstream file: a wrong or missing archive fails, naming it and both hashes);
  2. they are extracted into a scratch folder of the Go parts' cache (never into ../shared, which is read-only);
  3. the operator's go.mod is pointed at the extracted API modules (`go mod edit -replace`, as SOURCE.md shows), so
     the proxy is never asked for them (the grove API module's checksum-database lookup answers 404); every other
     module comes from the proxy and is checked against the operator's own go.sum (-mod=readonly, unchanged);
  4. `manager` (./cmd) and `crd-apply` (./cmd/crd-apply) are built, CGO off and -trimpath, as the upstream
     Dockerfile builds them; the CRDs (config/crd/bases) and the platform chart are kept beside them.

Result: $GPT_OSS_GO_CACHE/dynamo-operator-<key>/{bin/manager, bin/crd-apply, crds/, platform/, build.json}, key =
the archives' sha256 (as SOURCE.md pins them) and this recipe's version. python -m ci.cluster go-parts builds it with the other
parts (`build dynamo-operator`, `where dynamo-operator`); python -m ci.cluster node-images puts it in the operator's image.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import shared_dir
from .go_cache import building, cache_root, drop_other_keys

PART = "dynamo-operator"
RECIPE = 1  # bump when what build() makes from the same archives changes
OPERATOR_ARCHIVE = "dynamo-operator-"  # prefixes of the archive names in SOURCE.md's table
PLATFORM_ARCHIVE = "dynamo-platform-chart-"
OPERATOR_MODULE = "dynamo/deploy/operator"  # where each archive extracts (git archive of a sub-folder)
PLATFORM_CHART = "dynamo/deploy/helm/charts/platform"
API_MODULES = {"github.com/ai-dynamo/grove/operator/api": "grove/operator/api",
               "github.com/ai-dynamo/snapshot/api": "snapshot/api"}
BINARIES = {"manager": "./cmd", "crd-apply": "./cmd/crd-apply"}
# The operator's image: the platform chart's repository, tagged with the chart's appVersion marked as a development
# build of the archives' commit (this is main between 1.4.0 and 1.5.0, not the 1.5.0 release).
IMAGE_REPOSITORY = "nvcr.io/nvidia/ai-dynamo/kubernetes-operator"


def source_dir() -> Path:
    return shared_dir() / "dynamo" / "operator"


@dataclass(frozen=True)
class Source:
    """SOURCE.md's table: archive file name -> sha256, and the upstream commit of the operator and platform chart."""
    archives: dict[str, str]
    commit: str

    def archive(self, prefix: str) -> str:
        names = [name for name in self.archives if name.startswith(prefix)]
        if len(names) != 1:
            raise SystemExit(f"{source_dir() / 'SOURCE.md'}: expected one archive named {prefix}*, found {names}")
        return names[0]


def read_source(folder: Path | None = None) -> Source:
    """Parse SOURCE.md's table: rows `| `<name>.tar.gz` | `<sha256>` | what | repository, commit |`."""
    path = (folder or source_dir()) / "SOURCE.md"
    if not path.is_file():
        raise SourceMissing(f"no {path}: the Dynamo operator's source archives are in the shared reference folder "
                            "(GPT_OSS_SHARED_DIR, default ../shared)")
    archives, commit = {}, ""
    for line in path.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 4:
            continue
        name, digest = cells[0].strip("`"), cells[1].strip("`")
        if name.endswith(".tar.gz") and re.fullmatch(r"[0-9a-f]{64}", digest):
            archives[name] = digest
            found = re.search(r"\b([0-9a-f]{40})\b", cells[3])
            if name.startswith(OPERATOR_ARCHIVE) and found:
                commit = found.group(1)
    if not archives or not commit:
        raise SystemExit(f"{path}: no archive table with sha256 and the operator's commit")
    return Source(archives, commit)


class SourceMissing(Exception):
    """The shared archives are not on this machine (a clone without ../shared)."""


def key(source: Source | None = None) -> str:
    source = source or read_source()
    digest = hashlib.sha256(json.dumps({"archives": source.archives, "recipe": RECIPE}, sort_keys=True).encode())
    return digest.hexdigest()[:16]


def folder(source: Source | None = None) -> Path:
    return cache_root() / f"{PART}-{key(source)}"


def built(source: Source | None = None) -> Path | None:
    """The part's folder when the binaries, CRDs and platform chart are all there."""
    try:
        target = folder(source)
    except SourceMissing:
        return None
    done = all((target / "bin" / name).is_file() for name in BINARIES) and (target / "crds").is_dir() and (
        target / "platform" / "components" / "operator" / "Chart.yaml").is_file()
    return target if done else None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(source: Source, folder_: Path | None = None) -> None:
    """Every archive of the table present with its sha256, or SystemExit naming each that is not."""
    where = folder_ or source_dir()
    problems = []
    for name, expected in sorted(source.archives.items()):
        path = where / name
        if not path.is_file():
            problems.append(f"{name}: missing from {where}")
            continue
        actual = sha256_of(path)
        if actual != expected:
            problems.append(f"{name}: sha256 {actual}, SOURCE.md pins {expected}")
    if problems:
        raise SystemExit("the Dynamo operator's archives do not match SOURCE.md:\n  " + "\n  ".join(problems))


def extract(archive: Path, into: Path) -> None:
    """A git archive, extracted with tarfile's `data` filter: no absolute paths, links out of the tree or devices."""
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")


@functools.lru_cache(maxsize=None)
def release() -> str:
    """The operator component's appVersion in the platform chart archive (what its Deployment passes as
    --operator-version), e.g. 1.5.0; read from the archive, whether or not the part is built."""
    import yaml
    source = read_source()
    member = f"{PLATFORM_CHART}/components/operator/Chart.yaml"
    with tarfile.open(source_dir() / source.archive(PLATFORM_ARCHIVE)) as tar:
        return str(yaml.safe_load(tar.extractfile(member).read())["appVersion"])


def image() -> str:
    """The operator image's name: <repository>:<appVersion>-dev.<commit[:8]>, e.g. ...:1.5.0-dev.2a6da14c."""
    return f"{IMAGE_REPOSITORY}:{release()}-dev.{read_source().commit[:8]}"


def build() -> Path:
    """Verify, extract and build into the cache (once per key); returns the part's folder."""
    source = read_source()
    done = built(source)
    if done:
        print(f"{PART}: cached in {done}", flush=True)
        drop_other_keys(PART, done)
        return done
    verify(source)
    target = folder(source)
    started = time.monotonic()
    with building(PART, target) as scratch:
        src = scratch / "src"
        src.mkdir()
        for name in sorted(source.archives):
            extract(source_dir() / name, src)
        module = src / OPERATOR_MODULE
        env = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-mod=readonly -buildvcs=false"}
        replaces = [f"-replace={path}={os.path.relpath(src / folder_, module)}" for path, folder_ in API_MODULES.items()]
        subprocess.run(["go", "mod", "edit", *replaces], cwd=module, env=env, check=True)
        times = {}
        for name, package in BINARIES.items():
            print(f"{PART}: go build {package} -> {name}", flush=True)
            began = time.monotonic()
            subprocess.run(["go", "build", "-trimpath", "-o", str(scratch / "bin" / name), package],
                           cwd=module, env=env, check=True)
            times[name] = round(time.monotonic() - began, 1)
        shutil.copytree(module / "config" / "crd" / "bases", scratch / "crds")
        shutil.move(str(src / PLATFORM_CHART), scratch / "platform")
        shutil.rmtree(src)
        (scratch / "build.json").write_text(json.dumps({
            "commit": source.commit, "archives": source.archives, "recipe": RECIPE, "seconds": times,
            "go": subprocess.run(["go", "version"], capture_output=True, text=True).stdout.strip(),
            "binaries": {name: sha256_of(scratch / "bin" / name) for name in BINARIES}}, indent=1))
    print(f"{PART}: built {', '.join(BINARIES)} from {source.commit[:12]} in {time.monotonic() - started:.0f}s "
          f"-> {target / 'bin'}", flush=True)
    drop_other_keys(PART, target)
    return target
