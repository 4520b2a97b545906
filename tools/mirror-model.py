#!/usr/bin/env python3
"""Copy the pinned model revision to a folder, an S3 bucket or an OCI registry, with its manifest.

usage: tools/mirror-model.py [--from-dir DIR | --endpoint URL] [--model ID] [--revision SHA] [--ignore PATTERN ...]
                             [--tiktoken URL_OR_FILE | --no-tiktoken] [--work-dir DIR] [--json] DESTINATION
DESTINATION is one of
  a folder (or file:///path)       files and model-manifest.json, to put on a PVC (modelCache.source=pvc)
  s3://BUCKET/PREFIX                [--s3-endpoint URL] [--region R] [--path-style]; keys: boto3's usual chain
                                    (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE)  (modelCache.source=s3)
  oci://REGISTRY/REPOSITORY[:TAG]   [--plain-http] [--username U, password in env REGISTRY_PASSWORD; else
                                    $DOCKER_CONFIG/config.json or ~/.docker/config.json]  (modelCache.source=oci)
The revision comes from the Hugging Face Hub (HF_ENDPOINT or --endpoint for a mirror; HF_TOKEN when needed),
checked against the Hub's hashes, or from --from-dir (a folder holding that revision's files, checked first against
its model-manifest.json, else the Hub's listing of the revision: names, sizes, then hashes). Model id,
revision, ignore patterns and the vocabulary (o200k_base.tiktoken, checked against its sha256) default to the
chart's values.yaml. Every copy gets model-manifest.json: the model id, the revision and each file's path,
size and sha256; it is written last, so an interrupted copy has none and is refused. The tool prints the
manifest's sha256 (modelCache.manifestSha256) and, for OCI, the image digest (modelCache.oci.digest), with the
values to install with. --ca-bundle FILE trusts a private CA besides the public roots. docs/model-sources.md.
Exit codes (docs/tools.md): 0 copied; 1 the copy cannot be made; 2 a bad command line, destination or path argument,
or a missing module; 3 a bug (GPT_OSS_DEBUG=1 shows its traceback); each refusal is one `Error:` line on stderr.
"""
from __future__ import annotations

import argparse
import fnmatch
import hashlib
import importlib.util
import json
import os
import shutil
import stat
import sys
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

try:
    from gptoss import missing_module, run
except ModuleNotFoundError:  # python -I or -P: this file's folder, and so tools/gptoss, is not on sys.path
    print(f"Error: {sys.executable} does not look for modules beside tools/mirror-model.py (python -I or -P): run "
          ".venv/bin/python tools/mirror-model.py (set up the venv once: python3 -m venv .venv && .venv/bin/pip "
          "install -r requirements-test.txt)", file=sys.stderr)
    raise SystemExit(2) from None

try:
    import yaml

    # The chart's own module (the download Job runs it too), linked into tools/gptoss: one implementation of the
    # manifest and the clients. Python puts this file's folder first on sys.path, so the package is `gptoss` here.
    from gptoss import inputs, model_copy
    from gptoss.model_copy import MANIFEST, TIKTOKEN_PATH, CopyError
except ModuleNotFoundError as error:
    print(missing_module(error, "tools/mirror-model.py"), file=sys.stderr)
    raise SystemExit(2) from None

REPO = Path(__file__).resolve().parent.parent
CHART = REPO / "charts" / "gpt-oss"

# Files at least this large get an image layer of their own; smaller ones share one.
OWN_LAYER = 64 * 1024 * 1024
ARCHITECTURES = ("amd64", "arm64")
S3_PART = 8 * 1024 * 1024
# Bounds on what is read into memory: o200k_base.tiktoken is ~3.5 MB, a CA bundle a few KiB.
MAX_VOCABULARY = 16 * 1024 * 1024
MAX_CA_BUNDLE = 1024 * 1024
DESTINATIONS = "a folder (made if missing; or file:///path), s3://BUCKET/PREFIX, or oci://REGISTRY/REPOSITORY[:TAG]"
SET_UP = "set up the project's venv once (python3 -m venv .venv && .venv/bin/pip install -r requirements-test.txt)"
# Names a refusal lists at most (a folder that is not the revision may miss all of its files).
SHOWN = 5


