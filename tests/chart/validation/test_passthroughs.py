"""Passthrough values typed by the Kubernetes API (issue 53, item 3): the schema from the pinned OpenAPI
(ci/generate/kubernetes_schema.py) and the API server's rules (templates/validation/_check-passthroughs.tpl) refuse at
render time what only the API server (or Prometheus) refused before; valid values still render."""
import importlib
import json
import shutil
import subprocess
import sys

import helm_python
import pytest

from tests.helpers import (CHART_DIR, INGRESS_TEMPLATE, NETWORK_POLICIES, POD_MONITORS, REPO_ROOT, ChartRenderError,
                           Refusal, assert_refused, find, refusal_params, render_chart)
from tools.gptoss.yaml_text import load_yaml_all

SCHEMA = json.loads((CHART_DIR / "values.schema.json").read_text())


def peers(*cidrs: str) -> dict:
    """Values with NetworkPolicies on and the API server's peers as ipBlocks."""
    return {"networkPolicy": {"enabled": True, "apiServer": {"to": [{"ipBlock": {"cidr": cidr}} for cidr in cidrs]}}}


# Refusals (gpt-oss.checkValues.<concern>, templates/validation/_check-*.tpl): one table per concern, one case per
# message; tests/chart/validation/test_check_values.py counts them against the fail calls.
# gpt-oss.checkValues.passthroughs (_check-passthroughs.tpl): the API server's rules on passed-through values.
PASSTHROUGH_REFUSALS = [
    Refusal("env-var-name", "agg.yaml", {"workers": {"env": {"1_THREADS": "4"}}},
            "workers.env has the key \"1_THREADS\", which the API server refuses there; allowed: letters, digits, '_', '-' "
            "and '.', not starting with a digit"),
    Refusal("label-key", "agg.yaml", {"workers": {"nodeSelector": {"node type": "gpu"}}},
            "workers.nodeSelector has the key \"node type\", which the API server refuses there; allowed: a label key", extra=True),
    Refusal("resource-name", "agg.yaml", {"benchmark": {"resources": {"requests": {"memroy": "1Gi"}}}},
            "benchmark.resources.requests has the key \"memroy\", which the API server refuses there; allowed: cpu, memory, "
            "ephemeral-storage, hugepages-<size>, or a domain-qualified extended resource", extra=True),
    Refusal("annotation-key", "agg.yaml", {"ingress": {"annotations": {"-bad": "x"}}},
            "ingress.annotations has the key \"-bad\"", extra=True),
    Refusal("env-var-name-of-trtllm-serve", "trtllm-serve-low-latency.yaml", {"trtllmServe": {"env": {"A=B": "x"}}},
            "trtllmServe.env has the key \"A=B\"", extra=True),
    # The schema's quantity pattern (controller-gen's) takes a decimal exponent; resource.ParseQuantity does not.
    Refusal("quantity-parse", "agg.yaml", {"frontend": {"resources": {"requests": {"cpu": "1e1.5"}}}},
            "frontend.resources.requests.cpu=1e1.5 is not a Kubernetes quantity; allowed: a number with an optional suffix"),
    Refusal("request-above-limit", "agg.yaml", {"workers": {"resources": {"requests": {"memory": "500Gi"}}}},
            "workers.resources.requests.memory=500Gi is more than workers.resources.limits.memory=400Gi: the API server "
            "refuses a request above its limit; allowed: a request at most the limit, or no limit"),
    # 2 (two cores) against 1500m: compared as quantities, not as strings.
    Refusal("cpu-request-above-limit", "agg.yaml",
            {"frontend": {"resources": {"requests": {"cpu": 2}, "limits": {"cpu": "1500m"}}}},
            "frontend.resources.requests.cpu=2 is more than frontend.resources.limits.cpu=1500m", extra=True),
    Refusal("extended-resource-not-equal", "agg.yaml",
            {"workers": {"resources": {"requests": {"rdma/ib": 2}, "limits": {"rdma/ib": 1}}}},
            "workers.resources.requests.rdma/ib=2 needs workers.resources.limits.rdma/ib equal to it (it is 1): Kubernetes "
            "does not overcommit extended resources and hugepages"),
    Refusal("extended-resource-without-limit", "agg.yaml", {"benchmark": {"resources": {"requests": {"hugepages-2Mi": "1Gi"}}}},
            "benchmark.resources.requests.hugepages-2Mi=1Gi needs benchmark.resources.limits.hugepages-2Mi equal to it (it "
            "is not set)", extra=True),
    Refusal("toleration", "agg.yaml", {"workers": {"tolerations": [{"operator": "Equal", "value": "gpu"}]}},
            "workers.tolerations[0] is refused by the API server: an empty key needs operator Exists (match every taint); "
            "allowed: a key, or operator: Exists"),
    *(Refusal(f"toleration-{name}", "agg.yaml", {component: {"tolerations": [toleration]}},
              f"{component}.tolerations[0] is refused by the API server: {message}", extra=True)
      for name, component, toleration, message in [
          ("key", "workers", {"key": "gpu pool", "operator": "Exists"}, 'key "gpu pool" is not a label key'),
          ("seconds-without-no-execute", "workers", {"key": "k", "operator": "Exists", "tolerationSeconds": 30},
           "tolerationSeconds applies to effect NoExecute only"),
          ("value-with-exists", "workers", {"key": "k", "operator": "Exists", "value": "x"},
           'value "x" with operator Exists, which matches any value'),
          ("value", "workers", {"key": "k", "value": "a b"}, 'value "a b" is not a label value')]),
    Refusal("cidr", "agg.yaml", peers("10.0.0.300/32"),
            "networkPolicy.apiServer.to[0].ipBlock.cidr=10.0.0.300/32 is not a CIDR the API server takes; allowed: an IPv4 "
            "CIDR such as 10.0.0.0/8 or an IPv6 CIDR such as fd00::/8, in canonical form"),
    *(Refusal(f"cidr-{name}", "agg.yaml", peers(cidr), f"networkPolicy.apiServer.to[0].ipBlock.cidr={cidr} is not a CIDR",
              extra=True)
      for name, cidr in [("leading-zero", "010.0.0.0/8"), ("no-prefix", "10.0.0.1"), ("prefix-33", "10.0.0.0/33"),
                         ("ipv6-upper-case", "FD00::/8"), ("ipv6-leading-zero", "fd00:0db8::/32"), ("host-name", "example.com/32")]),
    Refusal("cidr-except", "agg.yaml",
            {"networkPolicy": {"enabled": True, "apiServer": {"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]},
                               "downloadEgressTo": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8", "169.254.169.254"]}}]}},
            "networkPolicy.downloadEgressTo[0].ipBlock.except[1]=169.254.169.254 is not a CIDR", extra=True),
    Refusal("cidr-host-bits", "agg.yaml", peers("10.1.2.3/8"),
            "networkPolicy.apiServer.to[0].ipBlock.cidr=10.1.2.3/8 has bits set beyond its /8 prefix, which the API server "
            "calls ambiguous: 10.0.0.0/8 (the network) or 10.1.2.3/32 (the one address)?; allowed: the CIDR in canonical form"),
    Refusal("except-outside-cidr", "agg.yaml",
            {"networkPolicy": {"enabled": True, "apiServer": {"to": [{"ipBlock": {"cidr": "10.0.0.0/8",
                                                                                  "except": ["10.1.0.0/16", "192.168.0.0/16"]}}]}}},
            "networkPolicy.apiServer.to[0].ipBlock.except[1]=192.168.0.0/16 is not inside "
            "networkPolicy.apiServer.to[0].ipBlock.cidr=10.0.0.0/8: the API server refuses an except that is not a strict "
            "subset of its cidr; allowed: a CIDR within 10.0.0.0/8 with a longer prefix"),
    *(Refusal(f"except-{name}", "agg.yaml",
              {"networkPolicy": {"enabled": True, "apiServer": {"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": [except_]}}]}}},
              f"networkPolicy.apiServer.to[0].ipBlock.except[0]={except_} is not inside", extra=True)
      for name, except_ in [("equal-to-cidr", "10.0.0.0/8"), ("wider", "0.0.0.0/0"), ("other-family", "fd00::/16")]),
    Refusal("ingress-path-segments", "agg.yaml",
            {"ingress": {"enabled": True, "hosts": [{"host": "gpt-oss.example.com", "paths": [{"path": "/v1/../admin"}]}]}},
            "ingress.hosts[0].paths[0].path=/v1/../admin contains /../, which the API server refuses for pathType Prefix; "
            "allowed: an absolute path without //, /./, /../, %2f or a trailing /. or /.. (e.g. /v1), or pathType "
            "ImplementationSpecific"),
    Refusal("ingress-path-suffix", "agg.yaml",
            {"ingress": {"enabled": True, "hosts": [{"host": "gpt-oss.example.com",
                                                     "paths": [{"path": "/v1//x/.", "pathType": "Exact"}]}]}},
            "ingress.hosts[0].paths[0].path=/v1//x/. contains // and ends with /., which the API server refuses for pathType "
            "Exact", extra=True),
    Refusal("host-is-an-ip", "agg.yaml",
            {"ingress": {"enabled": True, "hosts": [{"host": "192.168.1.10", "paths": [{"path": "/"}]}]}},
            "ingress.hosts[0].host=192.168.1.10 is an IP address; an Ingress rule's host and an HTTPRoute hostname are DNS "
            "names"),
    Refusal("hostname-is-an-ip", "agg.yaml", {"httpRoute": {"hostnames": ["10.0.0.1"]}},
            "httpRoute.hostnames[0]=10.0.0.1 is an IP address", extra=True),
]
REFUSALS = {"passthroughs": PASSTHROUGH_REFUSALS}


