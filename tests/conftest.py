from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT


def pytest_addoption(parser):
    parser.addoption(
        "--shared-dir",
        default=os.environ.get("GPT_OSS_SHARED_DIR", str(REPO_ROOT.parent / "shared")),
        help="folder with dynamo/crds and trtllm/llmargs-fields.json (env GPT_OSS_SHARED_DIR; default ../shared)",
    )


@pytest.fixture(scope="session")
def shared_dir(request) -> Path:
    path = Path(request.config.getoption("--shared-dir"))
    if not (path / "dynamo" / "crds").is_dir():
        pytest.skip(f"upstream reference files not found at {path} (set --shared-dir or GPT_OSS_SHARED_DIR); "
                    "a plain clone has none, CI has them")
    return path
