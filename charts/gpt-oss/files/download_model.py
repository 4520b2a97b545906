"""Fill the model cache with the pinned revision from modelCache.source, check every file, then mark it ready.

SOURCE says where the weights come from:
  huggingface  the Hub or a mirror of it (HF_ENDPOINT): every file of the revision, checked against the Hub's
               size and hash (sha256 for LFS files, git blob sha1 otherwise)
  s3           a copy tools/mirror-model.py wrote under an S3 prefix (model-manifest.json beside the files)
  oci          a copy pushed as an OCI image by tools/mirror-model.py, pulled by digest into the cache
  pvc          a copy already on the claim (MODEL_DIR holds model-manifest.json): checked, nothing fetched
A read-only copy no Job fills (an image volume) is checked by check_model.py, the pods' check, instead.
Every copy carries model-manifest.json (each file's path, size, sha256, with the model id and revision). A
manifest of another revision is refused; with MANIFEST_SHA256 set, so is any manifest of another sha256 (checked
before the manifest is parsed).

Verify, then publish (docs/security.md): one Job at a time holds a lock on the cache; the ready marker (MARKER) is
removed before anything in the folder changes; every file is fetched into a partial file under .cache/gpt-oss
(never more than its listed size, hashed through the descriptor that is renamed), checked, and staged; only when
every listed file is checked do the staged files move into place, files the manifest does not list are removed,
and the marker, naming the revision and the manifest's sha256, is written last, after an fsync. No symbolic link
is followed. An interrupted run leaves no marker, and the next run resumes partial files with ranged requests. A
file that fails the check is removed (not for pvc: that copy is the user's) and the run exits 1 naming it, so the
Job's retry fetches it again. The harmony vocabulary is staged into MODEL_DIR/tiktoken, checked against TIKTOKEN_SHA256:
from the copy when it holds one, else from TIKTOKEN_URL. Nothing is installed at start: the Job's image has
huggingface_hub (transfer xet) and boto3 (s3); PIP_PACKAGES (modelCache.download.pipInstall) is the opt-in exception.
"""
import contextlib
import fcntl
import hashlib
import json
import os
import platform
import posixpath
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_copy  # noqa: E402
from check_model import copy_manifest, copy_problems, sha256_or_none  # noqa: E402
from model_copy import MANIFEST, STAGING_DIR, TIKTOKEN_PATH, WORK_DIR, CopyError  # noqa: E402

source = os.environ.get("SOURCE", "huggingface")
model_id = os.environ["MODEL_ID"]
revision = os.environ["MODEL_REVISION"]
model_dir = Path(os.environ["MODEL_DIR"])
# The cache's mount point: MODEL_DIR must be <CACHE_DIR>/<MODEL_ID> (model_copy.model_folder), checked before any write.
cache_dir = os.environ.get("CACHE_DIR", "")
marker = Path(os.environ["MARKER"]) if os.environ.get("MARKER") else None
pinned = os.environ.get("MANIFEST_SHA256", "")
tiktoken_url = os.environ.get("TIKTOKEN_URL", "")
tiktoken_sha256 = os.environ.get("TIKTOKEN_SHA256", "")
tiktoken_file = model_dir / TIKTOKEN_PATH
staging = model_dir / STAGING_DIR
# The harmony vocabulary is ~3.6 MB; a source that sends more is refused, not read into memory.
MAX_VOCABULARY = 64 * 1024 * 1024
MAX_MARKER = 64 * 1024
# Markers of this Job since issue 36 (verify, then publish): an older marker is checked again, not trusted.
MARKER_FORMAT = "gpt-oss.model-ready/v2"


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
    if sha256_or_none(tiktoken_file) == tiktoken_sha256:
        return
    listed = manifest and any(f["path"] == TIKTOKEN_PATH for f in manifest["files"])
    if listed:
        raise CopyError(f"the copy's {TIKTOKEN_PATH} has sha256 {sha256_or_none(tiktoken_file)}, but "
                        f"model.tiktoken.sha256 pins {tiktoken_sha256}")
    folder = model_copy.safe_folders(model_dir, posixpath.dirname(TIKTOKEN_PATH), create=True)
    model_copy.remove_entry(model_dir, TIKTOKEN_PATH)
    # Where chart 0.2.0 staged it (<mountPath>/tiktoken): an upgraded air-gapped cache need not fetch it again.
    previous = Path(os.environ.get("PREVIOUS_TIKTOKEN_FILE", "") or "/nonexistent")
    if sha256_or_none(previous) == tiktoken_sha256:
        data = model_copy.read_small_file(previous, MAX_VOCABULARY, str(previous))
        if sha256_of(data) == tiktoken_sha256:
            model_copy.write_file_atomically(folder / tiktoken_file.name, data)
            log(f"staged {tiktoken_file} from {previous} (sha256 ok)")
            return
    try:
        with urllib.request.urlopen(tiktoken_url, timeout=300) as response:
            data = model_copy.read_limited(response, MAX_VOCABULARY, tiktoken_url)
    except OSError as error:
        raise CopyError(f"the copy holds no {TIKTOKEN_PATH} and {tiktoken_url} (model.tiktoken.url) cannot be "
                        f"fetched: {error}; mirror the model with its vocabulary (tools/mirror-model.py adds it), "
                        "or point model.tiktoken.url at a copy the cluster reaches") from None
    if sha256_of(data) != tiktoken_sha256:
        raise CopyError(f"{tiktoken_url} has sha256 {sha256_of(data)}, expected {tiktoken_sha256}; not staging it")
    model_copy.write_file_atomically(folder / tiktoken_file.name, data)
    log(f"staged {tiktoken_file} ({len(data)} bytes, sha256 ok)")


