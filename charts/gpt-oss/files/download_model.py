"""Fill the model cache with the pinned revision from modelCache.source, check every file, then mark it ready.

SOURCE says where the weights come from:
  huggingface  the Hub or a mirror of it (HF_ENDPOINT): every file of the revision, checked against the Hub's
               size and hash (sha256 for LFS files, git blob sha1 otherwise)
  s3           a copy tools/mirror-model.py wrote under an S3 prefix (model-manifest.json beside the files)
  oci          a copy pushed as an OCI image by tools/mirror-model.py, pulled by digest into the cache
  pvc          a copy already on the claim (MODEL_DIR holds model-manifest.json): checked, nothing fetched
  verify       read-only: check the copy in MODEL_DIR (an image volume) and exit; no marker (init container)
Every copy carries model-manifest.json (each file's path, size, sha256, with the model id and revision). A
manifest of another revision is refused; with MANIFEST_SHA256 set, so is any manifest of another sha256. The
marker (MARKER) is written only when every file matches: an interrupted run leaves none, and the next run
resumes partial files with ranged requests. A file that fails the
check is removed (not for pvc: that copy is the user's) and the run exits 1 naming it, so the Job's retry
fetches it again. The harmony vocabulary is staged into MODEL_DIR/tiktoken, checked against TIKTOKEN_SHA256:
from the copy when it holds one, else from TIKTOKEN_URL. Nothing is installed at start: the Job's image has
huggingface_hub (transfer xet) and boto3 (s3); PIP_PACKAGES (modelCache.download.pipInstall) is the opt-in exception.
"""
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_copy  # noqa: E402
from model_copy import MANIFEST, TIKTOKEN_PATH, CopyError  # noqa: E402

source = os.environ.get("SOURCE", "huggingface")
model_id = os.environ["MODEL_ID"]
revision = os.environ["MODEL_REVISION"]
model_dir = Path(os.environ["MODEL_DIR"])
marker = Path(os.environ["MARKER"]) if os.environ.get("MARKER") else None
pinned = os.environ.get("MANIFEST_SHA256", "")
tiktoken_url = os.environ.get("TIKTOKEN_URL", "")
tiktoken_sha256 = os.environ.get("TIKTOKEN_SHA256", "")
tiktoken_file = model_dir / TIKTOKEN_PATH


def log(message: str) -> None:
    print(message, flush=True)


def use_ca_bundle() -> None:
    """CA_BUNDLE_FILE (modelCache.caBundle) added to the public roots, for every client this process runs."""
    extra = os.environ.get("CA_BUNDLE_FILE", "")
    if not extra:
        return
    roots = ""
    try:
        import certifi
        roots = Path(certifi.where()).read_text()
    except ImportError:
        for system in ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"):
            if os.path.isfile(system):
                roots = Path(system).read_text()
                break
    bundle = Path(tempfile.gettempdir()) / "gpt-oss-ca-bundle.pem"
    bundle.write_text(roots + "\n" + Path(extra).read_text())
    for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "AWS_CA_BUNDLE", "CURL_CA_BUNDLE", "PIP_CERT"):
        os.environ[name] = str(bundle)
    log(f"trusting the CA bundle {extra} (with the public roots)")


def pip_install_opt_in() -> None:
    packages = os.environ.get("PIP_PACKAGES", "").split()
    if not packages:
        return
    log(f"installing {' '.join(packages)} (modelCache.download.pipInstall)")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--user", "--no-cache-dir", *packages],
                   check=True)
    import site
    sys.path.insert(0, site.getusersitepackages())


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def stage_tiktoken(manifest: dict | None) -> None:
    """The harmony vocabulary in MODEL_DIR/tiktoken, checked; tool calls come back empty without it."""
    if not tiktoken_sha256:
        return
    if tiktoken_file.is_file() and model_copy.sha256_file(tiktoken_file) == tiktoken_sha256:
        return
    listed = manifest and any(f["path"] == TIKTOKEN_PATH for f in manifest["files"])
    if listed:
        raise CopyError(f"the copy's {TIKTOKEN_PATH} has sha256 {model_copy.sha256_file(tiktoken_file)}, but "
                        f"model.tiktoken.sha256 pins {tiktoken_sha256}")
    # Where chart 0.2.0 staged it (<mountPath>/tiktoken): an upgraded air-gapped cache need not fetch it again.
    previous = Path(os.environ.get("PREVIOUS_TIKTOKEN_FILE", "") or "/nonexistent")
    if previous.is_file() and model_copy.sha256_file(previous) == tiktoken_sha256:
        tiktoken_file.parent.mkdir(parents=True, exist_ok=True)
        temporary = tiktoken_file.with_name(tiktoken_file.name + ".tmp")
        temporary.write_bytes(previous.read_bytes())
        os.replace(temporary, tiktoken_file)
        log(f"staged {tiktoken_file} from {previous} (sha256 ok)")
        return
    try:
        with urllib.request.urlopen(tiktoken_url, timeout=300) as response:
            data = response.read()
    except OSError as error:
        raise CopyError(f"the copy holds no {TIKTOKEN_PATH} and {tiktoken_url} (model.tiktoken.url) cannot be "
                        f"fetched: {error}; mirror the model with its vocabulary (tools/mirror-model.py adds it), "
                        "or point model.tiktoken.url at a copy the cluster reaches") from None
    if sha256_of(data) != tiktoken_sha256:
        raise CopyError(f"{tiktoken_url} has sha256 {sha256_of(data)}, expected {tiktoken_sha256}; not staging it")
    tiktoken_file.parent.mkdir(parents=True, exist_ok=True)
    temporary = tiktoken_file.with_name(tiktoken_file.name + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, tiktoken_file)
    log(f"staged {tiktoken_file} ({len(data)} bytes, sha256 ok)")


