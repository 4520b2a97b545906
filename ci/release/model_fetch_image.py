"""Print the model-fetch image reference the chart defaults to, after checking the release may publish it there.

usage: python -m ci.release model-fetch-image --owner GITHUB_OWNER --version CHART_VERSION

The release workflow builds images/model-fetch/Containerfile and pushes it to this reference before it pushes
the chart, so the chart's default modelCache.download.image always exists. Refused (exit 1, saying what to
change): a tag other than the chart version, or a repository outside ghcr.io/<owner>/ (a fork must point
modelCache.download.image.repository at its own registry path).
"""
from __future__ import annotations

import argparse
import sys

from tools.gptoss.yaml_text import load_yaml

from . import REPO

CHART = REPO / "charts" / "gpt-oss"


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--owner", required=True, help="the GitHub owner the workflow publishes under")
    parser.add_argument("--version", required=True, help="the chart version being released")
    args = parser.parse_args(argv)
    image = load_yaml((CHART / "values.yaml").read_text())["modelCache"]["download"]["image"]
    repository, tag = image["repository"], str(image["tag"])
    expected = f"ghcr.io/{args.owner.lower()}/model-fetch"
    if repository != expected:
        print(f"modelCache.download.image.repository is {repository}, but this workflow publishes {expected}: set "
              f"it to {expected} in charts/gpt-oss/values.yaml (and artifacthub.io/images in Chart.yaml)",
              file=sys.stderr)
        return 1
    if tag != args.version:
        print(f"modelCache.download.image.tag is {tag}, but the chart version is {args.version}: the image is "
              "published with the chart's version; set the tag to it", file=sys.stderr)
        return 1
    print(f"{repository}:{tag}")
    return 0
