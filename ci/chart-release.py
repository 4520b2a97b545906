#!/usr/bin/env python3
"""Package the chart reproducibly and publish it to an OCI registry, with the Helm SDK (helm-python-sdk).

The command of ci/gptoss_ci/chart_release.py (its docstring has the usage); the tests import that module.
"""
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # a command file: import ci.gptoss_ci from the checkout
from ci.gptoss_ci.chart_release import main  # noqa: E402

sys.exit(main())