@pytest.mark.parametrize("case", refusal_params(REFUSALS))
def test_should_refuse_with_a_message_naming_the_keys(case):
    assert_refused(case)


class TestIssueExamples:
    """The six passthrough examples of issue 53, each refused by tools/plan.py with one line naming the key."""

    @pytest.mark.parametrize("args,message", [
        (["--set", "networkPolicy.enabled=true", "--set-json", 'networkPolicy.apiServer.to=[{"ipBlock":{"cidr":"10.0.0.0/40"}}]'],
         "networkPolicy.apiServer.to[0].ipBlock.cidr=10.0.0.0/40 is not a CIDR"),
        (["--set", "ingress.enabled=true", "--set-json", 'ingress.hosts=[{"host":"https://GPT.example.com","paths":[{"path":"/"}]}]'],
         "at '/ingress/hosts/0/host': 'https://GPT.example.com' does not match pattern"),
        (["--set", "workers.resources.requests.memory=450Gi"],
         "workers.resources.requests.memory=450Gi is more than workers.resources.limits.memory=400Gi"),
        (["--set", "workers.resources.requests.cpu=sixteen"], "at '/workers/resources/requests/cpu'"),
        (["--set", "securityContext.pod.runAsUser=abc"], "at '/securityContext/pod/runAsUser': got string, want integer"),
        (["--set", "monitoring.podMonitor.enabled=true", "--set", "monitoring.podMonitor.scrapeTimeout=1m"],
         "monitoring.podMonitor.scrapeTimeout=1m is longer than monitoring.podMonitor.interval=15s"),
    ], ids=["cidr", "ingress-host", "requests-above-limits", "cpu-sixteen", "run-as-user-abc", "scrape-timeout"])
    def test_should_refuse_each_in_the_plan(self, args, message, capsys, monkeypatch):
        monkeypatch.chdir(REPO_ROOT)
        code = importlib.import_module("tools.gptoss.plan").main(["-f", "values/agg.yaml", *args])
        out, err = capsys.readouterr()
        assert code != 0
        assert message in out + err


