"""aiconfigurator against TensorRT-LLM's published gpt-oss-120b figures (python -m ci.generate compare-published),
and the calibration fitted on them (tools/gptoss/calibration.json). Needs requirements-predict.txt; skips without it."""
import json
import subprocess
import sys

import pytest

from tests.helpers import PREDICTION_TOLERANCE as TOLERANCE
from tests.helpers import REPO_ROOT, needs_aiconfigurator


# (ISL, OSL, GPU) -> TensorRT-LLM's published output tokens/s/GPU and aiconfigurator's at maximum load for the
# published configuration (FACTS.md "Published throughput": B200 DEP2, GB200 TP1, H200 TP1, H100 DEP4).
# heavy: its seconds in CI's cluster plane (python -m ci.cluster timings), so that pytest-xdist starts it before the
# quick files and it does not run last while the other workers idle (tests/conftest.py)
pytestmark = pytest.mark.heavy(20)

EXPECTED_PUBLISHED = {
    (1000, 1000, "B200"): (25943, 39281), (1000, 1000, "GB200"): (27198, 43834),
    (1000, 1000, "H200"): (6868, 9230), (1000, 1000, "H100"): (4685, 6606),
    (1024, 1024, "B200"): (25870, 39073), (1024, 1024, "GB200"): (26609, 43631),
    (1024, 1024, "H200"): (6798, 9215), (1024, 1024, "H100"): (4715, 6585),
    (1024, 8192, "B200"): (17289, 26558), (1024, 8192, "GB200"): (14800, 21752),
    (1024, 8192, "H200"): (3543, 4446), (1024, 32768, "B200"): (6279, 8345),
    (1024, 32768, "GB200"): (5556, 7565), (1024, 32768, "H100"): (1177, 1682),
    (8192, 1024, "B200"): (6111, 8566), (8192, 1024, "GB200"): (6835, 9225),
    (8192, 1024, "H200"): (1828, 2018), (8192, 1024, "H100"): (1169, 1586),
    (32768, 1024, "B200"): (1392, 1679), (32768, 1024, "GB200"): (1645, 1919),
    (32768, 1024, "H200"): (519, 522), (32768, 1024, "H100"): (333, 388),
}


@pytest.fixture(scope="module")
def rows():
    """ci.generate.compare_published's rows by (ISL, OSL, GPU)."""
    result = subprocess.run([sys.executable, "-m", "ci.generate", "compare-published", "--json"],
                            capture_output=True, text=True, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    return {(r["isl"], r["osl"], r["gpu"]): r for r in json.loads(result.stdout)}


@needs_aiconfigurator
class TestPublishedFigures:

    def test_should_predict_every_published_configuration(self, rows):
        got = {key: (r["published"], r["predicted"]) for key, r in rows.items()}
        assert got.keys() == EXPECTED_PUBLISHED.keys()
        for key, (published, predicted) in EXPECTED_PUBLISHED.items():
            assert got[key][0] == published
            assert got[key][1] == pytest.approx(predicted, rel=TOLERANCE), key

    def test_should_keep_each_published_point_within_its_calibrated_band(self, rows):
        from tools.gptoss.calibration import calibrate
        outside = {}
        for key, (published, _) in EXPECTED_PUBLISHED.items():
            isl, osl, gpu = key
            c = calibrate(rows[key]["predicted"], gpu, rows[key]["quantization"], isl, osl)
            if not c["low"] <= published <= c["high"]:
                outside[key] = (c["low"], published, c["high"])
        assert outside == {}

    def test_should_be_the_predictions_the_calibration_was_fitted_on(self, rows):
        from tools.gptoss.calibration import load
        stored = {(p["isl"], p["osl"], p["gpu"]): p["predicted"] for p in load()["points"]}
        assert stored == {key: r["predicted"] for key, r in rows.items()}, "run python -m ci.generate calibration --remodel"
