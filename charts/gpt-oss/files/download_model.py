"""Download the pinned model revision into the cache volume, once.

Idempotent: when the marker of this revision exists the script exits at once, before installing
anything; the marker is written only after snapshot_download returns. When TIKTOKEN_URL is set, the
harmony vocabulary is staged beside the weights too (also into a cache finished without it).
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


print(f"downloading {model_id}@{revision} to {model_dir}, skipping {ignore_patterns}", flush=True)
started = time.monotonic()
snapshot_download(
    repo_id=model_id,
    revision=revision,
    local_dir=model_dir,
    # Two CLI --exclude flags mis-parse and fill the PVC with original/ and metal/ copies.
    ignore_patterns=ignore_patterns,
    token=read_token(),
)
stage_tiktoken()
with open(marker + ".tmp", "w") as out:
    json.dump({"model": model_id, "revision": revision, "finished": int(time.time())}, out)
os.replace(marker + ".tmp", marker)
print(f"done in {time.monotonic() - started:.0f}s; wrote {marker}", flush=True)
