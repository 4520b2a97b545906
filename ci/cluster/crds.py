"""Fetch the upstream CRDs the tests read (pinned in ci/cluster/crds.json) into a cache folder, checking each sha256.

usage: python -m ci.cluster crds [--dest DIR] [--base-url URL] [--timeout SECONDS]
       python -m ci.cluster crds --where FILE

The project keeps no copy of an upstream file: each CRD is downloaded from its repository at a pinned commit
into DEST (default .cache/crds, git-ignored), one flat folder of files. A file whose sha256 differs from the
pinned one is refused (not written), naming the file and both hashes; a file already in DEST with the pinned
hash is kept. --base-url fetches from a mirror laid out like ../shared (<URL>/<group>/crds/<file>) instead.
A file the tests find before DEST (../shared, or GPT_OSS_CRDS_DIR: see below) is not fetched: it is checked
against its pin where it is, and a copy there that differs is refused, since the tests would read it first. On a
clone with ../shared beside it nothing is downloaded.
Standard library only, so it runs before any `pip install`. Exit 0 when every file is there and verified,
1 when one was refused or could not be fetched (one line on stderr, no traceback).

The tests find the CRDs with crd_search_path() / find_crd_file() below, in this order: ../shared
(GPT_OSS_SHARED_DIR) <group>/crds, the folders GPT_OSS_CRDS_DIR lists (os.pathsep-separated), then this cache.
--where FILE prints where that search finds FILE (for shell scripts such as ci/cluster/kind-setup.sh).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import NamedTuple

from . import HERE, REPO, shared_dir

LOCK = HERE / "crds.json"
DEFAULT_CACHE = REPO / ".cache" / "crds"
FIX = "run `python -m ci.cluster crds` (downloads the pinned upstream CRDs into .cache/crds)"


class PinnedCrd(NamedTuple):
    group: str   # the folder of ../shared it lives in: ../shared/<group>/crds/<name>
    name: str
    url: str
    sha256: str


def pinned_crds(lock: Path = LOCK) -> list[PinnedCrd]:
    """Every CRD file of the lock, in its order."""
    data = json.loads(lock.read_text())
    return [PinnedCrd(source["group"], f["name"], f["url"], f["sha256"])
            for source in data["sources"] for f in source["files"]]


def groups(lock: Path = LOCK) -> list[str]:
    return [source["group"] for source in json.loads(lock.read_text())["sources"]]


def crd_search_path(environ=None) -> tuple[Path, ...]:
    """The folders searched for CRD files, first match wins: ../shared's <group>/crds, GPT_OSS_CRDS_DIR, the cache."""
    environ = os.environ if environ is None else environ
    shared = shared_dir(environ)
    named = [Path(p) for p in (environ.get("GPT_OSS_CRDS_DIR") or "").split(os.pathsep) if p]
    return (*(shared / group / "crds" for group in groups()), *named, DEFAULT_CACHE)


def find_crd_file(name: str, environ=None) -> Path | None:
    """The first file called `name` in the search path, or None."""
    return next((folder / name for folder in crd_search_path(environ) if (folder / name).is_file()), None)


def missing_message(what: str, folders: tuple[Path, ...] | None = None, environ=None) -> str:
    """Why a test needing `what` skips: the folders searched and the fix."""
    folders = crd_search_path(environ) if folders is None else folders
    return (f"no {what} in {', '.join(map(str, folders))}: {FIX}, or set GPT_OSS_SHARED_DIR to the shared "
            "reference folder or GPT_OSS_CRDS_DIR to folders of CRD files")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class FetchError(Exception):
    """A download failed (network, HTTP status): one line for the user."""


