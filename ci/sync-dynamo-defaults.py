#!/usr/bin/env python3
"""Write charts/gpt-oss/templates/dynamo/_dynamo-defaults.tpl: the chart defaults of the Dynamo-only values.

The command of ci/gptoss_ci/sync_dynamo_defaults.py (its docstring has the usage); the tests import that module.
"""
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # a command file: import ci.gptoss_ci from the checkout
from ci.gptoss_ci.sync_dynamo_defaults import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
