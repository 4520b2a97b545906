"""Package the chart reproducibly and publish it to an OCI registry, with the Helm SDK (helm-python-sdk).

usage:
  python -m ci.release package [--destination DIR] [--expect-version X.Y.Z]
  python -m ci.release push ARCHIVE oci://HOST/PATH [--plain-http] [--username U]   (password: env REGISTRY_PASSWORD)
  python -m ci.release pull oci://HOST/PATH/gpt-oss --version X.Y.Z [--digest sha256:...] [--destination DIR] [--plain-http]
  python -m ci.release check-version [--base REV]

package: the chart folder plus the overlays of values/ (as values/<overlay> inside the archive, so a chart
pulled from a registry brings its targets: `-f gpt-oss/values/agg.yaml`, Argo CD `valueFiles: [values/agg.yaml]`).
.helmignore keeps everything else out. Every file gets the same modification time, SOURCE_DATE_EPOCH or else
the commit time of the newest commit touching charts/ or values/, so the same sources give the same bytes.
push refuses a version the registry already has (a published version is never overwritten).
pull needs a version, and checks the manifest digest when one is given.
check-version: like chart-testing's check-version-increment, a change under charts/ (or values/, whose overlays
the archive carries) since the merge base with main (or REV) needs a higher Chart.yaml version than the base had;
it reads only the local clone.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import helm_python
import yaml

from . import REPO

CHART = REPO / "charts" / "gpt-oss"
OVERLAYS = REPO / "values"


class ReleaseError(Exception):
    """A release step cannot go on; the message says what to change."""


def chart_version(chart_dir: Path = CHART) -> str:
    return yaml.safe_load((chart_dir / "Chart.yaml").read_text())["version"]


def source_date_epoch() -> int:
    """The one modification time of every archived file."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return int(os.environ["SOURCE_DATE_EPOCH"])
    try:
        out = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%ct", "--", *PACKAGED_PATHS],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as error:
        raise ReleaseError(f"no SOURCE_DATE_EPOCH and no git history to take a timestamp from: {error}") from error
    if not out:
        raise ReleaseError("no commit touches charts/ or values/: set SOURCE_DATE_EPOCH")
    return int(out)


def stage(destination: Path, epoch: int, chart_dir: Path = CHART, overlays: Path = OVERLAYS) -> Path:
    """A copy of the chart with the overlays under values/, every path stamped with `epoch`."""
    staged = destination / chart_dir.name
    shutil.copytree(chart_dir, staged, symlinks=False)
    (staged / "values").mkdir(exist_ok=True)
    for overlay in sorted(overlays.glob("*.yaml")):
        shutil.copyfile(overlay, staged / "values" / overlay.name)
    for path in [staged, *staged.rglob("*")]:
        os.utime(path, (epoch, epoch), follow_symlinks=False)
    return staged


def package(destination: Path, expect_version: str | None = None, epoch: int | None = None,
            chart_dir: Path = CHART, overlays: Path = OVERLAYS) -> Path:
    """The chart archive <destination>/gpt-oss-<version>.tgz; the same sources give the same bytes."""
    version = chart_version(chart_dir)
    if expect_version is not None and expect_version != version:
        raise ReleaseError(f"the tag asks for version {expect_version}, but {chart_dir.name}/Chart.yaml says "
                           f"{version}: tag gpt-oss-{version}, or bump version in Chart.yaml")
    destination.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gpt-oss-package-") as scratch:
        staged = stage(Path(scratch), source_date_epoch() if epoch is None else epoch, chart_dir, overlays)
        return Path(helm_python.package(staged, destination=destination.resolve()))


def _client(plain_http: bool, credentials_file: Path | None) -> helm_python.RegistryClient:
    return helm_python.RegistryClient(plain_http=plain_http, credentials_file=credentials_file)


def _host(remote: str) -> str:
    return remote.removeprefix("oci://").split("/", 1)[0]


def _unreachable(text: str) -> bool:
    return "connection refused" in text or "no such host" in text or "i/o timeout" in text


def _explain(error: helm_python.HelmError, remote: str) -> ReleaseError:
    text = str(error)
    if _unreachable(text):
        return ReleaseError(f"cannot reach the registry {_host(remote)} ({remote}): {text}")
    return ReleaseError(f"{remote}: {text}")