class UsageError(Exception):
    """A command line the tool cannot run (a bad option, destination or path argument): exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors and no abbreviations, as tools/plan.py's."""

    def __init__(self, **kwargs):
        super().__init__(allow_abbrev=False, **kwargs)

    def error(self, message: str):
        raise UsageError(message)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def chart_defaults() -> dict:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    return {"model": values["model"]["id"], "revision": values["model"]["revision"],
            "ignore": values["modelCache"]["download"]["ignorePatterns"],
            "tiktoken_url": values["model"]["tiktoken"]["url"], "tiktoken_sha256": values["model"]["tiktoken"]["sha256"]}


# --- the files of the revision --------------------------------------------------------------------------------

def hub_endpoint(args) -> str:
    return (args.endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def from_hub(args, work: Path) -> tuple[Path, list[dict]]:
    """The revision's files from the Hub into the work folder, each checked against the Hub's size and hash;
    a rerun with the same --work-dir resumes where the last one stopped."""
    endpoint = hub_endpoint(args)
    token = os.environ.get("HF_TOKEN") or None
    folder = work / "hub"
    entries = model_copy.hub_entries(endpoint, args.model, args.revision, args.ignore, token)
    log(f"downloading {args.model}@{args.revision} from {endpoint} into {folder}: {len(entries)} files")
    problems = []
    for entry in entries:
        opener = model_copy.hub_opener(endpoint, args.model, args.revision, entry, token)
        problem = model_copy.fetch_file(folder, entry, opener, log)
        if problem:
            problems.append(f"{entry['path']}: {problem}")
    if problems:
        raise CopyError(f"the download from {endpoint} differs from the Hub's record: " + "; ".join(problems))
    return folder, [{"path": e["path"], "size": e["size"], "sha256": e["sha256"]} for e in entries]


def revision_record(args, folder: Path) -> tuple[list[dict], str]:
    """The files of the revision --from-dir claims to hold, each with its size and hash, and who lists them: the
    folder's model-manifest.json (a copy this tool or the chart's Job made, naming --model@--revision), else the
    Hub's listing of that commit (which never changes)."""
    manifest_path = folder / MANIFEST
    if os.path.lexists(manifest_path):
        data = inputs.read_file(manifest_path, f"--from-dir {folder}: {MANIFEST}", model_copy.MAX_MANIFEST)
        manifest = model_copy.read_manifest(data, str(manifest_path), args.model, args.revision)
        return [{**f, "listed_by": MANIFEST} for f in manifest["files"]], str(manifest_path)
    endpoint = hub_endpoint(args)
    try:
        entries = model_copy.hub_entries(endpoint, args.model, args.revision, args.ignore,
                                         os.environ.get("HF_TOKEN") or None)
    except (CopyError, OSError) as error:
        raise CopyError(f"cannot check --from-dir {folder} against {args.model}@{args.revision}: {error}; allowed: a "
                        "Hub that lists the revision's files (--endpoint URL of a mirror, or HF_ENDPOINT), or a folder "
                        f"holding the {MANIFEST} of a copy of that revision") from None
    return entries, f"the Hub's listing at {endpoint}"


def listed(names: list[str]) -> str:
    """At most SHOWN names, then how many more."""
    return ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def from_dir(args) -> tuple[Path, list[dict]]:
    """The files of --from-dir, checked against the revision's record (revision_record): every file it lists
    present, a regular file of its size (all checked before any is hashed), then of its hash. Files it does not
    list are not copied."""
    folder = Path(args.from_dir).resolve()
    record, where = revision_record(args, folder)
    record = [entry for entry in record if entry["path"] != TIKTOKEN_PATH]  # the vocabulary comes from --tiktoken
    if not record:
        raise CopyError(f"{where} lists no files of {args.model}@{args.revision}")
    missing, wrong = [], []
    for entry in record:
        try:
            info = os.lstat(folder / entry["path"])
        except (FileNotFoundError, NotADirectoryError):
            missing.append(entry["path"])
            continue
        if not stat.S_ISREG(info.st_mode):
            wrong.append(f"{entry['path']} ({inputs.kind(info.st_mode)})")
        elif info.st_size != entry["size"]:
            wrong.append(f"{entry['path']} ({info.st_size} bytes, listed {entry['size']})")
    total = sum(entry["size"] for entry in record)
    what = (f"--from-dir {folder} is not {args.model}@{args.revision} as {where} lists it ({len(record)} files, "
            f"{total} bytes)")
    allowed = (f"allowed: a folder holding every file of that revision at its size (ignore patterns {args.ignore}), "
               "e.g. what `hf download` or this tool wrote")
    if missing or wrong:
        parts = ([f"missing {len(missing)}: {listed(missing)}"] if missing else []) + (
            [f"wrong size or kind {len(wrong)}: {listed(wrong)}"] if wrong else [])
        raise CopyError(f"{what}: " + "; ".join(parts) + f"; {allowed}")
    names = {entry["path"] for entry in record}
    unlisted = sorted(name for name, _ in model_copy.walk_files(folder)  # lstat only: nothing else is opened
                      if name not in names and name != TIKTOKEN_PATH and not model_copy.not_part_of_a_copy(name)
                      and not any(fnmatch.fnmatch(name, pattern) for pattern in args.ignore))
    if unlisted:
        log(f"not copied, not files of {args.model}@{args.revision}: {listed(unlisted)}")
    log(f"hashing the {len(record)} files of {folder} ({total} bytes) against {where}")
    problems = []
    for entry in record:
        problem = model_copy.check_file(folder / entry["path"], entry, root=folder)
        if problem:
            problems.append(f"{entry['path']} ({problem})")
    if problems:
        raise CopyError(f"{what}: different content {len(problems)}: {listed(problems)}; {allowed}")
    return folder, [{"path": e["path"], "size": e["size"], "sha256": e["sha256"]} for e in record]


def vocabulary(args, work: Path) -> Path | None:
    """o200k_base.tiktoken from a URL or file, checked against the sha256 the chart pins."""
    if args.no_tiktoken:
        return None
    source = args.tiktoken
    if "://" in source:
        log(f"fetching {source}")
        try:
            with urllib.request.urlopen(source, timeout=60) as response:
                data = model_copy.read_limited(response, MAX_VOCABULARY, f"the vocabulary at {source}")
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", None) or error
            raise CopyError(f"cannot fetch the vocabulary --tiktoken {source} ({reason}); allowed: a reachable URL, "
                            "--tiktoken FILE (a copy of o200k_base.tiktoken), or --no-tiktoken (then set "
                            "model.tiktoken.url to a URL the pods reach)") from None
    else:
        data = inputs.read_file(source, f"--tiktoken {source}", MAX_VOCABULARY)
    digest = hashlib.sha256(data).hexdigest()
    if digest != args.tiktoken_sha256:
        raise CopyError(f"{source} has sha256 {digest}, but the chart pins {args.tiktoken_sha256} "
                        "(model.tiktoken.sha256; --tiktoken-sha256 for another)")
    path = work / "o200k_base.tiktoken"
    path.write_bytes(data)
    return path


# --- destinations -----------------------------------------------------------------------------------------------

def to_folder(destination: Path, sources: dict[str, Path], manifest: bytes) -> dict:
    destination.mkdir(parents=True, exist_ok=True)
    (destination / MANIFEST).unlink(missing_ok=True)  # an interrupted copy must not look complete
    for relative, source in sources.items():
        target = destination / relative
        if target.resolve() == source.resolve():
            continue
        found = model_copy._lstat(target)
        if found is not None and not stat.S_ISREG(found.st_mode):  # a link would be written through
            raise CopyError(f"{target} is {inputs.kind(found.st_mode)}, where the copy writes the file {relative}; "
                            f"allowed: a destination folder whose {relative} is a regular file or absent")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    (destination / MANIFEST).write_bytes(manifest)
    return {"folder": str(destination)}


def to_s3(url: str, args, sources: dict[str, Path], manifest: bytes) -> dict:
    from boto3.s3.transfer import TransferConfig

    bucket, _, prefix = url.removeprefix("s3://").partition("/")
    prefix = prefix.strip("/")
    client = model_copy.s3_client(args.s3_endpoint, args.region, args.path_style)
    # Parts of 8 MiB: a file larger than one part is a multipart upload (its ETag is then no MD5 of the file).
    transfer = TransferConfig(multipart_threshold=S3_PART, multipart_chunksize=S3_PART)
    key = model_copy.s3_key(prefix, MANIFEST)
    try:
        client.delete_object(Bucket=bucket, Key=key)
        multipart = 0
        for relative, source in sources.items():
            object_key = model_copy.s3_key(prefix, relative)
            log(f"  s3://{bucket}/{object_key} ({source.stat().st_size} bytes)")
            client.upload_file(str(source), bucket, object_key, Config=transfer)
            multipart += source.stat().st_size > S3_PART
        client.put_object(Bucket=bucket, Key=key, Body=manifest, ContentType="application/json")
    except CopyError:
        raise
    except Exception as error:  # noqa: BLE001
        raise model_copy.s3_error(error, bucket, key, args.s3_endpoint) from None
    return {"bucket": bucket, "prefix": prefix, "multipartUploads": multipart}


def layer_tar(path: Path, members: list[tuple[str, Path]]) -> tuple[str, int]:
    """An uncompressed, reproducible layer: the files at their paths, root-owned, mode 0644, mtime 0."""
    folders = sorted({str(Path(name).parents[i]) for name, _ in members for i in range(len(Path(name).parts) - 1)})
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        for folder in folders:
            info = tarfile.TarInfo(folder)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
            tar.addfile(info)
        for name, source in members:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = source.stat().st_size, 0o644, 0
            with open(source, "rb") as data:
                tar.addfile(info, data)
    return "sha256:" + model_copy.sha256_file(path), path.stat().st_size


def to_oci(reference: str, args, sources: dict[str, Path], manifest: bytes, manifest_sha256: str, work: Path) -> dict:
    host, repository, tag = model_copy.split_reference(reference)
    tag = tag or args.revision[:12]
    if tag.startswith("sha256:"):
        raise CopyError(f"{reference}: push to a tag (or none: {args.revision[:12]}), the digest is the result")
    credentials = None
    if args.username:
        credentials = (args.username, os.environ.get("REGISTRY_PASSWORD", ""))
    else:
        credentials = model_copy.docker_credentials(host, [docker_config()])
    registry = model_copy.Registry(host, args.plain_http, credentials)
    manifest_file = work / MANIFEST
    manifest_file.write_bytes(manifest)
    small = [(r, s) for r, s in sources.items() if s.stat().st_size < OWN_LAYER]
    groups = [[(r, s)] for r, s in sources.items() if s.stat().st_size >= OWN_LAYER]
    groups += [small] if small else []
    groups.append([(MANIFEST, manifest_file)])  # last: the manifest lands after every file it lists
    layers = []
    for number, members in enumerate(groups):
        tar = work / f"layer-{number}.tar"
        digest, size = layer_tar(tar, members)
        uploaded = registry.push_blob(repository, tar, digest, size)
        log(f"  layer {number} {digest} ({size} bytes, {len(members)} file(s)){'' if uploaded else ', already there'}")
        layers.append({"mediaType": model_copy.MEDIA_LAYER, "digest": digest, "size": size})
        tar.unlink()
    annotations = {"org.opencontainers.image.title": args.model, "org.opencontainers.image.revision": args.revision,
                   "gpt-oss.model-copy.manifest-sha256": manifest_sha256}
    entries = []
    for arch in ARCHITECTURES:
        config = json.dumps({"architecture": arch, "os": "linux", "config": {},
                             "rootfs": {"type": "layers", "diff_ids": [layer["digest"] for layer in layers]}},
                            sort_keys=True).encode()
        config_file = work / f"config-{arch}.json"
        config_file.write_bytes(config)
        config_digest = "sha256:" + hashlib.sha256(config).hexdigest()
        registry.push_blob(repository, config_file, config_digest, len(config))
        image = json.dumps({"schemaVersion": 2, "mediaType": model_copy.MEDIA_MANIFEST,
                            "config": {"mediaType": model_copy.MEDIA_CONFIG, "digest": config_digest,
                                       "size": len(config)},
                            "layers": layers, "annotations": annotations}, sort_keys=True).encode()
        image_digest = registry.push_manifest(repository, "sha256:" + hashlib.sha256(image).hexdigest(), image,
                                              model_copy.MEDIA_MANIFEST)
        entries.append({"mediaType": model_copy.MEDIA_MANIFEST, "digest": image_digest, "size": len(image),
                        "platform": {"architecture": arch, "os": "linux"}})
    index = json.dumps({"schemaVersion": 2, "mediaType": model_copy.MEDIA_INDEX, "manifests": entries,
                        "annotations": annotations}, sort_keys=True).encode()
    digest = registry.push_manifest(repository, tag, index, model_copy.MEDIA_INDEX)
    return {"repository": f"{host}/{repository}", "tag": tag, "digest": digest}


def values_for(destination: str, args, result: dict, manifest_sha256: str) -> dict:
    cache = {"manifestSha256": manifest_sha256}
    if destination.startswith("s3://"):
        s3 = {"bucket": result["bucket"], "prefix": result["prefix"], "region": args.region}
        if args.s3_endpoint:
            s3["endpoint"] = args.s3_endpoint
        if args.path_style:
            s3["pathStyle"] = True
        cache.update(source="s3", s3=s3)
    elif destination.startswith("oci://"):
        cache.update(source="oci", oci={"repository": result["repository"], "digest": result["digest"]})
    else:
        # The claim whose root holds this folder as <model id>/.
        cache.update(source="pvc", existingClaim="CLAIM")
    return {"model": {"id": args.model, "revision": args.revision}, "modelCache": cache}


# The chart's wording in model_copy's messages (the Job reads values), as this tool's options.
TOOL_WORDS = {
    "check modelCache.huggingface.endpoint, modelCache.proxy and modelCache.caBundle":
        "check --endpoint (or HF_ENDPOINT), the proxy variables (HTTPS_PROXY) and --ca-bundle",
    "check model.id, model.revision and modelCache.huggingface.endpoint": "check --model, --revision and --endpoint",
    "check the token of huggingface.tokenSecret": "check HF_TOKEN",
    "but model.id and model.revision ask for": "but --model and --revision ask for",
}


def tool_words(message: str) -> str:
    for chart, tool in TOOL_WORDS.items():
        message = message.replace(chart, tool)
    return message


def destination_folder(destination: str) -> Path | None:
    """The folder a destination names (a path or file:///path), None for s3:// and oci://; any other scheme, and a
    destination that exists but is not a folder, is refused (UsageError)."""
    if destination.startswith(("s3://", "oci://")):
        return None
    if "://" in destination:
        parts = urllib.parse.urlsplit(destination)
        if parts.scheme != "file":
            raise UsageError(f"destination {destination}: {parts.scheme}:// is not a destination this tool writes "
                             f"to; allowed: {DESTINATIONS}")
        if parts.netloc not in ("", "localhost") or not parts.path.startswith("/") or parts.query or parts.fragment:
            raise UsageError(f"destination {destination}: a file:// URL names a local absolute path "
                             f"(file:///path); allowed: {DESTINATIONS}")
        folder = Path(urllib.parse.unquote(parts.path))
    else:
        folder = Path(destination)
    if os.path.lexists(folder):
        info = os.stat(folder) if os.path.exists(folder) else os.lstat(folder)
        if not stat.S_ISDIR(info.st_mode):
            raise UsageError(f"destination {destination}: {inputs.kind(info.st_mode)} exists there, not a folder; "
                             f"allowed: {DESTINATIONS}")
    return folder


def needs_module(name: str, why: str) -> None:
    """Refuse (UsageError) before any work when the interpreter lacks an optional module a destination or option
    needs."""
    if importlib.util.find_spec(name) is None:
        raise UsageError(f"{sys.executable} has no module {name!r}, which {why} needs: pip install {name} into the "
                         f"interpreter you run (images/model-fetch/requirements.txt pins the version the chart uses), "
                         f"or {SET_UP} and add it there")


def docker_config() -> Path:
    """The Docker config file whose credentials an oci:// push uses without --username."""
    return Path(os.environ.get("DOCKER_CONFIG", Path.home() / ".docker")) / "config.json"


def check_arguments(args) -> Path | None:
    """Every path argument and optional module checked before any download or write (os.stat, never an open); the
    destination folder (None for s3:// and oci://). Raises UsageError or inputs.InputError."""
    folder = destination_folder(args.destination)
    if args.destination.startswith("s3://"):
        needs_module("boto3", "an s3:// destination")
    if args.destination.startswith("oci://") and not args.username and os.path.lexists(docker_config()):
        inputs.check_file(docker_config(), f"the registry credentials {docker_config()}", MAX_CA_BUNDLE)
    if args.from_dir:
        inputs.check_folder(args.from_dir, f"--from-dir {args.from_dir}",
                            "a folder holding the files of the revision (and, from an earlier copy, its "
                            f"{MANIFEST})")
    if args.work_dir and os.path.lexists(args.work_dir):
        inputs.check_folder(args.work_dir, f"--work-dir {args.work_dir}", "a folder, or a path to make one at")
    if not args.no_tiktoken and "://" in args.tiktoken:
        scheme = urllib.parse.urlsplit(args.tiktoken).scheme
        if scheme not in ("http", "https"):
            raise UsageError(f"--tiktoken {args.tiktoken}: {scheme}:// is not fetched; allowed: an https:// or "
                             "http:// URL, or the path of a file")
    elif not args.no_tiktoken:
        inputs.check_file(args.tiktoken, f"--tiktoken {args.tiktoken}", MAX_VOCABULARY)
    if args.ca_bundle:
        inputs.check_file(args.ca_bundle, f"--ca-bundle {args.ca_bundle}", MAX_CA_BUNDLE)
        needs_module("certifi", "--ca-bundle")
    return folder


def main(argv=None) -> int:
    defaults = chart_defaults()
    parser = Parser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                    epilog=__doc__)
    parser.add_argument("destination")
    parser.add_argument("--model", default=defaults["model"])
    parser.add_argument("--revision", default=defaults["revision"])
    parser.add_argument("--ignore", action="append", help="repeatable; default: the chart's ignorePatterns")
    parser.add_argument("--from-dir", help="a folder holding the revision's files, instead of the Hub; checked against "
                                           f"its {MANIFEST} or the Hub's listing of the revision")
    parser.add_argument("--endpoint", help="a Hub mirror (default HF_ENDPOINT or https://huggingface.co)")
    parser.add_argument("--tiktoken", default=defaults["tiktoken_url"], help="URL or file of o200k_base.tiktoken")
    parser.add_argument("--tiktoken-sha256", default=defaults["tiktoken_sha256"])
    parser.add_argument("--no-tiktoken", action="store_true", help="copy without the vocabulary")
    parser.add_argument("--s3-endpoint", default="")
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--path-style", action="store_true")
    parser.add_argument("--plain-http", action="store_true", help="the registry speaks HTTP (no credentials are sent)")
    parser.add_argument("--username", help="registry user; password in env REGISTRY_PASSWORD")
    parser.add_argument("--ca-bundle", help="PEM file of a private CA to trust besides the public roots")
    parser.add_argument("--work-dir", help="scratch space (a Hub download, image layers); default a temp folder")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    try:
        args = parser.parse_args(argv)
        args.ignore = args.ignore if args.ignore is not None else defaults["ignore"]
        folder = check_arguments(args)
        ca_bundle = inputs.read_file(args.ca_bundle, f"--ca-bundle {args.ca_bundle}", MAX_CA_BUNDLE) \
            if args.ca_bundle else None
    except (UsageError, inputs.InputError) as error:
        log(f"Error: {error}")
        return 2
    if ca_bundle is not None:
        roots = Path(__import__("certifi").where()).read_bytes()
        bundle = Path(tempfile.mkdtemp()) / "ca-bundle.pem"
        bundle.write_bytes(roots + b"\n" + ca_bundle)
        for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "AWS_CA_BUNDLE"):
            os.environ[name] = str(bundle)
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="mirror-model-"))
    try:
        work.mkdir(parents=True, exist_ok=True)
        # The vocabulary first: a URL nothing answers is refused before ~65 GB are downloaded or hashed.
        tiktoken = vocabulary(args, work)
        source, files = from_dir(args) if args.from_dir else from_hub(args, work)
        sources = {f["path"]: source / f["path"] for f in files}
        if tiktoken is not None:
            sources[TIKTOKEN_PATH] = tiktoken
            files.append({"path": TIKTOKEN_PATH, "size": tiktoken.stat().st_size,
                          "sha256": model_copy.sha256_file(tiktoken)})
        manifest = model_copy.manifest_bytes(args.model, args.revision, files)
        manifest_sha256 = hashlib.sha256(manifest).hexdigest()
        log(f"manifest of {args.model}@{args.revision}: {len(files)} files, "
            f"{sum(f['size'] for f in files)} bytes, sha256 {manifest_sha256}")
        destination = args.destination
        if destination.startswith("s3://"):
            result = to_s3(destination, args, sources, manifest)
        elif destination.startswith("oci://"):
            result = to_oci(destination, args, sources, manifest, manifest_sha256, work)
        else:
            result = to_folder(folder, sources, manifest)
    except (CopyError, inputs.InputError) as error:
        log(f"Error: {tool_words(str(error))}")
        return 1
    except OSError as error:  # the network or the disk (URLError, a timeout, a full or read-only disk)
        log(f"Error: {getattr(error, 'reason', None) or error}")
        return 1
    finally:
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)
    result.update(manifestSha256=manifest_sha256, files=len(files), values=values_for(destination, args, result,
                                                                                       manifest_sha256))
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"manifest sha256: {manifest_sha256}")
        if "digest" in result:
            print(f"image: {result['repository']}:{result['tag']}@{result['digest']}")
        print("values:")
        print("  " + yaml.safe_dump(result["values"], sort_keys=False).replace("\n", "\n  ").rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(run(main, "tools/mirror-model.py"))