def finished() -> bool:
    """The marker of this revision exists (and records the pinned manifest, when one is pinned)."""
    if marker is None or not marker.exists():
        return False
    if not pinned:
        return True
    try:
        recorded = json.loads(marker.read_text()).get("manifestSha256")
    except ValueError:
        recorded = None
    if recorded != pinned:
        log(f"{marker} records manifest {recorded}, the values pin {pinned}: checking the cache again")
        return False
    return True


def write_manifest(data: bytes) -> None:
    temporary = model_dir / (MANIFEST + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, model_dir / MANIFEST)


def fail_listing(what: str, problems: list[str], removed: bool) -> CopyError:
    return CopyError(f"{what} is not complete, so no marker is written{'; removed for the retry' if removed else ''}:"
                     "\n  " + "\n  ".join(problems))


def with_retries(fetch, what: str, attempts: int = 3):
    """A fetch that resumes where a dropped connection left it, a few times before the Job's own retry."""
    for attempt in range(1, attempts + 1):
        try:
            return fetch()
        except CopyError:
            raise
        except Exception as error:  # noqa: BLE001  (network errors of boto3, urllib, http.client)
            if attempt == attempts:
                raise CopyError(f"{what}: {type(error).__name__}: {error} ({attempts} attempts; "
                                "the Job's retry resumes the partial file)") from None
            log(f"  {what}: {type(error).__name__}: {error}; resuming (attempt {attempt + 1} of {attempts})")
            time.sleep(2 * attempt)


def fetch_listed(entries: list[dict], opener, what: str) -> None:
    """Every listed file into model_dir, checked; opener(entry) gives its open_stream and where it comes from.
    Fails naming every file that is not right (those are removed, so the Job's retry fetches them again)."""
    problems = []
    for entry in entries:
        open_stream, source = opener(entry)
        problem = with_retries(lambda entry=entry, open_stream=open_stream:
                               model_copy.fetch_file(model_dir, entry, open_stream, log), entry["path"])
        if problem:
            problems.append(f"{entry['path']}{source}: {problem}")
    if problems:
        raise fail_listing(what, problems, removed=True)


# --- huggingface ---------------------------------------------------------------------------------------------

def from_huggingface() -> dict:
    """The revision's files from the Hub (or HF_ENDPOINT), each checked against the Hub's size and hash.

    Ranged requests resume a partial file where the last run stopped (huggingface_hub 1.x starts interrupted
    files over). With HF_XET_HIGH_PERFORMANCE=1 (transfer xet), snapshot_download fetches through Xet first,
    which does not resume; its files are then checked the same way, and any that differ fetched again.
    """
    ignore_patterns = json.loads(os.environ.get("IGNORE_PATTERNS", "[]"))
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    token = None
    token_path = os.environ.get("HF_TOKEN_PATH", "")
    if token_path and os.path.isfile(token_path):
        token = Path(token_path).read_text().strip() or None
    # Listed by the API, never the CLI: two CLI --exclude flags mis-parse and fill the PVC with original/ and metal/.
    entries = model_copy.hub_entries(endpoint, model_id, revision, ignore_patterns, token)
    total = sum(e["size"] for e in entries)
    log(f"downloading {model_id}@{revision} from {endpoint} to {model_dir}: {len(entries)} files, {total} bytes, "
        f"skipping {ignore_patterns}")
    model_dir.mkdir(parents=True, exist_ok=True)
    if os.environ.get("HF_XET_HIGH_PERFORMANCE") == "1":
        from huggingface_hub import snapshot_download

        # Files huggingface_hub 1.x abandoned in an earlier run: it never resumes them, they would only fill the PVC.
        for stale in (model_dir / ".cache" / "huggingface" / "download").rglob("*.incomplete"):
            stale.unlink()
        snapshot_download(repo_id=model_id, revision=revision, local_dir=model_dir, ignore_patterns=ignore_patterns,
                          token=token, endpoint=endpoint)
    fetch_listed(entries, lambda entry: (model_copy.hub_opener(endpoint, model_id, revision, entry, token), ""),
                 f"{model_id}@{revision}")
    log(f"verified {len(entries)} files of {model_id}@{revision} (sizes and hashes)")
    stage_tiktoken(None)
    files = [{"path": e["path"], "size": e["size"], "sha256": e["sha256"]} for e in entries]
    if tiktoken_sha256:
        files.append({"path": TIKTOKEN_PATH, "size": tiktoken_file.stat().st_size, "sha256": tiktoken_sha256})
    data = model_copy.manifest_bytes(model_id, revision, files)
    manifest = model_copy.read_manifest(data, f"the manifest of the files from {endpoint}", model_id, revision,
                                        pinned)
    write_manifest(data)
    return manifest