def published_versions(client: helm_python.RegistryClient, chart_ref: str) -> list[str]:
    """The versions the registry holds for oci://HOST/PATH/NAME; none when the repository does not exist yet."""
    try:
        return client.tags(chart_ref)
    except helm_python.HelmError as error:
        text = str(error)
        # HTTP 404 as a whole number: a port such as 40427 in a refused connection's text is not one.
        if not _unreachable(text) and ("name unknown" in text or re.search(r"\b404\b", text)):
            return []
        raise _explain(error, chart_ref) from error


def push(archive: Path, remote: str, *, plain_http: bool = False, credentials_file: Path | None = None,
         username: str | None = None, password: str | None = None) -> dict:
    """Push the archive to oci://HOST/PATH, refusing a version the registry already has.

    Returns {"ref": oci://HOST/PATH/NAME, "version", "digest" (of the manifest), "archive_digest"}.
    """
    chart = helm_python.Chart.load(archive)
    name, version = chart.name, chart.version
    ref = f"{remote.rstrip('/')}/{name}"
    with _client(plain_http, credentials_file) as client:
        if username:
            try:
                client.login(_host(remote), username, password or "", plain_http=plain_http)
            except helm_python.HelmError as error:
                raise _explain(error, remote) from error
        if version in published_versions(client, ref):
            raise ReleaseError(f"{name} {version} is already published at {ref}: a published version is never "
                               "overwritten; bump version in Chart.yaml and add its CHANGELOG.md section")
        try:
            client.push(archive, remote)
            manifest = client.resolve(f"{ref}:{version}")
        except helm_python.HelmError as error:
            raise _explain(error, remote) from error
    return {"ref": ref, "version": version, "digest": manifest["digest"],
            "archive_digest": helm_python.digest(archive)}


def pull(chart_ref: str, version: str | None, destination: Path, *, digest: str | None = None,
         plain_http: bool = False, credentials_file: Path | None = None) -> Path:
    """Download oci://HOST/PATH/NAME at `version` (required) into destination; with digest, the manifest must match."""
    if not version:
        raise ReleaseError(f"{chart_ref}: no version given; pass one (--version X.Y.Z): an unpinned pull takes "
                           "whatever is newest and cannot be reproduced")
    destination.mkdir(parents=True, exist_ok=True)
    with _client(plain_http, credentials_file) as client:
        versions = published_versions(client, chart_ref)
        if version not in versions:
            raise ReleaseError(f"{chart_ref} has no version {version}; published: {', '.join(versions) or 'none'}")
        reference = f"{chart_ref}:{version}" + (f"@{digest}" if digest else "")
        # Helm names an archive pulled by digest NAME@sha256-HEX.tgz: pulled aside, then named NAME-VERSION.tgz.
        with tempfile.TemporaryDirectory(prefix=".pull-", dir=destination) as scratch:
            try:
                client.pull(reference, destination=scratch)
            except helm_python.HelmError as error:
                if "digest mismatch" in str(error):
                    raise ReleaseError(f"{chart_ref} {version}: the registry serves a different manifest than the "
                                       f"pinned digest {digest}: {error}") from error
                raise _explain(error, chart_ref) from error
            (archive,) = Path(scratch).glob("*.tgz")
            target = destination / f"{chart_ref.rstrip('/').rsplit('/', 1)[1]}-{version}.tgz"
            archive.replace(target)
    return target


# --- Version policy -------------------------------------------------------------------------------------------
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
                    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$")
# Where the target branch is found in a clone without network: the local branch, or the fetched remote one.
MAIN_REFS = ("main", "origin/main")


def semver_key(version: str) -> tuple:
    """Semantic Versioning 2.0.0 precedence: a pre-release sorts before its release; build metadata is ignored."""
    match = SEMVER.match(version)
    if not match:
        raise ReleaseError(f"{version!r} is not a semantic version (MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD])")
    major, minor, patch, pre = int(match[1]), int(match[2]), int(match[3]), match[4]
    identifiers = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")) if pre else ()
    return major, minor, patch, 0 if pre else 1, identifiers


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=check)


