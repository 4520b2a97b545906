"""The chart's sizing tables (templates/_sizing-tables.tpl) against what the pinned aiconfigurator predicts. Needs
requirements-predict.txt; skips without it."""
import pytest

from tests.helpers import needs_aiconfigurator


# heavy: its seconds in CI's cluster plane (python -m ci.cluster timings), so that pytest-xdist starts it before the
# quick files and it does not run last while the other workers idle (tests/conftest.py)
pytestmark = pytest.mark.heavy(15)


@needs_aiconfigurator
class TestSizingTables:
    def test_should_be_what_the_pinned_model_predicts(self):
        # Regenerates the tables in memory (aiconfigurator: about ten seconds) and compares with the chart's copy.
        from ci.generate import sizing_tables as module
        assert module.render() == module.TARGET.read_text(), "stale: run python -m ci.generate sizing-tables"
