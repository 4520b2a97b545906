"""Secure defaults on every pod the chart defines, for every target and both DGD API versions."""
import re

import pytest

from tests.helpers import CHART_DIR, OVERLAYS, dgd_components, render_chart

API_VERSIONS = ["nvidia.com/v1beta1", "nvidia.com/v1alpha1"]


def pod_specs(objects):
    """(name, pod spec, its containers) for every pod the chart defines, DGD components included."""
    for obj in objects:
        kind, name = obj["kind"], obj["metadata"]["name"]
        if kind == "Pod":
            yield name, obj["spec"], obj["spec"]["containers"]
        elif kind in ("Job", "Deployment"):
            spec = obj["spec"]["template"]["spec"]
            yield name, spec, spec["containers"]
        elif kind == "DynamoGraphDeployment":
            for component_name, component in dgd_components(obj).items():
                sidecars = [c for c in component["pod_spec"].get("containers", []) if c.get("name") != "main"]
                yield f"{name}/{component_name}", component["pod_spec"], [component["main"], *sidecars]


def all_containers(spec, containers):
    return list(containers) + list(spec.get("initContainers", []))


@pytest.mark.parametrize("api_version", API_VERSIONS)
@pytest.mark.parametrize("overlay", OVERLAYS, ids=OVERLAYS)
class TestSecureDefaults:
    def objects(self, overlay, api_version):
        return render_chart([overlay], {"dynamo": {"apiVersion": api_version}})

    def test_should_run_every_pod_as_non_root(self, overlay, api_version):
        for name, spec, _ in pod_specs(self.objects(overlay, api_version)):
            assert spec["securityContext"]["runAsNonRoot"] is True, name
            assert spec["securityContext"]["runAsUser"] != 0, name

    def test_should_forbid_privilege_escalation_in_every_container(self, overlay, api_version):
        for name, spec, containers in pod_specs(self.objects(overlay, api_version)):
            for container in all_containers(spec, containers):
                context = container["securityContext"]
                assert context["allowPrivilegeEscalation"] is False, (name, container.get("name"))
                assert not context.get("privileged"), name
                assert context.get("runAsUser", 1) != 0, name

    def test_should_use_no_host_paths_or_host_namespaces(self, overlay, api_version):
        for name, spec, _ in pod_specs(self.objects(overlay, api_version)):
            assert not any("hostPath" in v for v in spec.get("volumes", [])), name
            assert not any(spec.get(k) for k in ("hostNetwork", "hostPID", "hostIPC")), name

    def test_should_request_resources_in_every_container(self, overlay, api_version):
        for name, spec, containers in pod_specs(self.objects(overlay, api_version)):
            for container in all_containers(spec, containers):
                requests = (container.get("resources") or {}).get("requests", {})
                assert {"cpu", "memory"} <= requests.keys(), (name, container.get("name"))

    def test_should_pin_every_image(self, overlay, api_version):
        for name, spec, containers in pod_specs(self.objects(overlay, api_version)):
            for container in all_containers(spec, containers):
                image = container["image"]
                assert re.search(r"(:\d+\.\d+(\.\d+)?[^:/]*|@sha256:[0-9a-f]+)$", image), (name, image)
                assert not image.endswith(":latest"), (name, image)


class TestSecrets:
    def test_should_reference_the_token_secret_and_never_render_a_secret(self):
        objects = render_chart(["agg.yaml"])
        assert not [o for o in objects if o["kind"] == "Secret"]

    def test_should_keep_secret_values_out_of_the_templates(self):
        for template in (CHART_DIR / "templates").rglob("*"):
            if template.is_file():
                assert "kind: Secret" not in template.read_text(), template.name
