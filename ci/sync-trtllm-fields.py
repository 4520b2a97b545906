#!/usr/bin/env python3
"""Write charts/gpt-oss/templates/engine/_trtllm-fields.tpl: the TensorRT-LLM engine keys of each release.

The command of ci/gptoss_ci/sync_trtllm_fields.py (its docstring has the usage); the tests import that module.
"""
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # a command file: import ci.gptoss_ci from the checkout
from ci.gptoss_ci.sync_trtllm_fields import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
