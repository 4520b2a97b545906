#!/usr/bin/env python3
"""Scan every overlay's rendered objects with Checkov, plus the DGD's pods as the operator will create them.

The command of ci/gptoss_ci/checkov.py (its docstring has the usage); the tests import that module.
"""
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # a command file: import ci.gptoss_ci from the checkout
from ci.gptoss_ci.checkov import main  # noqa: E402

sys.exit(main())