# --- s3 --------------------------------------------------------------------------------------------------------

def from_s3() -> dict:
    bucket, prefix = os.environ["S3_BUCKET"], os.environ.get("S3_PREFIX", "")
    endpoint = os.environ.get("S3_ENDPOINT", "")
    client = model_copy.s3_client(endpoint, os.environ.get("S3_REGION", ""),
                                  os.environ.get("S3_PATH_STYLE", "false") == "true",
                                  os.environ.get("S3_CREDENTIALS_DIR", ""))
    key = model_copy.s3_key(prefix, MANIFEST)
    log(f"copying {model_id}@{revision} from s3://{bucket}/{model_copy.s3_key(prefix, '')} "
        f"({endpoint or 'AWS'}) to {model_dir}")
    try:
        data = client.get_object(Bucket=bucket, Key=key)["Body"].read()
    except Exception as error:  # noqa: BLE001
        raise model_copy.s3_error(error, bucket, key, endpoint) from None
    manifest = model_copy.read_manifest(data, f"s3://{bucket}/{key}", model_id, revision, pinned)
    model_dir.mkdir(parents=True, exist_ok=True)

    def s3_opener(entry: dict):
        object_key = model_copy.s3_key(prefix, entry["path"])

        def open_stream(offset):
            try:
                answer = client.get_object(Bucket=bucket, Key=object_key,
                                           **({"Range": f"bytes={offset}-"} if offset else {}))
            except Exception as error:  # noqa: BLE001
                raise model_copy.s3_error(error, bucket, object_key, endpoint) from None
            return answer["Body"], offset + answer["ContentLength"]
        return open_stream, f" (s3://{bucket}/{object_key})"

    fetch_listed(manifest["files"], s3_opener, f"{model_id}@{revision} from s3://{bucket}")
    write_manifest(data)
    return manifest


# --- oci -------------------------------------------------------------------------------------------------------

def from_oci() -> dict:
    reference, digest = os.environ["OCI_REPOSITORY"], os.environ["OCI_DIGEST"]
    host, repository, _ = model_copy.split_reference(reference)
    auth_files = [p for p in os.environ.get("REGISTRY_AUTH_FILES", "").split(":") if p]
    registry = model_copy.Registry(host, os.environ.get("OCI_PLAIN_HTTP", "false") == "true",
                                   model_copy.docker_credentials(host, auth_files))
    where = f"{host}/{repository}@{digest}"
    log(f"pulling {model_id}@{revision} from {where} into {model_dir}")
    data, media = registry.manifest(repository, digest)
    if media in (model_copy.MEDIA_INDEX, model_copy.DOCKER_LIST):
        arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
        entries = json.loads(data)["manifests"]
        chosen = next((m for m in entries if m.get("platform", {}).get("architecture") == arch), entries[0])
        data, media = registry.manifest(repository, chosen["digest"])
    layers = json.loads(data)["layers"]
    work = model_dir / model_copy.WORK_DIR
    blobs = work / "blobs"
    blobs.mkdir(parents=True, exist_ok=True)
    state_file = work / f"layers-{digest.removeprefix('sha256:')[:16]}.json"
    state = json.loads(state_file.read_text()) if state_file.exists() else {}
    for layer in layers:
        if layer["digest"] in state:
            continue
        entry = {"path": layer["digest"].removeprefix("sha256:"), "size": int(layer["size"]),
                 "sha256": layer["digest"].removeprefix("sha256:")}

        def open_stream(offset, layer_digest=layer["digest"]):
            response = registry.open_blob(repository, layer_digest, offset)
            length = response.headers.get("Content-Length")
            return response, (offset + int(length)) if length is not None else None

        problem = with_retries(lambda entry=entry, open_stream=open_stream:
                               model_copy.fetch_file(blobs, entry, open_stream, log,
                                                     partial=blobs / (entry["path"] + ".partial")),
                               f"layer {layer['digest']}")
        if problem:
            raise CopyError(f"layer {layer['digest']} of {where}: {problem}; refused")
        blob = blobs / entry["path"]
        state[layer["digest"]] = model_copy.extract_layer(blob, model_dir)
        blob.unlink()
        state_file.write_text(json.dumps(state))
    if not (model_dir / MANIFEST).is_file():
        raise CopyError(f"{where} holds no {MANIFEST}: push model images with tools/mirror-model.py")
    manifest = model_copy.read_manifest((model_dir / MANIFEST).read_bytes(), f"{where} ({MANIFEST})", model_id,
                                        revision, pinned)
    problems = model_copy.verify_folder(model_dir, manifest, log=log)
    if problems:
        bad = {p.split(":", 1)[0] for p in problems}
        for path in bad:
            (model_dir / path).unlink(missing_ok=True)
        state = {layer: paths for layer, paths in state.items() if not bad & set(paths)}
        state_file.write_text(json.dumps(state))
        raise fail_listing(f"{model_id}@{revision} from {where}", problems, removed=True)
    return manifest


