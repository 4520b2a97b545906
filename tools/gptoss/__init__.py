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


# The exit code of a tool that stopped on an exception it does not expect (a bug), and of one stopped by Ctrl-C.
INTERNAL_ERROR = 3
INTERRUPTED = 130
# Set (to anything but empty) to get the traceback of such an exception instead of its one line.
DEBUG_VARIABLE = "GPT_OSS_DEBUG"


def run(main, script: str) -> int:
    """main() of a tools/ script, with a last resort: each tool answers what it expects (a refusal, an unreachable
    URL) in one `Error:` line itself; anything else is a bug, shown in one line naming the exception and how to get its
    traceback (GPT_OSS_DEBUG=1), exit code 3. Ctrl-C ends in one line too, exit code 130."""
    import os
    import sys
    try:
        return main()
    except KeyboardInterrupt:
        print("Error: interrupted", file=sys.stderr)
        return INTERRUPTED
    except Exception as error:  # noqa: BLE001 -- the last resort; re-raised with GPT_OSS_DEBUG=1
        if os.environ.get(DEBUG_VARIABLE):
            raise
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(error))[:300]
        print(f"Error: {script} stopped on an unexpected {type(error).__name__}: {text} (a bug in the tool: run it "
              f"again with {DEBUG_VARIABLE}=1 for the traceback, and report it)", file=sys.stderr)
        return INTERNAL_ERROR
