"""`python -m ci.gptoss_ci.node`: the kubelet node's command (the package's docstring has the usage)."""
import sys

from . import main

sys.exit(main())
