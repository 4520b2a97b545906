#!/usr/bin/env python3
"""The plan of a release, or its manifests: `python tools/plan.py -f values/agg.yaml [--predict | --manifests]`.

The code is tools/gptoss/plan.py (its docstring has the usage). Python puts this file's folder first on sys.path,
so the package imports as `gptoss` here, as `tools.gptoss` in the tests; its modules import each other relatively.
"""
import sys

try:
    from gptoss import missing_module, run
except ModuleNotFoundError:  # python -I or -P: this file's folder, and so tools/gptoss, is not on sys.path
    print(f"Error: {sys.executable} does not look for modules beside tools/plan.py (python -I or -P): run "
          ".venv/bin/python tools/plan.py (set up the venv once: python3 -m venv .venv && .venv/bin/pip install -r "
          "requirements-test.txt)", file=sys.stderr)
    raise SystemExit(2) from None

try:
    from gptoss.plan import main
except ModuleNotFoundError as error:
    print(missing_module(error, "tools/plan.py"), file=sys.stderr)
    raise SystemExit(2) from None

if __name__ == "__main__":
    raise SystemExit(run(main, "tools/plan.py"))
