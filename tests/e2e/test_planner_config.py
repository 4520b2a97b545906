"""The SLA planner's --config, checked by the planner itself: ai-dynamo 1.2.1's PlannerConfig (the pydantic model
`python3 -m dynamo.planner --config` validates with) accepts every rendered config, aic_interpolation included,
and each config it refuses at start is refused by the chart first (templates/validation/_check-autoscaling.tpl, _check-monitoring.tpl).

CPU only: nothing starts, the planner's own class parses the rendered JSON. Skips without ai-dynamo.
"""
from __future__ import annotations

import json

import pytest

from tests.helpers import DYNAMO_OVERLAYS, ChartRenderError, dgd_components, find, render_chart

# The chart refuses the 1.2.1 planner on attention-DP roles (its workers publish no forward-pass metrics there).
PLANNER_OVERLAYS = [o for o in DYNAMO_OVERLAYS if o not in ("agg.yaml", "8xb200-single-node.yaml")]
# A planner that sweeps with aiconfigurator: Dynamo 1.3.0 or newer (refused before); its config is still checked
# with the 1.2.1 PlannerConfig, the newest installed here.
# A budget of one 8-GPU node: the one-node overlays refuse a planner that may grow past their node.
AIC_PLANNER = {"enabled": True, "image": {"tag": "1.3.0"}, "aicInterpolation": {"enabled": True},
               "throughputScaling": True, "preDeploymentSweepingMode": "rapid", "maxGpuBudget": 8}

pytestmark = pytest.mark.e2e
API_VERSIONS = ["nvidia.com/v1beta1"]


@pytest.fixture(scope="module")
def planner_config_class():
    module = pytest.importorskip("dynamo.planner.config.planner_config",
                                 reason="needs ai-dynamo 1.2.1 (pip install -r requirements-e2e.txt)")
    return module.PlannerConfig


def rendered_config(overlay: str, values: dict) -> dict:
    dgd = find(render_chart([overlay], values), "DynamoGraphDeployment")
    args = dgd_components(dgd)["Planner"]["args"]
    return json.loads(args[args.index("--config") + 1])


@pytest.mark.parametrize("api", API_VERSIONS)
@pytest.mark.parametrize("overlay", PLANNER_OVERLAYS)
def test_should_be_accepted_by_the_planners_own_config_class(planner_config_class, overlay, api):
    config = rendered_config(overlay, {"planner": {"enabled": True, "maxGpuBudget": 8}, "dynamo": {"apiVersion": api}})
    # Unknown keys would be dropped silently (pydantic ignores extras): every key must be a field.
    assert set(config) <= set(planner_config_class.model_fields)
    parsed = planner_config_class.from_config_arg(json.dumps(config))
    assert parsed.environment == "kubernetes" and parsed.backend == "trtllm"
    # What the 1.2.1 planner decides with here: load scaling, without an aiconfigurator sweep.
    assert parsed.aic_interpolation is None
    assert parsed.enable_load_scaling and not parsed.enable_throughput_scaling


@pytest.mark.parametrize("overlay", DYNAMO_OVERLAYS)
def test_should_write_an_aic_interpolation_the_planner_parses(planner_config_class, overlay):
    config = rendered_config(overlay, {"planner": AIC_PLANNER})
    assert set(config) <= set(planner_config_class.model_fields)
    parsed = planner_config_class.from_config_arg(json.dumps(config))
    assert parsed.aic_interpolation is not None
    assert set(config["aic_interpolation"]) == set(type(parsed.aic_interpolation).model_fields)
    assert parsed.aic_interpolation.prefill_pick.num_gpus == config["prefill_engine_num_gpu"]
    assert parsed.aic_interpolation.decode_pick.num_gpus == config["decode_engine_num_gpu"]
    assert parsed.enable_throughput_scaling and parsed.enable_load_scaling


def test_should_pass_other_targets_and_settings_through(planner_config_class):
    values = {"planner": {"enabled": True, "optimizationTarget": "latency", "advisory": True,
                          "aicInterpolation": {"enabled": False}, "preDeploymentSweepingMode": "none"}}
    parsed = planner_config_class.model_validate(rendered_config("disagg-k8s.yaml", values))
    # A non-sla target: the planner forces load scaling on and throughput scaling off, so "none" is fine.
    assert (parsed.optimization_target, parsed.advisory, parsed.aic_interpolation) == ("latency", True, None)
    assert parsed.enable_load_scaling and not parsed.enable_throughput_scaling


# (values the planner refuses, the planner's message, the chart's message); the chart refuses them first.
PLANNER_REFUSALS = [
    ({"throughputScaling": True, "preDeploymentSweepingMode": "none"},
     "pre_deployment_sweeping_mode cannot be 'none' when enable_throughput_scaling is True",
     "planner.throughputScaling=true with planner.preDeploymentSweepingMode=none"),
    ({"throughputScaling": True, "preDeploymentSweepingMode": "rapid", "loadAdjustmentIntervalSeconds": 90,
      "throughputAdjustmentIntervalSeconds": 60},
     "load_adjustment_interval_seconds (90s) must be shorter than throughput_adjustment_interval_seconds (60s)",
     "planner.loadAdjustmentIntervalSeconds=90 is not below planner.throughputAdjustmentIntervalSeconds=60"),
    ({"throughputScaling": False, "loadScaling": False},
     "At least one scaling mode must be enabled",
     "planner.throughputScaling=false and planner.loadScaling=false"),
]


@pytest.mark.parametrize("planner_values,planner_message,chart_message", PLANNER_REFUSALS,
                         ids=["sweep-none", "load-interval", "no-mode"])
def test_should_refuse_what_the_planner_refuses(planner_config_class, planner_values, planner_message, chart_message):
    values = {"planner": {"enabled": True, **planner_values}}
    # What the chart would have written without its rule: the accepted config with the refused settings.
    config = rendered_config("disagg-k8s.yaml", {"planner": {"enabled": True}})
    mapping = {"preDeploymentSweepingMode": "pre_deployment_sweeping_mode",
               "loadAdjustmentIntervalSeconds": "load_adjustment_interval_seconds",
               "throughputAdjustmentIntervalSeconds": "throughput_adjustment_interval_seconds",
               "throughputScaling": "enable_throughput_scaling", "loadScaling": "enable_load_scaling"}
    config.update({mapping[key]: value for key, value in planner_values.items()})
    with pytest.raises(ValueError, match=planner_message.replace("(", r"\(").replace(")", r"\)")):
        planner_config_class.model_validate(config)
    with pytest.raises(ChartRenderError) as error:
        render_chart(["disagg-k8s.yaml"], values)
    assert chart_message in str(error.value)
