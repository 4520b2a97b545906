"""Download the pinned model revision into the cache volume, once.

Idempotent: when the marker of this revision exists the script exits at once, before installing
anything. The marker is written only after snapshot_download returns AND every file the revision lists
(minus IGNORE_PATTERNS) is on the volume with the Hub's size and hash (sha256 for LFS files, git blob
sha1 otherwise): an interrupted run leaves no marker, and the next run resumes the partial files. A file
that fails the check is removed (with huggingface_hub's record of it) and the run exits 1, so the Job's
retry downloads it again. When TIKTOKEN_URL is set, the harmony vocabulary is staged beside the weights
too (also into a cache finished without it).
"""
import hashlib
import json
import os
import subprocess
import sys
import time
import urllib.request

model_id = os.environ["MODEL_ID"]
revision = os.environ["MODEL_REVISION"]
model_dir = os.environ["MODEL_DIR"]
marker = os.environ["MARKER"]
ignore_patterns = json.loads(os.environ["IGNORE_PATTERNS"])
pip_packages = os.environ.get("PIP_PACKAGES", "").split()
tiktoken_url = os.environ.get("TIKTOKEN_URL", "")
tiktoken_file = os.path.join(os.environ.get("TIKTOKEN_DIR", ""), os.path.basename(tiktoken_url))


def stage_tiktoken() -> None:
    """Fetch the harmony vocabulary, checked against its sha256; tool calls come back empty without it."""
    if not tiktoken_url or os.path.exists(tiktoken_file):
        return
    with urllib.request.urlopen(tiktoken_url, timeout=300) as response:
        data = response.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != os.environ["TIKTOKEN_SHA256"]:
        sys.exit(f"{tiktoken_url} has sha256 {digest}, expected {os.environ['TIKTOKEN_SHA256']}; not staging it")
    os.makedirs(os.path.dirname(tiktoken_file), exist_ok=True)
    with open(tiktoken_file + ".tmp", "wb") as out:
        out.write(data)
    os.replace(tiktoken_file + ".tmp", tiktoken_file)
    print(f"staged {tiktoken_file} ({len(data)} bytes, sha256 ok)", flush=True)


if os.path.exists(marker):
    stage_tiktoken()
    print(f"{model_id}@{revision} is already complete ({marker}); nothing to do", flush=True)
    sys.exit(0)

if pip_packages:
    print(f"installing {' '.join(pip_packages)}", flush=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--user", "--no-cache-dir", *pip_packages],
        check=True,
    )
    import site

    sys.path.insert(0, site.getusersitepackages())

from huggingface_hub import snapshot_download  # noqa: E402  (installed just above)


def read_token():
    """The optional token the chart mounts as a file (HF_TOKEN_PATH); None when no Secret exists."""
    path = os.environ.get("HF_TOKEN_PATH", "")
    if path and os.path.isfile(path):
        token = open(path).read().strip()
        return token or None
    return os.environ.get("HF_TOKEN") or None


def file_digest(path: str, algorithm: str, prefix: bytes = b"") -> str:
    digest = hashlib.new(algorithm, prefix)
    with open(path, "rb") as source:
        for block in iter(lambda: source.read(16 * 1024 * 1024), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(token) -> None:
    """Compare every expected file with the Hub's record of this revision; exit 1 naming what is wrong."""
    from huggingface_hub import HfApi
    from huggingface_hub.utils import filter_repo_objects

    info = HfApi().model_info(model_id, revision=revision, files_metadata=True, token=token)
    expected = {f.rfilename: f for f in info.siblings}
    names = list(filter_repo_objects(sorted(expected), ignore_patterns=ignore_patterns))
    wrong = []
    for name in names:
        entry, path = expected[name], os.path.join(model_dir, name)
        size = entry.lfs.size if entry.lfs else entry.size
        if not os.path.isfile(path):
            wrong.append(f"{name}: missing")
            continue
        actual = os.path.getsize(path)
        if actual != size:
            problem = f"{actual} bytes, the Hub lists {size}"
        elif entry.lfs and file_digest(path, "sha256") != entry.lfs.sha256:
            problem = f"sha256 differs from the Hub's {entry.lfs.sha256}"
        elif not entry.lfs and entry.blob_id and file_digest(path, "sha1", b"blob %d\0" % actual) != entry.blob_id:
            problem = f"git blob sha1 differs from the Hub's {entry.blob_id}"
        else:
            continue
        wrong.append(f"{name}: {problem}")
        # Gone with its download record, so the retry fetches it again instead of trusting it.
        os.remove(path)
        record = os.path.join(model_dir, ".cache", "huggingface", "download", name + ".metadata")
        if os.path.exists(record):
            os.remove(record)
    if wrong:
        sys.exit(f"{model_id}@{revision} is not complete, so no marker is written; removed for the retry:\n  "
                 + "\n  ".join(wrong))
    print(f"verified {len(names)} files of {model_id}@{revision} (sizes and hashes)", flush=True)


print(f"downloading {model_id}@{revision} to {model_dir}, skipping {ignore_patterns}", flush=True)
started = time.monotonic()
token = read_token()
snapshot_download(
    repo_id=model_id,
    revision=revision,
    local_dir=model_dir,
    # Two CLI --exclude flags mis-parse and fill the PVC with original/ and metal/ copies.
    ignore_patterns=ignore_patterns,
    token=token,
)
verify(token)
stage_tiktoken()
with open(marker + ".tmp", "w") as out:
    json.dump({"model": model_id, "revision": revision, "finished": int(time.time())}, out)
os.replace(marker + ".tmp", marker)
print(f"done in {time.monotonic() - started:.0f}s; wrote {marker}", flush=True)
