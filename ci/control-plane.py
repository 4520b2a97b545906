#!/usr/bin/env python3
"""Start and stop a Kubernetes control plane on 127.0.0.1 for the cluster tier (envtest style), plus one real node.

The command of ci/gptoss_ci/control_plane.py (its docstring has the usage); the tests import that module.
"""
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # a command file: import ci.gptoss_ci from the checkout
from ci.gptoss_ci.control_plane import main  # noqa: E402

sys.exit(main())
