#!/usr/bin/env python3
"""Fetch the upstream CRDs the tests read (pinned in ci/crds.json) into a cache folder, checking each sha256.

The command of ci/gptoss_ci/fetch_crds.py (its docstring has the usage); the tests import that module.
"""
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # a command file: import ci.gptoss_ci from the checkout
from ci.gptoss_ci.fetch_crds import main  # noqa: E402

sys.exit(main())
