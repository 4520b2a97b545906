#!/usr/bin/env python3
"""The plan of a release, or its manifests: `python tools/plan.py -f values/agg.yaml [--predict | --manifests]`.

The code is tools/gptoss/plan.py (its docstring has the usage). Python puts this file's folder first on sys.path,
so the package imports as `gptoss` here, as `tools.gptoss` in the tests; its modules import each other relatively.
"""
import sys

from gptoss import missing_module

try:
    from gptoss.plan import main
except ModuleNotFoundError as error:
    print(missing_module(error, "tools/plan.py"), file=sys.stderr)
    raise SystemExit(2) from None

if __name__ == "__main__":
    raise SystemExit(main())
