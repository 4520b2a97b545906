#!/usr/bin/env python3
"""aiconfigurator's prediction of a target: `python tools/predict.py -f values/disagg-k8s.yaml [--json] [--no-best]`.

The code is tools/gptoss/predict.py (its docstring has the usage); this file's folder is first on sys.path, so the
package imports as `gptoss` (tools/plan.py says more).
"""
import os
import sys

try:
    from gptoss import missing_module, run
except ModuleNotFoundError:  # python -I or -P: this file's folder, and so tools/gptoss, is not on sys.path
    print(f"Error: {sys.executable} does not look for modules beside tools/predict.py (python -I or -P): run "
          ".venv/bin/python tools/predict.py (set up the venv once: python3 -m venv .venv && .venv/bin/pip install -r "
          "requirements-test.txt)", file=sys.stderr)
    raise SystemExit(2) from None

try:
    from gptoss.predict import main
except ModuleNotFoundError as error:
    print(missing_module(error, "tools/predict.py"), file=sys.stderr)
    raise SystemExit(2) from None

if __name__ == "__main__":
    os.environ.setdefault("AICONFIGURATOR_LOG_LEVEL", "ERROR")
    raise SystemExit(run(main, "tools/predict.py"))
