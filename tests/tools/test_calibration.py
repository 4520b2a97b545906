"""The calibration of aiconfigurator's figures on TensorRT-LLM's published ones (tools/gptoss/calibration.json, issue 56).

Needs no aiconfigurator: the fit is arithmetic on the file's points; tests/tools/test_published_figures.py checks, where
aiconfigurator is installed, that the points are what the pinned model predicts.
"""
import json

import pytest

from ci.generate import calibration as generator
from tools.gptoss import calibration

# (GPU, quantization, regime) -> factor and band (docs/targets.md, "How far to trust a prediction").
EXPECTED_GROUPS = {
    ("B200", "W4A8_MXFP4_MXFP8", "output-heavy"): (0.6803, [0.943, 1.1438]),
    ("GB200", "W4A8_MXFP4_MXFP8", "output-heavy"): (0.6594, [0.9011, 1.1545]),
    ("H200", "W4A16_MXFP4", "output-heavy"): (0.7591, [0.958, 1.0756]),
    ("H100", "W4A16_MXFP4", "output-heavy"): (0.7083, [0.982, 1.0164]),
    ("B200", "W4A8_MXFP4_MXFP8", "prompt-heavy"): (0.7691, [0.8605, 1.1621]),
    ("GB200", "W4A8_MXFP4_MXFP8", "prompt-heavy"): (0.797, [0.8643, 1.157]),
    ("H200", "W4A16_MXFP4", "prompt-heavy"): (0.949, [0.9111, 1.0976]),
    ("H100", "W4A16_MXFP4", "prompt-heavy"): (0.7954, [0.8588, 1.1644]),
}
# TensorRT-LLM's published output tokens/s/GPU (FACTS.md, "Published throughput") and aiconfigurator 0.12.0's raw
# figure for the same configuration, of the seed overlays' GPUs and quantizations.
SEED_PUBLISHED = {
    ("GB200", 1000, 1000): (27198, 43834), ("GB200", 8192, 1024): (6835, 9225),
    ("GB200", 32768, 1024): (1645, 1919), ("B200", 1000, 1000): (25943, 39281),
    ("B200", 8192, 1024): (6111, 8566), ("B200", 32768, 1024): (1392, 1679),
    ("H100", 1000, 1000): (4685, 6606), ("H100", 8192, 1024): (1169, 1586),
    ("H100", 32768, 1024): (333, 388),
}
QUANTIZATION = {"GB200": "W4A8_MXFP4_MXFP8", "B200": "W4A8_MXFP4_MXFP8", "H100": "W4A16_MXFP4"}


class TestCalibration:

    def test_should_fit_a_factor_and_band_per_gpu_quantization_and_regime(self):
        groups = {(g["gpu"], g["quantization"], g["regime"]): (g["factor"], g["band"])
                  for g in calibration.load()["groups"].values()}
        assert groups == EXPECTED_GROUPS

    @pytest.mark.parametrize("key", SEED_PUBLISHED, ids=lambda k: f"{k[0]}-{k[1]}-{k[2]}")
    def test_should_keep_the_published_point_within_the_calibrated_band(self, key):
        gpu, isl, osl = key
        published, raw = SEED_PUBLISHED[key]
        c = calibration.calibrate(raw, gpu, QUANTIZATION[gpu], isl, osl)
        assert c["low"] <= published <= c["high"]
        assert c["raw"] == raw and c["tokens_per_s_per_gpu"] < raw

    def test_should_show_each_points_leave_one_out_error(self):
        points = {(p["gpu"], p["isl"], p["osl"]): p for p in calibration.load()["points"]}
        assert len(points) == 22
        # GB200 8192/1024 fitted on 32768/1024 alone: 9225 x 1645/1919 = 7908 against 6835 published.
        assert (points[("GB200", 8192, 1024)]["loo_calibrated"], points[("GB200", 8192, 1024)]["loo_error"]) == \
            (7908, 0.157)

    def test_should_split_the_regimes_between_the_published_shapes(self):
        assert [calibration.regime(isl, osl) for isl, osl in ((128, 1000), (1024, 1024), (2800, 1000), (4000, 1000),
                                                              (8192, 1024), (32000, 256))] == \
            ["output-heavy", "output-heavy", "output-heavy", "prompt-heavy", "prompt-heavy", "prompt-heavy"]

    def test_should_say_which_fit_a_quantization_without_published_points_takes(self):
        c = calibration.calibrate(1000, "B200", "W4A8_MXFP4_FP8", 1024, 1024)
        assert (c["tokens_per_s_per_gpu"], c["group"]) == (680, "B200 W4A8_MXFP4_MXFP8 output-heavy")
        assert c["note"] == ("no published point runs W4A8_MXFP4_FP8 on B200: calibrated with the B200 "
                             "W4A8_MXFP4_MXFP8 fit")


class TestCalibrationCheck:
    """python -m ci.generate calibration --check: the file is a fit of its own points, on the published figures."""

    def test_should_pass_on_the_committed_files(self):
        assert generator.main(["--check"]) == 0

    def test_should_fail_on_a_published_figure_not_the_facts(self, tmp_path, monkeypatch, capsys):
        data = calibration.load()
        data["points"][0]["published"] += 1
        stale = tmp_path / "calibration.json"
        stale.write_text(json.dumps(data))
        monkeypatch.setattr(calibration, "CALIBRATION_FILE", stale)
        assert generator.main(["--check"]) == 1
        assert capsys.readouterr().err.splitlines() == [
            "tools/gptoss/calibration.json: its published figures are not ci/generate/compare_published.py's "
            "PUBLISHED: run python -m ci.generate calibration",
            "tools/gptoss/calibration.json: its factors, bands or leave-one-out figures are not a refit of its "
            "points: run python -m ci.generate calibration"]

    def test_should_fail_on_a_factor_edited_by_hand(self, tmp_path, monkeypatch, capsys):
        data = calibration.load()
        next(iter(data["groups"].values()))["factor"] = 0.5
        stale = tmp_path / "calibration.json"
        stale.write_text(json.dumps(data))
        monkeypatch.setattr(calibration, "CALIBRATION_FILE", stale)
        assert generator.main(["--check"]) == 1
        assert "not a refit of its points" in capsys.readouterr().err
