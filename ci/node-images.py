#!/usr/bin/env python3
"""Build, from Debian packages and PyPI only, every container image the node tests run; never pull one.

The command of ci/gptoss_ci/node_images.py (its docstring has the usage); the tests import that module.
"""
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # a command file: import ci.gptoss_ci from the checkout
from ci.gptoss_ci.node_images import main  # noqa: E402

sys.exit(main())
