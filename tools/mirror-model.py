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
checked against the Hub's hashes, or from --from-dir (a folder holding that revision's files). Model id,
revision, ignore patterns and the vocabulary (o200k_base.tiktoken, checked against its sha256) default to the
chart's values.yaml. Every copy gets model-manifest.json: the model id, the revision and each file's path,
size and sha256; it is written last, so an interrupted copy has none and is refused. The tool prints the
manifest's sha256 (modelCache.manifestSha256) and, for OCI, the image digest (modelCache.oci.digest), with the
values to install with. --ca-bundle FILE trusts a private CA besides the public roots. docs/model-sources.md.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

import yaml

# The chart's own module (the download Job runs it too), linked into tools/gptoss: one implementation of the
# manifest and the clients. Python puts this file's folder first on sys.path, so the package is `gptoss` here.
from gptoss import model_copy
from gptoss.model_copy import MANIFEST, TIKTOKEN_PATH, CopyError

REPO = Path(__file__).resolve().parent.parent
CHART = REPO / "charts" / "gpt-oss"

# Files at least this large get an image layer of their own; smaller ones share one.
OWN_LAYER = 64 * 1024 * 1024
ARCHITECTURES = ("amd64", "arm64")
S3_PART = 8 * 1024 * 1024


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def chart_defaults() -> dict:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    return {"model": values["model"]["id"], "revision": values["model"]["revision"],
            "ignore": values["modelCache"]["download"]["ignorePatterns"],
            "tiktoken_url": values["model"]["tiktoken"]["url"], "tiktoken_sha256": values["model"]["tiktoken"]["sha256"]}


# --- the files of the revision --------------------------------------------------------------------------------

def from_hub(args, work: Path) -> tuple[Path, list[dict]]:
    """The revision's files from the Hub into the work folder, each checked against the Hub's size and hash;
    a rerun with the same --work-dir resumes where the last one stopped."""
    endpoint = (args.endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
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


def from_dir(args) -> tuple[Path, list[dict]]:
    folder = Path(args.from_dir)
    if not folder.is_dir():
        raise CopyError(f"--from-dir {folder} is not a folder")
    existing = folder / MANIFEST
    if existing.is_file():
        model_copy.read_manifest(existing.read_bytes(), str(existing), args.model, args.revision)
    log(f"hashing the files of {folder} (skipping {args.ignore})")
    names = [n for n in model_copy.folder_files(folder, args.ignore) if n != TIKTOKEN_PATH]
    if not names:
        raise CopyError(f"{folder} holds no files of a model")
    files = [{"path": n, "size": (folder / n).stat().st_size, "sha256": model_copy.sha256_file(folder / n)}
             for n in names]
    return folder, files


def vocabulary(args, work: Path) -> Path | None:
    """o200k_base.tiktoken from a URL or file, checked against the sha256 the chart pins."""
    if args.no_tiktoken:
        return None
    source = args.tiktoken
    if "://" in source:
        log(f"fetching {source}")
        with urllib.request.urlopen(source, timeout=300) as response:
            data = response.read()
    else:
        data = Path(source).read_bytes()
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
        config = Path(os.environ.get("DOCKER_CONFIG", Path.home() / ".docker")) / "config.json"
        credentials = model_copy.docker_credentials(host, [config])
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


def main(argv=None) -> int:
    defaults = chart_defaults()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("destination")
    parser.add_argument("--model", default=defaults["model"])
    parser.add_argument("--revision", default=defaults["revision"])
    parser.add_argument("--ignore", action="append", help="repeatable; default: the chart's ignorePatterns")
    parser.add_argument("--from-dir", help="a folder holding the revision's files, instead of the Hub")
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
    args = parser.parse_args(argv)
    args.ignore = args.ignore if args.ignore is not None else defaults["ignore"]
    if args.ca_bundle:
        roots = Path(__import__("certifi").where()).read_text()
        bundle = Path(tempfile.mkdtemp()) / "ca-bundle.pem"
        bundle.write_text(roots + "\n" + Path(args.ca_bundle).read_text())
        for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "AWS_CA_BUNDLE"):
            os.environ[name] = str(bundle)
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="mirror-model-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        folder, files = from_dir(args) if args.from_dir else from_hub(args, work)
        sources = {f["path"]: folder / f["path"] for f in files}
        tiktoken = vocabulary(args, work)
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
            result = to_folder(Path(destination.removeprefix("file://")), sources, manifest)
    except CopyError as error:
        log(f"refused: {error}")
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
    sys.exit(main())
