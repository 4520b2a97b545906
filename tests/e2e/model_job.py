"""The chart's model download Job and check-model init container, run on this machine exactly as rendered.

PodRun takes one container of a rendered pod and runs its command with its rendered environment. Each volume
of the pod is a folder under the run's root: the scripts ConfigMap holds the rendered scripts, Secret and
ConfigMap volumes hold the items the test provides (by object name and key, mapped through the volume's
items as the kubelet does; the chart's own ConfigMaps as rendered), and PVC, emptyDir and image volumes start empty for the test to fill. Every
environment value that names a path under a mount is rewritten to the folder; nothing else changes.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import find

# Variables of this machine that would change what the script does: not the pod's, so left out.
HOST_ONLY = ("HF_", "HUGGINGFACE", "AWS_", "SSL_CERT", "REQUESTS_CA", "CURL_CA", "HTTP_PROXY", "HTTPS_PROXY",
             "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "PIP_", "PYTHONPATH")


def download_job(objects: list[dict]) -> dict:
    jobs = [o for o in objects if o["kind"] == "Job"
            and o["metadata"]["labels"].get("app.kubernetes.io/component") == "model-download"]
    assert len(jobs) == 1, [o["metadata"]["name"] for o in objects if o["kind"] == "Job"]
    return jobs[0]


class PodRun:
    def __init__(self, root: Path, objects: list[dict], pod_spec: dict, container: dict,
                 secrets: dict[str, dict[str, bytes]] | None = None,
                 config_maps: dict[str, dict[str, bytes]] | None = None, env: dict[str, str] | None = None):
        self.root, self.container = root, container
        self.volumes: dict[str, Path] = {}
        scripts = find(objects, "ConfigMap", next(v["configMap"]["name"] for v in pod_spec["volumes"]
                                                   if v["name"] == "scripts"))["data"]
        for volume in pod_spec["volumes"]:
            folder = root / "volumes" / volume["name"]
            folder.mkdir(parents=True, exist_ok=True)
            self.volumes[volume["name"]] = folder
            if volume["name"] == "scripts":
                for name, text in scripts.items():
                    (folder / name).write_text(text)
            elif "secret" in volume or "configMap" in volume:
                kind, source = ("secret", volume["secret"]) if "secret" in volume else ("configMap", volume["configMap"])
                store = (secrets if kind == "secret" else config_maps) or {}
                data = store.get(source.get("secretName") or source.get("name"))
                if data is None and kind == "configMap":  # one of the chart's own ConfigMaps
                    own = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == source["name"]]
                    data = {k: v.encode() for k, v in own[0]["data"].items()} if own else None
                if data is None:
                    assert source.get("optional"), f"the test provides no {kind} for volume {volume['name']}"
                    continue
                for item in source.get("items") or [{"key": k, "path": k} for k in data]:
                    (folder / item["path"]).parent.mkdir(parents=True, exist_ok=True)
                    (folder / item["path"]).write_bytes(data[item["key"]])
        self.mounts = sorted(((m["mountPath"], self.volumes[m["name"]]) for m in container.get("volumeMounts", [])),
                             key=lambda mount: -len(mount[0]))
        rendered = {e["name"]: e["value"] for e in container.get("env", []) if "value" in e}
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(HOST_ONLY)}
        self.env.update({name: self.local(value) for name, value in rendered.items()})
        if any(mount_path == "/tmp" for mount_path, _ in self.mounts):
            # The pod's /tmp is its own emptyDir: two jobs at once must not share the host's (the CA bundle a job
            # writes to its temporary folder is that job's).
            self.env["TMPDIR"] = self.local("/tmp")
        self.env.update(env or {})
        command = container["command"]
        assert command[0] == "python3", command
        self.argv = [sys.executable, self.local(command[1]), *container.get("args", [])]
        self.log = root / f"{container['name']}.log"

    def local(self, value: str) -> str:
        """A path in the pod -> the folder that stands for its volume here; other values unchanged."""
        for mount_path, folder in self.mounts:
            if value == mount_path or value.startswith(mount_path.rstrip("/") + "/"):
                return str(folder / value[len(mount_path):].lstrip("/"))
        return value

    def path(self, pod_path: str) -> Path:
        local = self.local(pod_path)
        assert local != pod_path, f"{pod_path} is under no mount of {self.container['name']}"
        return Path(local)

    def start(self) -> subprocess.Popen:
        return subprocess.Popen(self.argv, env=self.env, stdout=open(self.log, "ab"), stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)

    def run(self, timeout: float = 120) -> int:
        process = self.start()
        try:
            return process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise AssertionError(f"{self.container['name']} ran longer than {timeout}s:\n{self.output()}") from None

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


def job_run(root: Path, objects: list[dict], **kwargs) -> PodRun:
    """The download Job's container, as rendered."""
    spec = download_job(objects)["spec"]["template"]["spec"]
    return PodRun(root, objects, spec, spec["containers"][0], **kwargs)
