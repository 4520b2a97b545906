#!/usr/bin/env python3
"""Generate values.schema.json, the values.yaml key comments and the chart README's values reference from
charts/gpt-oss/values.schema.yaml (--check: exit 1 when one drifted).

The command of ci/gptoss_ci/gen_schema.py (its docstring has the usage); the tests import that module.
"""
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # a command file: import ci.gptoss_ci from the checkout
from ci.gptoss_ci.gen_schema import main  # noqa: E402

sys.exit(main())