# Schema refusals (values.schema.json, the Kubernetes types): Helm's message names the key.
@pytest.mark.parametrize("values,message", [
    ({"workers": {"resources": {"limits": {"memory": "-1Gi"}}}}, "at '/workers/resources/limits/memory'"),
    ({"workers": {"resources": {"requests": {"cpu": "16 cores"}}}}, "at '/workers/resources/requests/cpu'"),
    ({"securityContext": {"pod": {"runAsUser": -1}}}, "at '/securityContext/pod/runAsUser': minimum: got -1, want 0"),
    ({"securityContext": {"pod": {"fsGroup": 2147483648}}}, "at '/securityContext/pod/fsGroup': maximum"),
    ({"securityContext": {"container": {"runAsGroup": 2147483648}}}, "at '/securityContext/container/runAsGroup': maximum"),
    ({"securityContext": {"container": {"readOnlyRootFs": True}}},
     "at '/securityContext/container': additional properties 'readOnlyRootFs' not allowed"),
    ({"workers": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exist"}]}}, "at '/workers/tolerations/0/operator'"),
    ({"workers": {"tolerations": [{"key": "nvidia.com/gpu", "efect": "NoSchedule"}]}},
     "at '/workers/tolerations/0': additional properties 'efect' not allowed"),
    ({"workers": {"nodeSelector": {"pool": "a" * 64}}}, "at '/workers/nodeSelector/pool'"),
    ({"modelCache": {"download": {"affinity": {"nodeAfinity": {}}}}},
     "at '/modelCache/download/affinity': additional properties 'nodeAfinity' not allowed"),
    ({"ingress": {"hosts": [{"host": "gpt-oss.example.com:443", "paths": [{"path": "/"}]}]}}, "at '/ingress/hosts/0/host'"),
    ({"ingress": {"hosts": [{"host": "api.*.example.com", "paths": [{"path": "/"}]}]}}, "at '/ingress/hosts/0/host'"),
    ({"ingress": {"hosts": [{"host": "gpt-oss.example.com", "paths": [{"path": "v1"}]}]}}, "at '/ingress/hosts/0/paths/0/path'"),
    ({"ingress": {"tls": [{"hosts": ["GPT.example.com"], "secretName": "tls"}]}}, "at '/ingress/tls/0/hosts/0'"),
    ({"httpRoute": {"hostnames": ["http://gpt-oss.example.com"]}}, "at '/httpRoute/hostnames/0'"),
    ({"monitoring": {"podMonitor": {"labels": {"release": "kube prometheus"}}}}, "at '/monitoring/podMonitor/labels/release'"),
    ({"networkPolicy": {"clients": [{"podSelector": {"matchLabels": {"app": "a b"}}}]}},
     "at '/networkPolicy/clients/0/podSelector/matchLabels/app'"),
    ({"networkPolicy": {"clients": [{"ipblock": {"cidr": "10.0.0.0/8"}}]}},
     "at '/networkPolicy/clients/0': additional properties 'ipblock' not allowed"),
    ({"networkPolicy": {"dynamoPlatformEgress": [{"ports": [{"port": [4222]}]}]}},
     "at '/networkPolicy/dynamoPlatformEgress/0/ports/0/port'"),
    ({"frontend": {"autoscaling": {"behavior": {"scaleUp": {"stabilizationWindowSeconds": "60s"}}}}},
     "at '/frontend/autoscaling/behavior/scaleUp/stabilizationWindowSeconds': got string, want integer"),
    ({"modelCache": {"download": {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "preference": {"matchExpressions": [{"key": "pool", "operator": "NotIn", "values": ["gpu"]}]}}]}}}}},
     "at '/modelCache/download/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution/0/weight': minimum"),
    ({"modelCache": {"download": {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [{"key": "pool", "operator": "NotEquals"}]}}]}}}}},
     "at '/modelCache/download/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution/0/preference/"
     "matchExpressions/0/operator'"),
    ({"securityContext": {"pod": {"seccompProfile": {"type": "runtime/default"}}}}, "at '/securityContext/pod/seccompProfile/type'"),
    ({"frontend": {"autoscaling": {"behavior": {"scaleDown": {"selectPolicy": "Maximum"}}}}},
     "at '/frontend/autoscaling/behavior/scaleDown/selectPolicy'"),
    ({"trtllmServe": {"autoscaling": {"behavior": {"scaleUp": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 60}]}}}}},
     "at '/trtllmServe/autoscaling/behavior/scaleUp/policies/0/value': minimum"),
    ({"networkPolicy": {"dynamoPlatformEgress": [{"ports": [{"protocol": "tcp", "port": 4222}]}]}},
     "at '/networkPolicy/dynamoPlatformEgress/0/ports/0/protocol'"),
    # found by the generated group (tests/cluster/test_generated_values.py), each refused by the API server
    ({"securityContext": {"pod": {"appArmorProfile": {"type": ""}}}}, "at '/securityContext/pod/appArmorProfile/type'"),
    ({"securityContext": {"pod": {"seccompProfile": {"type": "Localhost"}}}},
     "at '/securityContext/pod/seccompProfile': missing property 'localhostProfile'"),
    ({"securityContext": {"pod": {"fsGroupChangePolicy": ""}}}, "at '/securityContext/pod/fsGroupChangePolicy'"),
    ({"securityContext": {"pod": {"windowsOptions": {"gmsaCredentialSpec": ""}}}},
     "at '/securityContext/pod': additional properties 'windowsOptions' not allowed"),
    ({"securityContext": {"pod": {"seLinuxOptions": {"role": "r"}}}},
     "at '/securityContext/pod/seLinuxOptions': additional properties 'role' not allowed"),
    ({"modelCache": {"download": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": []}}}}}},
     "at '/modelCache/download/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms': "
     "minItems"),
    ({"modelCache": {"download": {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [{"key": "pool", "operator": "In"}]}}]}}}}},
     "missing property 'values'"),
    ({"trtllmServe": {"startupTimeoutSeconds": 2147483648}}, "at '/trtllmServe/startupTimeoutSeconds': maximum"),
    ({"securityContext": {"pod": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}}},
     "at '/securityContext/pod/sysctls/0/name'"),
    ({"modelCache": {"download": {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {}, "topologyKey": "zone", "namespaces": [""]}]}}}}},
     "at '/modelCache/download/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/0/namespaces/0'"),
    ({"modelCache": {"download": {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {}, "topologyKey": "zone", "matchLabelKeys": ["app"]}]}}}}},
     "additional properties 'matchLabelKeys' not allowed"),
], ids=["negative-memory", "cpu-with-words", "run-as-user-negative", "fs-group-above-int32", "run-as-group-above-int32",
        "security-context-unknown-field", "toleration-operator", "toleration-unknown-field", "label-value-64",
        "affinity-unknown-field", "host-with-port", "wildcard-not-first", "path-without-slash", "tls-host-upper-case",
        "hostname-with-scheme", "label-value-space", "match-labels-value", "peer-unknown-field", "port-not-int-or-string",
        "behavior-window-string", "affinity-weight-0", "affinity-operator", "seccomp-type", "behavior-select-policy",
        "behavior-policy-value-0", "port-protocol-lower-case", "apparmor-type-empty", "seccomp-localhost-without-profile",
        "fs-group-change-policy-empty", "windows-options", "selinux-role", "no-node-selector-terms", "in-without-values",
        "integer-above-int32", "unsafe-sysctl", "affinity-namespace-empty", "affinity-match-label-keys"])
