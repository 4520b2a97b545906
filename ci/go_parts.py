#!/usr/bin/env python3
"""Build the Go programs the cluster tier runs (Kubernetes, etcd, operators) from modules pinned in go.sum files.

The command of ci/gptoss_ci/go_parts.py (its docstring has the usage); the tests import that module.
"""
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # a command file: import ci.gptoss_ci from the checkout
from ci.gptoss_ci.go_parts import main  # noqa: E402

sys.exit(main())
