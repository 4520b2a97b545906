"""The project's CI programs, in three rooms, each a package with one entry point:

    python -m ci.cluster <verb>      the test cluster: Go parts (the Dynamo operator among them), the control plane, the
                                     kubelet node and its images, Argo CD, the stand-ins, the pinned upstream CRDs
    python -m ci.generate [--check]  every file written into the chart or docs from upstream facts or from the tools
    python -m ci.release <verb>      package, scan and publish the chart; the model-fetch image

This module is the floor they stand on: the checkout's root, the shared facts folder and the verb table every entry
point reads. It imports no room, and no room imports another that uses it (generate and release import nothing of
cluster; cluster imports nothing of them). Nothing here edits sys.path, imports tests/ or loads a file by path.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

# The checkout's root.
REPO = Path(__file__).resolve().parents[1]


def shared_dir(environ=None) -> Path:
    """The shared facts folder (FACTS.md, the upstream CRDs, the operator's archives): $GPT_OSS_SHARED_DIR or ../shared."""
    environ = os.environ if environ is None else environ
    return Path(environ.get("GPT_OSS_SHARED_DIR") or REPO.parent / "shared")


def verb_listing(room: str, verbs: dict[str, tuple[str, str]]) -> str:
    """The verbs of a room's --help: one line each, with its help."""
    return f"verbs (`python -m ci.{room} VERB --help` for each):\n" + "\n".join(
        f"  {name:<22}{text}" for name, (_, text) in verbs.items())


def run_verbs(room: str, summary: str, verbs: dict[str, tuple[str, str]], argv: list[str] | None = None) -> int:
    """A room's entry point: `python -m ci.<room> VERB ARGS...` calls main(ARGS) of the verb's module, imported only
    then (a verb's optional requirements do not burden the others' --help). verbs: name -> (module, one-line help)."""
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog=f"python -m ci.{room}", description=summary,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=verb_listing(room, verbs))
    parser.add_argument("verb", choices=list(verbs), metavar="VERB", help="one of the verbs below")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the verb's own arguments")
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        return 0 if argv else 2
    args = parser.parse_args(argv[:1])
    module = importlib.import_module(verbs[args.verb][0])
    if args.verb in getattr(module, "OWN_VERBS", ()):  # a module whose main parses the verb itself
        return module.main(argv, prog=f"python -m ci.{room}")
    return module.main(argv[1:], prog=f"python -m ci.{room} {args.verb}")