def test_should_refuse_what_the_kubernetes_types_refuse(values, message):
    with pytest.raises(ChartRenderError) as error:
        render_chart(["agg.yaml"], values)
    assert message in str(error.value)


class TestValidPassthroughsRender:
    """What the rules let through reaches the objects unchanged."""

    def test_should_render_valid_resources_env_and_security_context(self):
        values = {
            "workers": {"resources": {"requests": {"cpu": "500m", "memory": "10Gi", "rdma/ib": 1},
                                      "limits": {"memory": "100Gi", "cpu": 1, "rdma/ib": "1"}},
                        "env": {"my.env-name": "1", "_UNDER": "x"}},
            "frontend": {"resources": {"requests": {"cpu": 0.5, "memory": "1e9"}, "limits": {"memory": "1G"}}},
            "securityContext": {"pod": {"runAsUser": 2147483647, "runAsGroup": 0, "fsGroup": 1000, "runAsNonRoot": True,
                                        "seccompProfile": {"type": "RuntimeDefault"}}},
            "modelCache": {"download": {"tolerations": [{"key": "pool", "operator": "Equal", "value": "cpu",
                                                         "effect": "NoExecute", "tolerationSeconds": 60},
                                                        {"operator": "Exists"}]}},
        }
        objects = render_chart(["agg.yaml"], values)
        text = json.dumps(objects)
        assert '"my.env-name"' in text and '"rdma/ib"' in text and '"500m"' in text
        assert '"runAsUser": 2147483647' in text

    def test_should_render_ipv6_and_canonical_cidrs(self):
        values = {"networkPolicy": {"enabled": True, "apiServer": {"to": [
            {"ipBlock": {"cidr": "fd00::/8", "except": ["fd00:db8::/32", "::1/128"]}},
            {"ipBlock": {"cidr": "10.0.0.10/32"}}, {"ipBlock": {"cidr": "0.0.0.0/0", "except": ["169.254.0.0/16"]}},
            {"ipBlock": {"cidr": "2001:db8:0:0:0:0:0:0/32"}}]}}}
        policies = render_chart(["agg.yaml"], values, show_only=[NETWORK_POLICIES])
        assert "fd00:db8::/32" in json.dumps(policies) and "2001:db8:0:0:0:0:0:0/32" in json.dumps(policies)

    def test_should_render_wildcard_hosts(self):
        values = {"ingress": {"enabled": True, "hosts": [{"host": "*.example.com", "paths": [
                                  {"path": "/v1"}, {"path": "/a//b", "pathType": "ImplementationSpecific"}]}],
                              "tls": [{"hosts": ["*.example.com"], "secretName": "wildcard-tls"}]}}
        [ingress] = render_chart(["agg.yaml"], values, show_only=[INGRESS_TEMPLATE])
        assert ingress["spec"]["rules"][0]["host"] == "*.example.com"
        assert ingress["spec"]["tls"][0]["hosts"] == ["*.example.com"]

    def test_should_render_a_scrape_timeout_equal_to_its_interval(self):
        values = {"monitoring": {"podMonitor": {"enabled": True, "interval": "1m", "scrapeTimeout": "60s"}}}
        monitors = render_chart(["agg.yaml"], values, show_only=[POD_MONITORS])
        assert {endpoint["scrapeTimeout"] for monitor in monitors for endpoint in monitor["spec"]["podMetricsEndpoints"]} == {"60s"}


