#!/usr/bin/env python3
"""Argo CD (application controller, repo-server, Redis) beside a control plane for the cluster tier.

The command of ci/gptoss_ci/argocd.py (its docstring has the usage); the tests import that module.
"""
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # a command file: import ci.gptoss_ci from the checkout
from ci.gptoss_ci.argocd import main  # noqa: E402

sys.exit(main())
