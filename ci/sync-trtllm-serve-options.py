#!/usr/bin/env python3
"""Write charts/gpt-oss/templates/trtllm-serve/_trtllm-serve-options.tpl: the options of `trtllm-serve` (serve command).

The command of ci/gptoss_ci/sync_trtllm_serve_options.py (its docstring has the usage); the tests import that module.
"""
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # a command file: import ci.gptoss_ci from the checkout
from ci.gptoss_ci.sync_trtllm_serve_options import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
