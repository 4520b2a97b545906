"""The code of tools/plan.py (plan.py) and tools/predict.py (predict.py), and what tests/ builds on: values as Helm
merges them (values.py), the chart rendered with Helm's own engine (render.py), the manifests in `helm template`'s
order (manifests.py), the rendered objects read back (objects.py) and Helm's command-line options (cli.py).

Its modules import each other relatively: under a script of tools/ the package is `gptoss` (the script's folder is
first on sys.path), under the tests and ci/ it is `tools.gptoss`. It needs only PyYAML and helm-python-sdk
(requirements-test.txt; predict.py also aiconfigurator), and never imports from tests/.
"""


def missing_module(error: ModuleNotFoundError, script: str) -> str:
    """The one line a tools/ script prints when its interpreter lacks the project's packages (exit code 2)."""
    import sys
    return (f"Error: {sys.executable} has no module {error.name!r}, which {script} needs: set up the project's venv "
            f"once (python3 -m venv .venv && .venv/bin/pip install -r requirements-test.txt) and run "
            f".venv/bin/python {script}")
