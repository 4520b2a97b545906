"""The cache the Go parts are built into, outside the checkout: where it is, how a build fills it whole, and how an old
pin's build leaves it. go_parts and dynamo_operator (a part built its own way) both build through it."""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path


def cache_root() -> Path:
    return Path(os.environ.get("GPT_OSS_GO_CACHE") or Path.home() / ".cache" / "gpt-oss" / "go")


@contextlib.contextmanager
def building(part: str, target: Path):
    """A scratch folder in the cache to build the part in: it becomes `target` when the block ends well (so a
    cache folder is always whole) and is removed whatever happens; a failed command ends the build, naming it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{part}-", dir=target.parent))
    try:
        yield scratch
        shutil.rmtree(target, ignore_errors=True)
        scratch.rename(target)
    except subprocess.CalledProcessError as error:
        raise SystemExit(f"{part}: {' '.join(map(str, error.cmd))} failed (exit {error.returncode})") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def drop_other_keys(part: str, current: Path) -> None:
    """Older pins' builds of the part are never used again (kubernetes is ~480 MB a key): a disk that held every
    pin CI ever built filled up. A scratch folder of a build that died goes too, unless it is an hour young
    (another checkout may be building the same part now). `current`: the folder of the pin in use."""
    for folder in cache_root().glob(f"{part}-*"):
        if folder != current and folder.name[len(part) + 1:].isalnum():
            shutil.rmtree(folder, ignore_errors=True)
    for scratch in cache_root().glob(f".{part}-*"):
        if time.time() - scratch.stat().st_mtime > 3600:
            shutil.rmtree(scratch, ignore_errors=True)