def download(url: str, timeout: float) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (https or the mirror the user named)
            return response.read()
    except urllib.error.HTTPError as error:
        raise FetchError(f"cannot fetch {url}: HTTP {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        raise FetchError(f"cannot fetch {url}: {error.reason}") from None
    except (OSError, ValueError) as error:  # timeouts, resets, a malformed URL
        raise FetchError(f"cannot fetch {url}: {error}") from None


def write_atomically(path: Path, data: bytes) -> None:
    # A file in the cache is always a whole, verified one: an interrupted run leaves none half-written.
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as handle:
        handle.write(data)
    os.replace(handle.name, path)


def found_before(name: str, dest: Path, environ=None) -> Path | None:
    """The copy of `name` the tests read before dest's (in ../shared or GPT_OSS_CRDS_DIR), or None."""
    folders = [folder for folder in crd_search_path(environ)[:-1] if folder.resolve() != dest.resolve()]
    return next((folder / name for folder in folders if (folder / name).is_file()), None)


def fetch(dest: Path, base_url: str | None = None, timeout: float = 60.0) -> int:
    """Every pinned CRD into dest, verified, unless the tests find it first elsewhere (verified there); 0 when all
    are there, 1 when one was refused or unreachable."""
    out, err = sys.stdout, sys.stderr
    dest.mkdir(parents=True, exist_ok=True)
    fetched = kept = 0
    refused = []
    found: dict[Path, int] = {}
    for crd in pinned_crds():
        first = found_before(crd.name, dest)
        if first is not None:
            got = sha256_of(first)
            if got != crd.sha256:
                print(f"error: {first}: sha256 {got} does not match the pinned {crd.sha256} (ci/cluster/crds.json), and the "
                      "tests read it before any fetched copy; replace or remove it", file=err)
                refused.append(crd.name)
            else:
                found[first.parent] = found.get(first.parent, 0) + 1
            continue
        target = dest / crd.name
        if target.is_file() and sha256_of(target) == crd.sha256:
            kept += 1
            continue
        url = f"{base_url.rstrip('/')}/{crd.group}/crds/{crd.name}" if base_url else crd.url
        try:
            data = download(url, timeout)
        except FetchError as error:
            print(f"error: {error}", file=err)
            return 1
        got = hashlib.sha256(data).hexdigest()
        if got != crd.sha256:
            print(f"error: {crd.name}: sha256 {got} does not match the pinned {crd.sha256} (ci/cluster/crds.json); "
                  f"refused, not written (from {url})", file=err)
            refused.append(crd.name)
            continue
        write_atomically(target, data)
        fetched += 1
        print(f"fetched {crd.name} ({len(data)} bytes, sha256 {got[:12]}...) from {url}", file=out)
    total = fetched + kept
    refusals = f", {len(refused)} refused" if refused else ""
    if found:
        where = ", ".join(f"{count} in {folder}" for folder, count in found.items())
        print(f"{total + sum(found.values())} of {len(pinned_crds())} pinned CRDs ready: {sum(found.values())} verified "
              f"where the tests read them first ({where}), {fetched} fetched into {dest}, {kept} already there"
              + refusals, file=out)
    else:
        print(f"{total} of {total + len(refused)} pinned CRDs in {dest}: {fetched} fetched, {kept} already there"
              + refusals, file=out)
    if total and dest.resolve() != DEFAULT_CACHE.resolve():
        print(f"the tests read them with GPT_OSS_CRDS_DIR={dest}", file=out)
    return 1 if refused else 0


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=DEFAULT_CACHE,
                        help="folder to fetch into (default .cache/crds; the tests look there)")
    parser.add_argument("--base-url", help="mirror laid out like ../shared: <URL>/<group>/crds/<file>")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per download (default 60)")
    parser.add_argument("--where", metavar="FILE", help="print where the tests find FILE, fetch nothing")
    args = parser.parse_args(argv)
    if args.where:
        path = find_crd_file(args.where)
        if path is None:
            print(f"error: {missing_message(args.where)}", file=sys.stderr)
            return 1
        print(path)
        return 0
    try:
        return fetch(args.dest, args.base_url, args.timeout)
    except OSError as error:  # the destination cannot be written
        print(f"error: {error}", file=sys.stderr)
        return 1