# --- pvc and verify --------------------------------------------------------------------------------------------

def copy_in_place(what: str) -> dict:
    path = model_dir / MANIFEST
    if not path.is_file():
        raise CopyError(f"no {MANIFEST} in {model_dir} ({what}): put the folder tools/mirror-model.py wrote there, "
                        f"so that {model_dir}/{MANIFEST} exists")
    return model_copy.read_manifest(path.read_bytes(), f"{model_dir}/{MANIFEST} ({what})", model_id, revision, pinned)


def from_pvc() -> dict:
    manifest = copy_in_place(f"the claim {os.environ.get('CLAIM_NAME', '')}")
    problems = model_copy.verify_folder(model_dir, manifest, log=log)
    if problems:
        raise fail_listing(f"the copy of {model_id}@{revision} in {model_dir}", problems, removed=False)
    return manifest


def verify_read_only() -> None:
    """An init container's check of a read-only copy (an image volume): every file, or only VERIFY_PATHS."""
    only = json.loads(os.environ["VERIFY_PATHS"]) if os.environ.get("VERIFY_PATHS") else None
    manifest = copy_in_place(os.environ.get("COPY_NAME", "the image volume"))
    problems = model_copy.verify_folder(model_dir, manifest, only=only, log=log)
    if tiktoken_sha256 and (only is None or TIKTOKEN_PATH in only):
        if not tiktoken_file.is_file():
            problems.append(f"{TIKTOKEN_PATH}: missing; mirror the model with its vocabulary (tools/mirror-model.py "
                            "adds it unless --no-tiktoken), or set model.tiktoken.stage=false")
        elif model_copy.sha256_file(tiktoken_file) != tiktoken_sha256:
            problems.append(f"{TIKTOKEN_PATH}: sha256 differs from model.tiktoken.sha256 {tiktoken_sha256}")
    if problems:
        raise CopyError(f"the copy of {model_id}@{revision} in {model_dir} does not match its manifest "
                        f"{manifest['sha256']}; the containers will not start:\n  " + "\n  ".join(problems))
    count = len(only) if only is not None else len(manifest["files"])
    log(f"verified {count} file(s) of {model_id}@{revision} in {model_dir} against manifest {manifest['sha256']}")


def main() -> None:
    use_ca_bundle()
    if source == "verify":
        verify_read_only()
        return
    if finished():
        stage_tiktoken(None)
        log(f"{model_id}@{revision} is already complete ({marker}); nothing to do")
        return
    pip_install_opt_in()
    started = time.monotonic()
    fetch = {"huggingface": from_huggingface, "s3": from_s3, "oci": from_oci, "pvc": from_pvc}[source]
    manifest = fetch()
    stage_tiktoken(manifest)
    total = sum(f["size"] for f in manifest["files"])
    log(f"every file matches manifest {manifest['sha256']} ({len(manifest['files'])} files, {total} bytes)")
    temporary = marker.with_name(marker.name + ".tmp")
    temporary.write_text(json.dumps({"model": model_id, "revision": revision, "source": source,
                                     "manifestSha256": manifest["sha256"], "finished": int(time.time())}))
    os.replace(temporary, marker)
    log(f"done in {time.monotonic() - started:.0f}s; wrote {marker}")


if __name__ == "__main__":
    try:
        main()
    except CopyError as error:
        sys.exit(f"refused: {error}")
