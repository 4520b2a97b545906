"""Clean-ups that never hide the failure they clean up after (a shared fixture's set-up that failed, then a clean-up
that timed out, once reported only the clean-up's timeout for all 38 tests of a group)."""
from __future__ import annotations

import contextlib
from typing import Callable


@contextlib.contextmanager
def cleaned_up(*steps: Callable[[], object]):
    """Run the block, then every clean-up step, each even when one before it failed. The failure raised is the first:
    the block's when it failed, else the first step's; every later failure is added to it as a note ("then, cleaning
    up: ..."), so the tests show why the set-up failed and, after it, what the clean-up could not do."""
    failure: BaseException | None = None
    try:
        yield
    except BaseException as error:  # noqa: B036  (GeneratorExit and KeyboardInterrupt are failures to keep too)
        failure = error
    for step in steps:
        try:
            step()
        except BaseException as error:  # noqa: B036
            if failure is None:
                failure = error
            else:
                failure.add_note(f"then, cleaning up: {type(error).__name__}: {error}")
    if failure is not None:
        raise failure
