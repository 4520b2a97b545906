"""tools/plan.py --search writes overlays this chart takes, for each seed GPU and one no overlay uses (issue 56).

Needs aiconfigurator (requirements-predict.txt; .ci/run installs it in the main venv, and with CI=true its absence
fails instead of skipping). One search per GPU per process (about 15 s of CPU each), so this module runs in the
cluster tier: the written overlay is rendered by the chart (every check of it) and installed with a server-side dry
run into the tier's API server, which has the DynamoGraphDeployment CRD (admission runs, nothing is stored).
"""
from __future__ import annotations

import importlib.util
import json

import pytest

from tests.cluster import kube
from tests.helpers import render_chart, skip_for_missing_part
from tools.gptoss.objects import plan_document

pytestmark = [pytest.mark.cluster, pytest.mark.heavy(85)]  # heavy: aiconfigurator's searches

# GPU -> the request: ISL, OSL, rate, ITL limit in ms (TTFT 2000 ms); H200 is the GPU no overlay uses.
REQUESTS = {
    "GB200": (1000, 1000, "100000tok/s", 20.0),
    "B200": (8192, 1024, "20000tok/s", 20.0),
    "H100": (1000, 1000, "512users", 20.0),
    "H200": (1000, 1000, "100000tok/s", 20.0),
}
# GPU -> what the search answers (aiconfigurator 0.12.0): GPUs in all, mode, calibrated tokens/s/GPU of the best.
EXPECTED = {
    "GB200": (6, "agg", 18052),
    "B200": (5, "agg", 4282),
    "H100": (12, "agg", 2538),
    "H200": (36, "agg", 3025),
}
CPU_BUDGET_S = 60  # a search on 2 idle cores answers within 60 s (issue 56); CPU time, whatever else runs beside it


@pytest.fixture(scope="module")
def search():
    if importlib.util.find_spec("aiconfigurator") is None:
        skip_for_missing_part("--search needs aiconfigurator: pip install -r requirements-predict.txt")
    from tools.gptoss import search as module
    return module


@pytest.fixture(scope="module")
def written(search, tmp_path_factory) -> dict:
    """GPU -> (the search's answer, the overlay it wrote)."""
    folder = tmp_path_factory.mktemp("searched")
    out = {}
    for gpu, (isl, osl, rate, itl) in REQUESTS.items():
        answer = search.search(gpu, isl, osl, rate, itl=itl)
        path = folder / f"{gpu.lower()}.yaml"
        command = ["tools/plan.py", "--search", "--gpu", gpu, "--isl", str(isl), "--osl", str(osl), "--rate", rate,
                   "--itl", str(itl), "--write", path.name]
        search.write_overlay(answer, str(path), command)
        out[gpu] = (answer, path)
    return out


@pytest.mark.parametrize("gpu", REQUESTS)
class TestSearchOverlays:

    def test_should_meet_the_traffic_within_the_budget(self, written, gpu):
        answer, _ = written[gpu]
        assert answer["met"], answer.get("why")
        assert answer["best"]["itl_ms"] <= REQUESTS[gpu][3]
        assert answer["cpu_seconds"] <= CPU_BUDGET_S
        if gpu in EXPECTED:
            best = answer["best"]
            assert (best["gpus"], best["mode"], best["calibration"]["tokens_per_s_per_gpu"]) == EXPECTED[gpu]

    def test_should_write_an_overlay_the_chart_renders(self, written, gpu):
        answer, path = written[gpu]
        text = path.read_text()
        assert f"--gpu {gpu} " in text and "# Calibrated: " in text and "(band " in text
        plan = plan_document(render_chart([str(path)]))
        assert (plan["gpuType"], plan["totalGpus"]) == (gpu, answer["best"]["gpus"])

    def test_should_install_with_a_server_side_dry_run(self, written, gpu, k8s, namespace, dgd_api):
        from kubernetes.client.exceptions import ApiException
        from kubernetes.dynamic import DynamicClient
        _, path = written[gpu]
        client = DynamicClient(k8s.api_client)
        refused = {}
        for obj in render_chart([str(path)], namespace=namespace):
            body = json.loads(json.dumps(obj))
            body["metadata"]["namespace"] = namespace
            resource = client.resources.get(api_version=body["apiVersion"], kind=body["kind"])
            try:
                resource.create(body=body, namespace=namespace, dry_run="All")
            except ApiException as error:
                refused[f"{body['kind']}/{body['metadata']['name']}"] = f"{error.status}: {error.body}"
        assert refused == {}


class TestUnreachableTraffic:

    def test_should_answer_with_the_most_the_gpus_serve(self, search, written):
        # The H200 search again (its rows are reused), with fewer GPUs than 100000 tokens/s needs.
        answer = search.search("H200", 1000, 1000, "100000tok/s", itl=20.0, max_gpus=8)
        assert not answer["met"]
        assert answer["best"]["gpus"] <= 8
        assert answer["why"].startswith("8 H200 GPUs serve at most ")
        assert answer["why"].endswith("(calibrated) within ITL 20.0 ms and TTFT 2000.0 ms, below the 100000tok/s asked")

    def test_should_answer_with_the_nearest_point_when_no_configuration_meets_the_itl(self, search):
        answer = search.search("H100", 1000, 1000, "100000tok/s", itl=2.0)
        assert not answer["met"] and answer["best"] is not None
        assert answer["why"].startswith("no configuration on H100 meets ITL 2.0 ms and TTFT 2000.0 ms at ISL 1000 / "
                                        "OSL 1000: the nearest aiconfigurator finds has ITL ")
