#!/usr/bin/env python3
"""Write the predicted figures of README.md and docs/targets.md from tools/predict.py.

The command of ci/gptoss_ci/gen_target_figures.py (its docstring has the usage); the tests import that module.
"""
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # a command file: import ci.gptoss_ci from the checkout
from ci.gptoss_ci.gen_target_figures import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
