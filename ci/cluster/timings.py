"""The test files that took a run's time, from the JUnit XML each group of ci/test-tiers.sh writes.

usage: python -m ci.cluster timings [--top N] XML...

Per file: its tests and the seconds they took (set-up, call and tear-down, as pytest's JUnit report counts them),
summed per group, the slowest first. Under pytest-xdist a file's seconds are those of the worker that ran it: with
the cores shared, a file's share of the run, not its CPU alone.
"""
from __future__ import annotations

import argparse
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path


def test_file(classname: str) -> str:
    """pytest's JUnit classname (tests.cluster.test_node.TestNode) -> its file (tests/cluster/test_node.py)."""
    parts = classname.split(".")
    for index in range(len(parts), 0, -1):
        if parts[index - 1].startswith("test_"):
            return "/".join(parts[:index]) + ".py"
    return classname


def by_file(report: Path) -> dict[str, tuple[int, float]]:
    """A JUnit report's test files -> (tests, seconds)."""
    totals: dict[str, list] = defaultdict(lambda: [0, 0.0])
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        total = totals[test_file(case.get("classname", ""))]
        total[0] += 1
        total[1] += float(case.get("time") or 0)
    return {name: (count, seconds) for name, (count, seconds) in totals.items()}


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=15, help="files listed per report (default 15)")
    parser.add_argument("reports", nargs="+", type=Path, metavar="XML")
    args = parser.parse_args(argv)
    for report in args.reports:
        if not report.is_file():
            print(f"{report}: no report (the group did not run)")
            continue
        files = sorted(by_file(report).items(), key=lambda item: -item[1][1])
        seconds = sum(total for _, (_, total) in files)
        print(f"{report.name}: {sum(count for _, (count, _) in files)} tests, {seconds:.0f} s in all; "
              f"the slowest files:")
        for name, (count, total) in files[:args.top]:
            print(f"  {total:7.1f} s  {count:5d} tests  {name}")
    return 0
