"""e2e tier: modelCache.source=huggingface through a Hub mirror behind a proxy, with a private CA.

The fake Hub (tests/e2e/fake_hub.py) serves HTTPS with a certificate of a test CA made here with
`cryptography`; the download Job's command, as rendered (tests/e2e/model_job.py), reaches it as
modelCache.huggingface.endpoint only through an HTTP CONNECT proxy on 127.0.0.1 (modelCache.proxy), trusting
the CA from the ConfigMap modelCache.caBundle names, with the manifest sha256 a mirror needs (issue 36) from
tools/mirror-model.py. Without the CA the Job is refused, naming the values to
set. tools/mirror-model.py through the same mirror writes a copy whose manifest sha256 the Job reproduces
byte for byte, so modelCache.manifestSha256 pins a Hub download too; another pin is refused.
"""
from __future__ import annotations

import datetime
import hashlib
import ipaddress
import json
import os
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.fake_hub import FakeHub, RepoFile
from tests.e2e.model_job import job_run
from tests.helpers.relays import ConnectProxy
from tests.helpers import REPO_ROOT, render_chart

pytestmark = pytest.mark.e2e

MODEL = "openai/gpt-oss-120b"
REVISION = "b5c939de8f754692c1647ca79fbf85e8c1e70f8a"
VOCABULARY = b"mirrored harmony vocabulary\n"
CA_CONFIGMAP = "corp-ca"
RUN_TIMEOUT = 120


def make_test_ca(folder: Path, address: str = "127.0.0.1") -> tuple[Path, ssl.SSLContext]:
    """A CA, and a server certificate it signs for the IP `address`: (the CA's PEM file, the server's TLS context)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gpt-oss test corporate CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    server = (x509.CertificateBuilder()
              .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hf-mirror.test")]))
              .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
              .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(address))]),
                             critical=False)
              .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
              .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
              .sign(ca_key, hashes.SHA256()))
    ca_file, cert_file, key_file = folder / "ca.crt", folder / "server.crt", folder / "server.key"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(server.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return ca_file, context


@pytest.fixture
def mirror(tmp_path):
    pytest.importorskip("cryptography", reason="the test CA needs cryptography (requirements-test.txt installs it)")
    ca_file, context = make_test_ca(tmp_path)
    files = [RepoFile("config.json", b'{"model_type": "gpt_oss"}\n', lfs=False),
             RepoFile("model-00000-of-00001.safetensors", hashlib.sha256(b"w").digest() * 65536, lfs=True),
             RepoFile("original/model.safetensors", b"skipped copy", lfs=True)]
    hub = FakeHub(MODEL, REVISION, files, extra={"o200k_base.tiktoken": VOCABULARY}, rate=64 * 1024 * 1024)
    url = hub.start(ssl_context=context)
    proxy = ConnectProxy()
    yield {"hub": hub, "url": url, "proxy": proxy, "ca": ca_file}
    proxy.close()
    hub.stop()


def mirror_values(mirror: dict, ca: bool = True, manifest_sha256: str = "") -> dict:
    cache = {"huggingface": {"endpoint": mirror["url"]},
             "proxy": {"httpsProxy": f"http://127.0.0.1:{mirror['proxy'].port}"},
             "manifestSha256": manifest_sha256}
    if ca:
        cache["caBundle"] = {"configMap": CA_CONFIGMAP}
    return {"model": {"tiktoken": {"url": f"{mirror['url']}/tiktoken/o200k_base.tiktoken",
                                   "sha256": hashlib.sha256(VOCABULARY).hexdigest()}},
            "modelCache": cache}


def pin_by_mirroring(mirror: dict, copy: Path) -> str:
    """What a user does before pointing the chart at a mirror (issue 36: a mirror needs a pin): tools/mirror-model.py
    through the mirror writes a copy and prints the manifest's sha256."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy", "https_proxy", "http_proxy")}
    env["HTTPS_PROXY"] = f"http://127.0.0.1:{mirror['proxy'].port}"
    mirrored = subprocess.run(
        [sys.executable, str(REPO_ROOT / "tools" / "mirror-model.py"), "--endpoint", mirror["url"],
         "--ca-bundle", str(mirror["ca"]), "--tiktoken", f"{mirror['url']}/tiktoken/o200k_base.tiktoken",
         "--tiktoken-sha256", hashlib.sha256(VOCABULARY).hexdigest(), "--json", str(copy)],
        capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env)
    assert mirrored.returncode == 0, mirrored.stderr
    return json.loads(mirrored.stdout)["manifestSha256"]


def run_job(mirror: dict, root: Path, values: dict):
    return job_run(root, render_chart(["agg.yaml"], values),
                   config_maps={CA_CONFIGMAP: {"ca.crt": mirror["ca"].read_bytes()}})


class TestHubMirror:
    def test_should_download_through_the_proxy_trusting_the_ca(self, mirror, tmp_path):
        pinned = pin_by_mirroring(mirror, tmp_path / "copy")
        mirror["proxy"].targets.clear()
        job = run_job(mirror, tmp_path, mirror_values(mirror, manifest_sha256=pinned))
        assert job.env["HTTPS_PROXY"] == f"http://127.0.0.1:{mirror['proxy'].port}"

        assert job.run(RUN_TIMEOUT) == 0, job.output()

        hub_address = mirror["url"].removeprefix("https://")
        assert hub_address in mirror["proxy"].targets, "the Job did not go through the proxy"
        assert set(mirror["proxy"].targets) == {hub_address}
        model_dir = Path(job.env["MODEL_DIR"])
        assert (model_dir / "model-00000-of-00001.safetensors").read_bytes() == \
            mirror["hub"].file("model-00000-of-00001.safetensors").content
        assert (model_dir / "tiktoken" / "o200k_base.tiktoken").read_bytes() == VOCABULARY
        assert not (model_dir / "original").exists()
        assert Path(job.env["MARKER"]).exists()
        assert "trusting the CA bundle" in job.output()

    def test_should_refuse_the_mirror_without_its_ca(self, mirror, tmp_path):
        job = run_job(mirror, tmp_path, mirror_values(mirror, ca=False, manifest_sha256="e" * 64))

        assert job.run(RUN_TIMEOUT) != 0
        assert f"cannot reach {mirror['url']}" in job.output() and "CERTIFICATE_VERIFY_FAILED" in job.output(), \
            job.output()
        assert "modelCache.caBundle" in job.output()
        assert not Path(job.env["MARKER"]).exists()

    def test_should_pin_the_manifest_of_a_hub_download(self, mirror, tmp_path):
        copy = tmp_path / "copy"
        pinned = pin_by_mirroring(mirror, copy)

        job = run_job(mirror, tmp_path / "job", mirror_values(mirror, manifest_sha256=pinned))
        assert job.run(RUN_TIMEOUT) == 0, job.output()

        written = (Path(job.env["MODEL_DIR"]) / "model-manifest.json").read_bytes()
        assert written == (copy / "model-manifest.json").read_bytes()
        assert hashlib.sha256(written).hexdigest() == pinned

        refused = run_job(mirror, tmp_path / "other-pin", mirror_values(mirror, manifest_sha256="e" * 64))
        assert refused.run(RUN_TIMEOUT) != 0
        assert f"but modelCache.manifestSha256 pins {'e' * 64}" in refused.output(), refused.output()
        assert not Path(refused.env["MARKER"]).exists()
