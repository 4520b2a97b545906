"""A small stand-in for the model, and tools/mirror-model.py run on it, for the model-source tests.

A few files like the real revision's: a config, a tokenizer, two weight shards of which the first is larger
than one 8 MiB S3 part (so mirroring it is a multipart upload), and an original/ copy the chart's ignore
patterns skip. The vocabulary stands in for o200k_base.tiktoken.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO_ROOT
from tools.gptoss import model_copy

MODEL = "openai/gpt-oss-120b"
REVISION = "b5c939de8f754692c1647ca79fbf85e8c1e70f8a"
OTHER_REVISION = "0" * 40
BIG = "model-00001-of-00002.safetensors"
BIG_SIZE = 20 * 1024 * 1024
VOCABULARY = b"stand-in harmony vocabulary\n" * 1000
VOCABULARY_SHA256 = hashlib.sha256(VOCABULARY).hexdigest()
MIRROR = REPO_ROOT / "tools" / "mirror-model.py"


def make(folder: Path) -> dict[str, bytes]:
    """Write the stand-in into `folder`; returns the files a copy must hold (path -> bytes), vocabulary included."""
    files = {
        "config.json": b'{"model_type": "gpt_oss", "num_hidden_layers": 36}\n',
        "tokenizer.json": b'{"version": "1.0", "model": {"type": "BPE"}}\n',
        BIG: hashlib.sha256(b"shard 1").digest() * (BIG_SIZE // 32),
        "model-00002-of-00002.safetensors": hashlib.sha256(b"shard 2").digest() * (1024 * 1024 // 32),
    }
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    (folder / "original").mkdir(exist_ok=True)
    (folder / "original" / "model.safetensors").write_bytes(b"another full copy, skipped\n")
    (folder.parent / "o200k_base.tiktoken").write_bytes(VOCABULARY)
    return {**files, "tiktoken/o200k_base.tiktoken": VOCABULARY}


def mirror(source: Path, destination: str, *options: str, env: dict | None = None, revision: str = REVISION,
           timeout: float = 300) -> tuple[int, dict, str]:
    """tools/mirror-model.py --from-dir `source` to `destination`: (exit code, its JSON result, its log).

    The stand-in is no revision the Hub lists, and --from-dir checks a folder against the revision it claims: the
    stand-in gets the record of `revision` (its model-manifest.json, as an earlier copy's) before each run."""
    files = [{"path": name, "size": (source / name).stat().st_size, "sha256": model_copy.sha256_file(source / name)}
             for name in model_copy.folder_files(source, ["original/*", "metal/*"])]
    (source / model_copy.MANIFEST).write_bytes(model_copy.manifest_bytes(MODEL, revision, files))
    command = [sys.executable, str(MIRROR), "--from-dir", str(source), "--revision", revision,
               "--tiktoken", str(source.parent / "o200k_base.tiktoken"), "--tiktoken-sha256", VOCABULARY_SHA256,
               "--json", *options, destination]
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                            env={**os.environ, **(env or {})})
    return result.returncode, json.loads(result.stdout) if result.returncode == 0 else {}, result.stderr


def values(extra: dict) -> dict:
    """Chart values for the stand-in: its vocabulary's sha256, and a vocabulary URL nothing answers (a copy that
    holds the vocabulary never needs it)."""
    return {"model": {"tiktoken": {"sha256": VOCABULARY_SHA256, "url": "http://127.0.0.1:9/o200k_base.tiktoken"}},
            **extra}
