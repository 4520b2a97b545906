"""The model sources that change the pods, installed for real: the API server stores them and PodSecurity
`restricted` admits every pod.

An OCI image volume (modelCache.source=oci, mount imageVolume) mounts the model image read-only in every pod and
checks it in a check-model init container; the S3 source with a workload identity runs the download Job as a
ServiceAccount the chart creates; the OCI pull mounts the imagePullSecrets and a CA bundle into the Job. Each is
installed with helm-python-sdk into a namespace that enforces `restricted`, and every pod template it stores (the
Job's, and each DGD component's podTemplate, which the operator turns into pods on the node tests' plane,
tests/cluster/test_operator.py) is created as a pod with a server-side dry run, so admission runs and nothing needs
a kubelet. The stored templates must keep the image volume (the API server drops fields it does not serve).
"""
from __future__ import annotations

import pytest

from tests.cluster import kube
from tests.cluster.test_pod_security import admission_error, as_pod, chart_pods
from tests.helpers import find

pytestmark = pytest.mark.cluster

MANIFEST = "5" * 64
DIGEST = "sha256:" + "d" * 64
REPOSITORY = "registry.example.com/models/gpt-oss-120b"
SOURCES = {
    "oci-imageVolume": {"modelCache": {"source": "oci", "manifestSha256": MANIFEST,
                                       "oci": {"repository": REPOSITORY, "digest": DIGEST}}},
    "s3-workload-identity": {"modelCache": {"source": "s3", "manifestSha256": MANIFEST, "s3": {
        "bucket": "models", "prefix": "gpt-oss-120b", "serviceAccount": {
            "create": True, "annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/model-reader"}}}}},
    "oci-pull-with-ca": {"modelCache": {"source": "oci", "manifestSha256": MANIFEST,
                                        "oci": {"repository": REPOSITORY, "digest": DIGEST, "mount": "pull"},
                                        "caBundle": {"configMap": "corp-ca"},
                                        "proxy": {"httpsProxy": "http://proxy.corp.example:3128"}},
                         "dynamo": {"imagePullSecrets": [{"name": "registry-credentials"}]}},
}


def component_pods(k8s: kube.Kube, release) -> dict[str, dict]:
    """A pod of each DGD component's podTemplate, as the API server stored the DGD (its CRD schema prunes what it
    does not know)."""
    dgd = k8s.get(find(release.manifest(), "DynamoGraphDeployment"), release.namespace)
    return {f"DynamoGraphDeployment/{dgd['metadata']['name']}/{c['name']}":
            as_pod(f"{dgd['metadata']['name']}-{c['name'].lower()}", c["podTemplate"])
            for c in dgd["spec"]["components"]}


@pytest.mark.parametrize("source", SOURCES, ids=list(SOURCES))
def test_should_admit_every_pod_of_the_source_under_restricted(release, k8s, source):
    release.install("agg.yaml", SOURCES[source])
    pods = {**chart_pods(k8s, release), **component_pods(k8s, release)}
    assert any(name.startswith("DynamoGraphDeployment/") for name in pods), pods.keys()

    refused = {name: error for name, pod in pods.items()
               if (error := admission_error(k8s, release.namespace, pod)) is not None}

    assert not refused, "pods PodSecurity `restricted` refuses:\n" + "\n".join(f"{n}: {e}" for n, e in refused.items())
    if source == "oci-imageVolume":
        assert not [name for name in pods if name.startswith("Job/")], "an image volume needs no download Job"
        for name, pod in pods.items():
            stored = k8s.core.create_namespaced_pod(release.namespace, pod, dry_run="All")
            volume = next(v for v in stored.spec.volumes if v.name == "model-cache")
            assert volume.image is not None and volume.image.reference == f"{REPOSITORY}@{DIGEST}", name
            assert [c.name for c in stored.spec.init_containers] == ["check-model"], name
    elif source == "s3-workload-identity":
        job = next(pod for name, pod in pods.items() if name.startswith("Job/"))
        assert job["spec"]["serviceAccountName"] == "gpt-oss-model-fetch"
        account = k8s.core.read_namespaced_service_account("gpt-oss-model-fetch", release.namespace)
        assert account.metadata.annotations["eks.amazonaws.com/role-arn"] == \
            "arn:aws:iam::111122223333:role/model-reader"
    else:
        job = next(pod for name, pod in pods.items() if name.startswith("Job/"))
        assert {v["name"] for v in job["spec"]["volumes"]} >= {"registry-auth-0", "ca-bundle"}
        assert find(release.manifest(), "PersistentVolumeClaim")["metadata"]["name"] == "gpt-oss-model-cache"