# resource.MustParse(q).MilliValue() in Kubernetes (k8s.io/apimachinery/pkg/api/resource), written out: 1Ki is 1024
# units, 1k 1000, m a thousandth, e an exponent (1P: the largest suffix whose millis fit MilliValue's int64).
KUBERNETES_MILLIS = [("500m", 500), ("1", 1000), ("1.5", 1500), (".5", 500), ("+2", 2000), ("16", 16000),
                     ("1Ki", 1024000), ("1Mi", 1048576000), ("10Gi", 10737418240000), ("1Ti", 1099511627776000),
                     ("1k", 1000000), ("100M", 100000000000), ("1G", 1000000000000), ("1e3", 1000000), ("1E3", 1000000),
                     ("2e-3", 2), ("1.5Gi", 1610612736000), ("0", 0), ("1P", 1000000000000000000)]


@pytest.fixture(scope="module")
def millis(tmp_path_factory) -> dict[str, str]:
    """gpt-oss.quantityMillis of each quantity: a chart holding only the helper renders them all at once."""
    chart = tmp_path_factory.mktemp("quantities")
    (chart / "templates").mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: quantities\nversion: 0.1.0\n")
    shutil.copy(CHART_DIR / "templates" / "validation" / "_quantities.tpl", chart / "templates")
    quantities = [q for q, _ in KUBERNETES_MILLIS] + ["sixteen", "1e1.5", "1KB", ""]
    (chart / "templates" / "out.yaml").write_text(
        "{{- range list " + " ".join(json.dumps(q) for q in quantities) + " }}\n"
        '{{ . | quote }}: {{ include "gpt-oss.quantityMillis" . | quote }}\n{{- end }}\n')
    rendered = helm_python.Chart.load(chart).render({}, name="q", namespace="q", is_install=True)
    [document] = load_yaml_all(rendered["quantities/templates/out.yaml"])
    return document