def main_ref(repo: Path = REPO) -> str | None:
    """The first of MAIN_REFS this clone has, or None (a shallow CI clone of one branch has neither)."""
    for ref in MAIN_REFS:
        if git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False).returncode == 0:
            return ref
    return None


# What the archive is made of: the chart, and the overlays it carries.
PACKAGED_PATHS = ("charts", "values")


def charts_changed(repo: Path, base: str) -> bool:
    """Whether charts/ or values/ in the working tree (uncommitted and untracked files too) differs from `base`."""
    changed = git(repo, "diff", "--quiet", base, "--", *PACKAGED_PATHS, check=False).returncode == 1
    untracked = git(repo, "ls-files", "--others", "--exclude-standard", "--", *PACKAGED_PATHS).stdout.strip()
    return changed or bool(untracked)


def version_at(repo: Path, rev: str) -> str | None:
    shown = git(repo, "show", f"{rev}:charts/gpt-oss/Chart.yaml", check=False)
    return yaml.safe_load(shown.stdout)["version"] if shown.returncode == 0 else None


def released_base(repo: Path = REPO) -> str | None:
    """The newest release tag (chart-releaser's gpt-oss-<version>) in HEAD's history, or None."""
    tags = git(repo, "tag", "--list", "gpt-oss-*", "--merged", "HEAD").stdout.split()
    versions = [tag.removeprefix("gpt-oss-") for tag in tags if SEMVER.match(tag.removeprefix("gpt-oss-"))]
    return f"gpt-oss-{max(versions, key=semver_key)}" if versions else None


def version_increment_problem(repo: Path, base: str) -> str | None:
    """Why charts/ (working tree) against `base` breaks the policy, or None when it holds."""
    if not charts_changed(repo, base):
        return None
    before, now = version_at(repo, base), chart_version(repo / "charts" / "gpt-oss")
    if before is None or semver_key(now) > semver_key(before):
        return None
    return (f"charts/ or values/ changed since {base} but charts/gpt-oss/Chart.yaml version {now} is not higher than "
            f"{before} there: bump version (semver) and add its CHANGELOG.md section")


# The room's verbs this main parses itself (ci/release/__main__.py hands them over whole).
OWN_VERBS = ("package", "push", "pull", "check-version")


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    pack = commands.add_parser("package", help="build build/gpt-oss-<version>.tgz")
    pack.add_argument("--destination", type=Path, default=REPO / "build")
    pack.add_argument("--expect-version", help="fail unless Chart.yaml has this version (the release tag's)")
    up = commands.add_parser("push", help="push an archive, refusing a published version")
    up.add_argument("archive", type=Path)
    up.add_argument("remote", help="oci://HOST/PATH (the chart name is appended)")
    up.add_argument("--plain-http", action="store_true")
    up.add_argument("--username")
    down = commands.add_parser("pull", help="pull a pinned version")
    down.add_argument("chart_ref", help="oci://HOST/PATH/NAME")
    down.add_argument("--version")
    down.add_argument("--digest")
    down.add_argument("--destination", type=Path, default=Path("."))
    down.add_argument("--plain-http", action="store_true")
    check = commands.add_parser("check-version", help="a change under charts/ bumps the version")
    check.add_argument("--base", help="the commit to compare with (default: the merge base with main)")
    args = parser.parse_args(argv)
    try:
        if args.command == "package":
            print(package(args.destination, args.expect_version))
        elif args.command == "push":
            result = push(args.archive, args.remote, plain_http=args.plain_http, username=args.username,
                          password=os.environ.get("REGISTRY_PASSWORD"))
            print(f"pushed {result['ref']}:{result['version']} manifest {result['digest']} "
                  f"archive {result['archive_digest']}")
        elif args.command == "check-version":
            base = args.base
            if base is None:
                ref = main_ref()
                if ref is None:
                    raise ReleaseError(f"none of {', '.join(MAIN_REFS)} in this clone: fetch main or pass --base")
                base = git(REPO, "merge-base", "HEAD", ref).stdout.strip()
            problem = version_increment_problem(REPO, base)
            if problem:
                raise ReleaseError(problem)
            print(f"version {chart_version()}: ok against {base}")
        else:
            print(pull(args.chart_ref, args.version, args.destination, digest=args.digest,
                       plain_http=args.plain_http))
    except ReleaseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0
