#!/usr/bin/env python3
"""Write charts/gpt-oss/templates/_sizing-tables.tpl: per-GPU-type sizing numbers from aiconfigurator.

The command of ci/gptoss_ci/gen_sizing_tables.py (its docstring has the usage); the tests import that module.
"""
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # a command file: import ci.gptoss_ci from the checkout
from ci.gptoss_ci.gen_sizing_tables import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
