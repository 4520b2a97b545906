#!/usr/bin/env python3
"""Print the model-fetch image reference the chart defaults to, after checking the release may publish it there.

The command of ci/gptoss_ci/model_fetch_image.py (its docstring has the usage); the tests import that module.
"""
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # a command file: import ci.gptoss_ci from the checkout
from ci.gptoss_ci.model_fetch_image import main  # noqa: E402

sys.exit(main())
