"""The chart's sizing tables (templates/_sizing-tables.tpl) against what the pinned aiconfigurator predicts. Needs
requirements-predict.txt; skips without it."""
import pytest

from tests.helpers import needs_aiconfigurator


@needs_aiconfigurator
class TestSizingTables:
    def test_should_be_what_the_pinned_model_predicts(self):
        # Regenerates the tables in memory (aiconfigurator: about ten seconds) and compares with the chart's copy.
        from ci.generate import sizing_tables as module
        assert module.render() == module.TARGET.read_text(), "stale: run python -m ci.generate sizing-tables"
