"""python -m ci.cluster timings: each group's JUnit report summed per test file, the slowest first."""
from __future__ import annotations

from ci.cluster import timings

# Two files' cases as pytest writes them: a class's (classname ends in the class) and a module-level test's.
REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.cluster.test_node.TestNode" name="test_should_serve[agg.yaml]" time="120.5"/>
<testcase classname="tests.cluster.test_node.TestDrain" name="test_should_not_drop" time="30.25"/>
<testcase classname="tests.tools.test_predict" name="test_should_cover_every_overlay" time="0.5"/>
<testcase classname="tests.tools.test_predict.TestPredictions" name="test_should_pin" time="200.0"/>
</testsuite></testsuites>
"""


class TestTimings:
    def test_should_sum_each_file_slowest_first(self, tmp_path, capsys):
        report = tmp_path / "cluster-tests.xml"
        report.write_text(REPORT)
        assert timings.main([str(report)]) == 0
        assert capsys.readouterr().out.splitlines() == [
            "cluster-tests.xml: 4 tests, 351 s in all; the slowest files:",
            "    200.5 s      2 tests  tests/tools/test_predict.py",
            "    150.8 s      2 tests  tests/cluster/test_node.py",
        ]

    def test_should_say_when_a_group_left_no_report(self, tmp_path, capsys):
        assert timings.main(["--top", "1", str(tmp_path / "node-tests.xml")]) == 0
        assert capsys.readouterr().out.strip() == f"{tmp_path / 'node-tests.xml'}: no report (the group did not run)"
