#!/usr/bin/env python3
"""Compare aiconfigurator's predictions with TensorRT-LLM's published gpt-oss-120b throughput.

The command of ci/gptoss_ci/compare_published.py (its docstring has the usage); the tests import that module.
"""
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # a command file: import ci.gptoss_ci from the checkout
from ci.gptoss_ci.compare_published import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
