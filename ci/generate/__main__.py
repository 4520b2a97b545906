"""`python -m ci.generate [--check]`: every generated file of the chart and docs; `python -m ci.generate <verb>`: one."""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import shutil
import sys

from ci import run_verbs, verb_listing

VERBS = {
    "schema": ("ci.generate.schema", "values.schema.json, the values.yaml comments and the README's values table"),
    "kubernetes-schema": ("ci.generate.kubernetes_schema",
                          "the Kubernetes types of the passthrough values, from the pinned OpenAPI"),
    "dynamo-defaults": ("ci.generate.dynamo_defaults", "the chart's copy of the Dynamo-only defaults of values.yaml"),
    "trtllm-fields": ("ci.generate.trtllm_fields", "TensorRT-LLM's engine keys per release, from the shared lists"),
    "sizing-tables": ("ci.generate.sizing_tables", "the chart's sizing tables, from aiconfigurator"),
    "target-figures": ("ci.generate.target_figures", "the predicted figures of README.md and docs/targets.md"),
    "trtllm-serve-options": ("ci.generate.trtllm_serve_options", "trtllm-serve's options, from a release's serve.py"),
    "compare-published": ("ci.generate.compare_published", "aiconfigurator against TensorRT-LLM's published figures"),
    "calibration": ("ci.generate.calibration", "the calibration of the predictions on the published figures, and its docs"),
}
# What the run without a verb regenerates, in order, and what each needs beyond the checkout and ../shared.
# kubernetes-schema first: schema merges what it writes.
EVERY = {"kubernetes-schema": "go", "schema": None, "dynamo-defaults": None, "trtllm-fields": None,
         "sizing-tables": "aiconfigurator", "calibration": None, "target-figures": "aiconfigurator"}
# About 15 minutes on 2 cores (a best-configuration search per target): only with --slow.
SLOW = {"target-figures"}
NOT_IN_EVERY = ("trtllm-serve-options reads a TensorRT-LLM release's serve.py (tests/chart/trtllm_serve/test_trtllm_serve.py checks the "
                "chart's copy); compare-published prints a comparison and writes nothing")


def every(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ci.generate", description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=verb_listing("generate", VERBS)
               + f"\n\nWithout a verb: {', '.join(EVERY)} ({', '.join(SLOW)} only with --slow; those needing "
                 f"aiconfigurator only where requirements-predict.txt is installed). Not in it: {NOT_IN_EVERY}.")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 naming each file that drifted (ci/lint.sh and CI run this)")
    parser.add_argument("--slow", action="store_true", help="also the generators that take minutes")
    parser.add_argument("--skip", action="append", default=[], choices=list(EVERY), metavar="VERB",
                        help="leave VERB out (repeatable), e.g. sizing-tables where a test regenerates it anyway")
    args = parser.parse_args(argv)
    failed = []
    for verb, needs in EVERY.items():
        if verb in args.skip:
            print(f"{verb}: left out (--skip)")
            continue
        if verb in SLOW and not args.slow:
            print(f"{verb}: left out (about 15 minutes; --slow runs it)")
            continue
        if needs == "go" and shutil.which("go") is None:
            print(f"{verb}: left out: needs the go command (the pinned Kubernetes module's OpenAPI)")
            continue
        if needs and needs != "go" and importlib.util.find_spec(needs) is None:
            print(f"{verb}: left out: needs {needs} (pip install -r requirements-predict.txt)")
            continue
        module = importlib.import_module(VERBS[verb][0])
        status = module.main(["--check"] if args.check else [], prog=f"python -m ci.generate {verb}")
        print(f"{verb}: {'drifted' if status else 'up to date' if args.check else 'done'}")
        if status:
            failed.append(verb)
    return 1 if failed else 0


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if arguments[:1] and arguments[0] in VERBS:
        sys.exit(run_verbs("generate", __doc__.splitlines()[0], VERBS, arguments))
    sys.exit(every(arguments))