class TestQuantityMillis:
    """gpt-oss.quantityMillis reads quantities as Kubernetes does."""

    @pytest.mark.parametrize("quantity,expected", KUBERNETES_MILLIS, ids=[q for q, _ in KUBERNETES_MILLIS])
    def test_should_read_a_quantity_as_kubernetes_does(self, millis, quantity, expected):
        assert float(millis[quantity]) == expected

    @pytest.mark.parametrize("quantity", ["sixteen", "1e1.5", "1KB", ""])
    def test_should_not_read_what_kubernetes_refuses(self, millis, quantity):
        assert millis[quantity] == ""


class TestGeneratedKubernetesTypes:
    """ci/generate/kubernetes-definitions.json: from the pinned OpenAPI, in the form Helm's validator reads."""

    DEFINITIONS = SCHEMA["definitions"]

    def test_should_spell_int_or_string_and_quantities_without_openapi_extensions(self):
        assert self.DEFINITIONS["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["anyOf"] == [
            {"type": "integer"}, {"type": "string", "pattern": "^[^\\x00-\\x1f\\x7f-\\x9f]*$"}]
        quantity = self.DEFINITIONS["io.k8s.apimachinery.pkg.api.resource.Quantity"]["anyOf"]
        assert quantity[0]["pattern"].startswith("^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]")
        assert "x-kubernetes" not in json.dumps(self.DEFINITIONS) and "#/components/" not in json.dumps(self.DEFINITIONS)

    def test_should_keep_only_what_the_chart_refers_to(self):
        generated = json.loads((REPO_ROOT / "ci" / "generate" / "kubernetes-definitions.json").read_text())["definitions"]
        assert "io.k8s.api.core.v1.Pod" not in generated
        assert {"io.k8s.api.core.v1.Toleration", "io.k8s.api.networking.v1.NetworkPolicyPeer"} <= generated.keys()

    def test_should_be_up_to_date_with_the_pinned_openapi(self):
        if shutil.which("go") is None:
            pytest.skip("no go command: python -m ci.generate kubernetes-schema reads the module cache through it")
        result = subprocess.run([sys.executable, "-m", "ci.generate", "kubernetes-schema", "--check"], cwd=REPO_ROOT,
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