# --- the ready marker, the lock, publishing ------------------------------------------------------------------------

def finished() -> bool:
    """The marker of this revision exists, names this model, revision (and the pinned manifest, when one is pinned),
    and the manifest in the folder is the one it names; the vocabulary is in place. Anything else: check again."""
    if marker is None:
        return False
    found = model_copy._lstat(marker)
    if found is None:
        return False
    reason = None
    try:
        recorded = json.loads(model_copy.read_small_file(marker, MAX_MARKER, str(marker)))
        assert isinstance(recorded, dict)
    except (OSError, ValueError, AssertionError, CopyError):
        recorded, reason = {}, "is not a marker this Job wrote"
    if reason is None and recorded.get("format") != MARKER_FORMAT:
        reason = f"was written by an older download Job (not {MARKER_FORMAT})"
    elif reason is None and (recorded.get("model"), recorded.get("revision")) != (model_id, revision):
        reason = f"records {recorded.get('model')}@{recorded.get('revision')}, not {model_id}@{revision}"
    elif reason is None and pinned and recorded.get("manifestSha256") != pinned:
        reason = f"records manifest {recorded.get('manifestSha256')}, the values pin {pinned}"
    elif reason is None and sha256_or_none(model_dir / MANIFEST) != recorded.get("manifestSha256"):
        reason = f"records manifest {recorded.get('manifestSha256')}, but {MANIFEST} in the folder differs"
    elif reason is None and tiktoken_sha256 and sha256_or_none(tiktoken_file) != tiktoken_sha256:
        reason = f"is there, but {TIKTOKEN_PATH} is not the vocabulary model.tiktoken.sha256 pins"
    if reason:
        log(f"{marker} {reason}: checking the cache again")
        return False
    return True


def remove_markers() -> None:
    """Every ready marker in the folder, before anything in it changes: no pod starts on a folder being changed."""
    if model_copy.safe_folders(model_dir, "") is None:
        return
    removed = []
    for entry in os.scandir(model_dir):
        if entry.name.startswith(".download-complete-"):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
            removed.append(entry.name)
    if removed:
        model_copy.fsync_folder(model_dir)
        log(f"removed the ready marker(s) {removed} before changing {model_dir}")


