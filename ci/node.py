#!/usr/bin/env python3
"""A real Kubernetes node for the cluster tier: containerd, runc, CNI, the kubelet, kube-proxy and a cluster DNS.

The command of ci/gptoss_ci/node/__init__.py (its docstring has the usage); the tests import that module.
"""
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # a command file: import ci.gptoss_ci from the checkout
from ci.gptoss_ci.node import main  # noqa: E402

sys.exit(main())
