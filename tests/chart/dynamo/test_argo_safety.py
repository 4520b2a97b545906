"""Argo CD compares renders: the chart must render the same bytes for the same values."""
import re

import pytest

from tests.helpers import CHART_DIR, OVERLAYS, render_manifests

FORBIDDEN = re.compile(r"\b(lookup|randAlphaNum|randAlpha|randNumeric|randAscii|randInt|uuidv4|now|date|dateInZone|"
                       r"genCA|genPrivateKey|genSelfSignedCert|genSignedCert|htpasswd)\b")


@pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
def test_should_render_byte_identical_twice(overlay):
    # A real render now against the run's memo of an earlier one (rendered now too if no test has yet): two renders.
    assert render_manifests([overlay], fresh=True) == render_manifests([overlay])


# The one exception: live state is read with lookup only in _live-state.tpl, which renders {} without a cluster
# (helm template, Argo CD), so a render there stays the same bytes.
LIVE_STATE = "_live-state.tpl"


def test_should_use_no_cluster_random_or_time_functions():
    offenders = []
    for template in (CHART_DIR / "templates").rglob("*"):
        if template.is_file():
            for action in re.findall(r"\{\{(.*?)\}\}", template.read_text(), re.S):
                found = set(FORBIDDEN.findall(re.sub(r'"[^"]*"', "", action)))
                if template.name == LIVE_STATE:
                    found -= {"lookup"}
                if found:
                    offenders.append((template.name, action.strip()[:80]))
    assert not offenders