@contextlib.contextmanager
def cache_lock():
    """One Job at a time on a cache: a POSIX lock (NFS carries those) on .cache/gpt-oss/lock."""
    for link in (model_dir / ".cache", model_dir / WORK_DIR):
        found = model_copy._lstat(link)
        if found is not None and stat.S_ISLNK(found.st_mode):
            link.unlink()
            log(f"removed the symbolic link {link}: the work folder is never reached through a link")
    work = model_copy.safe_folders(model_dir, WORK_DIR, create=True)
    fd = model_copy.open_no_follow(work / "lock", os.O_RDWR | os.O_CREAT)
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            log(f"another download Job holds the lock on {model_dir}; waiting for it to finish")
            fcntl.lockf(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def remove_links() -> None:
    """Symbolic links in the folder (none is part of a copy): removed, never followed."""
    links = [relative for relative, info in model_copy.walk_files(model_dir) if stat.S_ISLNK(info.st_mode)]
    for relative in links:
        os.unlink(model_dir / relative)
    if links:
        log(f"removed {len(links)} symbolic link(s) from {model_dir} (never followed): {links[:10]}")


def remove_unlisted(keep: set[str]) -> list[str]:
    """Remove every file (and link) in the folder that is not in `keep`, then the folders left empty."""
    removed = []
    for relative, _ in model_copy.walk_files(model_dir):
        if relative in keep or relative == MANIFEST:
            continue
        os.unlink(model_dir / relative)
        removed.append(relative)
    for current, folders, files in os.walk(model_dir, topdown=False):
        if Path(current) == model_dir or Path(current).relative_to(model_dir).parts[0] == ".cache":
            continue
        if not os.listdir(current):
            os.rmdir(current)
    if removed:
        log(f"removed {len(removed)} file(s) the manifest does not list: {removed[:10]}")
    return removed


def keep_set(manifest: dict) -> set[str]:
    keep = {f["path"] for f in manifest["files"]}
    if tiktoken_sha256:
        keep.add(TIKTOKEN_PATH)
    return keep


def publish(staged: Path, manifest: dict, data: bytes | None) -> None:
    """The checked files of `staged` into place, the unlisted ones out, then the manifest (fsynced)."""
    moved, folders = 0, {model_dir}
    for entry in manifest["files"]:
        relative = entry["path"]
        if model_copy._lstat(staged / relative) is None:
            continue
        folder = model_copy.safe_folders(model_dir, posixpath.dirname(relative), create=True)
        fd = model_copy.open_no_follow(staged / relative)
        try:
            os.fsync(fd)  # on the disk before the marker can say so
        finally:
            os.close(fd)
        model_copy.remove_entry(model_dir, relative)
        os.replace(staged / relative, folder / posixpath.basename(relative))
        folders.add(folder)
        moved += 1
    remove_unlisted(keep_set(manifest))
    missing = [e["path"] for e in manifest["files"]
               if not (s := model_copy._lstat(model_dir / e["path"])) or not stat.S_ISREG(s.st_mode)
               or s.st_size != e["size"]]
    if missing:
        raise CopyError(f"after publishing, {missing} are not in place; no marker is written")
    if data is not None:
        model_copy.write_file_atomically(model_dir / MANIFEST, data)
    for folder in folders:  # the renames, too, before the marker
        model_copy.fsync_folder(folder)
    if moved:
        log(f"published {moved} checked file(s) into {model_dir}")


def write_marker(manifest: dict) -> None:
    """Last: the marker names the model, the revision and the manifest's sha256 (what the pods compare)."""
    record = {"format": MARKER_FORMAT, "model": model_id, "revision": revision, "source": source,
              "manifestSha256": manifest["sha256"], "finished": int(time.time())}
    model_copy.write_file_atomically(marker, json.dumps(record, sort_keys=True).encode())


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
    """Every listed file checked, in place or staged; opener(entry) gives its open_stream and where it comes from.
    Fails naming every file that is not right (those are removed, so the Job's retry fetches them again)."""
    model_copy.safe_folders(model_dir, STAGING_DIR, create=True)
    problems = []
    for entry in entries:
        open_stream, where = opener(entry)
        problem = with_retries(lambda entry=entry, open_stream=open_stream:
                               model_copy.fetch_file(model_dir, entry, open_stream, log, into=staging),
                               entry["path"])
        if problem:
            problems.append(f"{entry['path']}{where}: {problem}")
    if problems:
        raise fail_listing(what, problems, removed=True)


# --- huggingface ---------------------------------------------------------------------------------------------

def take_what_xet_fetched(scratch: Path, entries: list[dict]) -> None:
    """The listed files snapshot_download wrote into its scratch folder, checked, into staging; nothing else."""
    for entry in entries:
        relative = entry["path"]
        if model_copy._lstat(scratch / relative) is None:
            continue
        if model_copy.check_file(scratch / relative, entry, root=scratch) is None:
            folder = model_copy.safe_folders(staging, posixpath.dirname(relative), create=True)
            model_copy.remove_entry(staging, relative)
            os.replace(scratch / relative, folder / posixpath.basename(relative))
            log(f"  {relative}: fetched by the xet client, checked")
    shutil.rmtree(scratch, ignore_errors=True)


def from_huggingface() -> tuple[dict, bytes, Path]:
    """The revision's files from the Hub (or HF_ENDPOINT), each checked against the Hub's size and hash.

    Ranged requests resume a partial file where the last run stopped (huggingface_hub 1.x starts interrupted
    files over). With HF_XET_HIGH_PERFORMANCE=1 (transfer xet), snapshot_download fetches through Xet first, into
    a scratch folder, which does not resume; of what it wrote only the listed files move on, each checked the
    same way, and any that differ are fetched again.
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
    if os.environ.get("HF_XET_HIGH_PERFORMANCE") == "1":
        from huggingface_hub import snapshot_download

        scratch = model_copy.safe_folders(model_dir, WORK_DIR + "/xet", create=True)
        # Files huggingface_hub 1.x abandoned in an earlier run: it never resumes them, they would only fill the PVC.
        shutil.rmtree(scratch / ".cache", ignore_errors=True)
        snapshot_download(repo_id=model_id, revision=revision, local_dir=scratch, ignore_patterns=ignore_patterns,
                          token=token, endpoint=endpoint)
        model_copy.safe_folders(model_dir, STAGING_DIR, create=True)
        take_what_xet_fetched(scratch, entries)
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
    return manifest, data, staging


# --- s3 --------------------------------------------------------------------------------------------------------

def from_s3() -> tuple[dict, bytes, Path]:
    bucket, prefix = os.environ["S3_BUCKET"], os.environ.get("S3_PREFIX", "")
    endpoint = os.environ.get("S3_ENDPOINT", "")
    client = model_copy.s3_client(endpoint, os.environ.get("S3_REGION", ""),
                                  os.environ.get("S3_PATH_STYLE", "false") == "true",
                                  os.environ.get("S3_CREDENTIALS_DIR", ""))
    key = model_copy.s3_key(prefix, MANIFEST)
    log(f"copying {model_id}@{revision} from s3://{bucket}/{model_copy.s3_key(prefix, '')} "
        f"({endpoint or 'AWS'}) to {model_dir}")
    try:
        body = client.get_object(Bucket=bucket, Key=key)["Body"]
        data = model_copy.read_limited(body, model_copy.MAX_MANIFEST, f"s3://{bucket}/{key}")
        body.close()
    except CopyError:
        raise
    except Exception as error:  # noqa: BLE001
        raise model_copy.s3_error(error, bucket, key, endpoint) from None
    manifest = model_copy.read_manifest(data, f"s3://{bucket}/{key}", model_id, revision, pinned)

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
    return manifest, data, staging


# --- oci -------------------------------------------------------------------------------------------------------

def from_oci() -> tuple[dict, bytes, Path]:
    """The image's layers unpacked into a scratch folder (.cache/gpt-oss/oci), its manifest and files checked
    there; only the listed files are published."""
    reference, digest = os.environ["OCI_REPOSITORY"], os.environ["OCI_DIGEST"]
    host, repository, _ = model_copy.split_reference(reference)
    auth_files = [p for p in os.environ.get("REGISTRY_AUTH_FILES", "").split(":") if p]
    registry = model_copy.Registry(host, os.environ.get("OCI_PLAIN_HTTP", "false") == "true",
                                   model_copy.docker_credentials(host, auth_files),
                                   token_service=os.environ.get("OCI_TOKEN_SERVICE", ""))
    where = f"{host}/{repository}@{digest}"
    log(f"pulling {model_id}@{revision} from {where} into {model_dir}")
    data, media = registry.manifest(repository, digest)
    if media in (model_copy.MEDIA_INDEX, model_copy.DOCKER_LIST):
        arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
        entries = json.loads(data)["manifests"]
        chosen = next((m for m in entries if m.get("platform", {}).get("architecture") == arch), entries[0])
        data, media = registry.manifest(repository, chosen["digest"])
    layers = json.loads(data)["layers"]
    work = model_copy.safe_folders(model_dir, WORK_DIR, create=True)
    blobs = model_copy.safe_folders(model_dir, WORK_DIR + "/blobs", create=True)
    scratch = model_copy.safe_folders(model_dir, WORK_DIR + "/oci", create=True)
    state_file = work / f"layers-{digest.removeprefix('sha256:')[:16]}.json"
    state = {}
    if model_copy._lstat(state_file) is not None:
        state = json.loads(model_copy.read_small_file(state_file, model_copy.MAX_MANIFEST, str(state_file)))
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
        state[layer["digest"]] = model_copy.extract_layer(blob, scratch)
        blob.unlink()
        model_copy.write_file_atomically(state_file, json.dumps(state).encode())
    if model_copy._lstat(scratch / MANIFEST) is None:
        if model_copy._lstat(model_dir / MANIFEST) is None:
            raise CopyError(f"{where} holds no {MANIFEST}: push model images with tools/mirror-model.py")
        manifest_file = model_dir / MANIFEST
    else:
        manifest_file = scratch / MANIFEST
    manifest_data = model_copy.read_small_file(manifest_file, model_copy.MAX_MANIFEST, f"{where} ({MANIFEST})")
    manifest = model_copy.read_manifest(manifest_data, f"{where} ({MANIFEST})", model_id, revision, pinned)
    # Each listed file: unpacked in the scratch folder, or (a run stopped while publishing) already in place.
    problems = {}
    for entry in manifest["files"]:
        relative = entry["path"]
        base = scratch if model_copy._lstat(scratch / relative) is not None else model_dir
        problem = model_copy.check_file(base / relative, entry, root=base)
        if problem:
            problems[relative] = problem
    if problems:
        # By the exact path, never parsed back out of a message: a name may hold ':'.
        for relative in problems:
            for base in (scratch, model_dir):
                model_copy.remove_entry(base, relative)
        state = {layer: paths for layer, paths in state.items() if not set(problems) & set(paths)}
        model_copy.write_file_atomically(state_file, json.dumps(state).encode())
        raise fail_listing(f"{model_id}@{revision} from {where}", [f"{p}: {m}" for p, m in sorted(problems.items())],
                           removed=True)
    return manifest, manifest_data, scratch


def finish_oci(scratch: Path) -> None:
    """The pulled layers are published: their scratch folder and resume state go."""
    shutil.rmtree(scratch, ignore_errors=True)
    for state_file in (model_dir / WORK_DIR).glob("layers-*.json"):
        state_file.unlink()


# --- pvc ------------------------------------------------------------------------------------------------------

def from_pvc() -> tuple[dict, bytes | None, Path]:
    manifest = copy_manifest(model_dir, f"the claim {os.environ.get('CLAIM_NAME', '')}", model_id, revision, pinned)
    problems = copy_problems(model_dir, manifest, tiktoken_sha256=tiktoken_sha256)
    if problems:
        raise fail_listing(f"the copy of {model_id}@{revision} in {model_dir}", problems, removed=False)
    return manifest, None, staging


def main() -> None:
    use_ca_bundle()
    model_copy.model_folder(cache_dir, model_id, model_dir)
    model_copy.safe_folders(model_dir, "", create=True)
    with cache_lock():
        if finished():
            log(f"{model_id}@{revision} is already complete ({marker}); nothing to do")
            return
        remove_markers()
        if source != "pvc":  # the claim of source pvc is the user's copy: checked, never changed
            remove_links()
        pip_install_opt_in()
        started = time.monotonic()
        fetch = {"huggingface": from_huggingface, "s3": from_s3, "oci": from_oci, "pvc": from_pvc}[source]
        manifest, data, staged = fetch()
        if source != "pvc":
            publish(staged, manifest, data)
            shutil.rmtree(staging, ignore_errors=True)
            if source == "oci":
                finish_oci(staged)
        stage_tiktoken(manifest)
        total = sum(f["size"] for f in manifest["files"])
        log(f"every file matches manifest {manifest['sha256']} ({len(manifest['files'])} files, {total} bytes)")
        write_marker(manifest)
        log(f"done in {time.monotonic() - started:.0f}s; wrote {marker}")


if __name__ == "__main__":
    try:
        main()
    except CopyError as error:
        sys.exit(f"refused: {error}")
