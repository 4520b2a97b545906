#!/usr/bin/env python3
"""Make kind worker nodes look like each target's GPU nodes, and check that they still do.

The command of ci/gptoss_ci/kind_nodes.py (its docstring has the usage); the tests import that module.
"""
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # a command file: import ci.gptoss_ci from the checkout
from ci.gptoss_ci.kind_nodes import main  # noqa: E402

sys.exit(main())
