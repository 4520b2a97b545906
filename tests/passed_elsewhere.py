"""A pytest plugin (tests/conftest.py registers it): CI runs the offline tests twice, in the light venv (the README's
quick start, timed) and again in the cluster plane's full venv; the second run leaves out what the first passed.

GPT_OSS_RECORD_PASSED=<file>: the run writes the node ids whose every phase passed (its controller, which sees every
pytest-xdist worker's reports). GPT_OSS_SKIP_PASSED=<file>: the run deselects those, except the tests marked `extras`,
which check otherwise where aiconfigurator or ai-dynamo is installed. What skipped or failed there runs again. Without
either variable nothing changes. Light on purpose: it imports nothing of the harness.
"""
from __future__ import annotations

import os
from pathlib import Path

RECORD_PASSED = "GPT_OSS_RECORD_PASSED"
SKIP_PASSED = "GPT_OSS_SKIP_PASSED"


class PassedRecord:
    """The node ids whose every phase passed, written at the end of the run."""

    def __init__(self, path: Path):
        self.path, self.passed, self.failed = path, set(), set()

    def pytest_runtest_logreport(self, report):
        if report.failed or (report.when == "call" and not report.passed):
            self.failed.add(report.nodeid)
        elif report.when == "call":
            self.passed.add(report.nodeid)

    def pytest_sessionfinish(self, session):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("".join(f"{nodeid}\n" for nodeid in sorted(self.passed - self.failed)))


def pytest_configure(config):
    if os.environ.get(RECORD_PASSED) and not hasattr(config, "workerinput"):
        config.pluginmanager.register(PassedRecord(Path(os.environ[RECORD_PASSED])), "gpt-oss-passed-record")


def pytest_report_header(config):
    if os.environ.get(SKIP_PASSED):
        record = Path(os.environ[SKIP_PASSED])
        return (f"{len(record.read_text().splitlines())} tests that passed in {record.name} are not run again (those "
                f"marked extras are): {SKIP_PASSED}")
    return None


def pytest_collection_modifyitems(config, items):
    if not os.environ.get(SKIP_PASSED):
        return
    passed = set(Path(os.environ[SKIP_PASSED]).read_text().splitlines())
    again = [item for item in items if item.nodeid not in passed or item.get_closest_marker("extras")]
    if len(again) < len(items):
        kept = {id(item) for item in again}
        config.hook.pytest_deselected(items=[item for item in items if id(item) not in kept])
        items[:] = again
