"""Hostile servers on 127.0.0.1 for the attack tests of the model copy (tests/chart/model_cache/test_model_copy_attacks.py, offline,
and tests/e2e/test_model_copy_attacks.py): what a hostile mirror, registry or network can answer.

HostileHub is tests/e2e/fake_hub.py's FakeHub with knobs: a patched listing, extra files in the /tree/ listing
only (what huggingface_hub's snapshot_download follows), endless bodies without Content-Length, redirects, and
the Authorization header of every request recorded. FakeRegistry serves one OCI image (index, manifest, layers)
by digest, optionally behind a Bearer challenge whose token service is wherever the test says.
"""
from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

from tests.e2e.fake_hub import FakeHub, RepoFile

MiB = 1024 * 1024


def send_endless(handler: BaseHTTPRequestHandler, limit: int, status: int = 200) -> None:
    """A body without Content-Length that ends only when the client hangs up (or after `limit` bytes)."""
    handler.send_response(status)
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.close_connection = True
    block, sent = b"A" * (1024 * 1024), 0
    try:
        while sent < limit:
            handler.wfile.write(block)
            sent += len(block)
    except (BrokenPipeError, ConnectionResetError):
        pass


@dataclass
class HostileHub(FakeHub):
    listing_patch: object = None  # callable(body dict) -> body dict, for /api/models/<repo>/revision/<rev>
    tree_extra: dict = field(default_factory=dict)  # path -> bytes: in the /tree/ listing and served, not in siblings
    endless: dict = field(default_factory=dict)  # URL path -> bytes sent without Content-Length before giving up
    redirects: dict = field(default_factory=dict)  # URL path -> Location (302)
    authorizations: list = field(default_factory=list)  # (path, Authorization header or None) of every request

    def handle(self, handler: BaseHTTPRequestHandler, head: bool) -> None:
        path = unquote(urlsplit(handler.path).path)
        self.authorizations.append((path, handler.headers.get("Authorization")))
        if path in self.redirects:
            self.requests.append({"method": "GET", "path": path, "query": "", "range": handler.headers.get("Range")})
            return self.reply(handler, 302, b"", {"Location": self.redirects[path]})
        if path in self.endless and not head:
            self.requests.append({"method": "GET", "path": path, "query": "", "range": handler.headers.get("Range")})
            return send_endless(handler, self.endless[path])
        api = f"/api/models/{self.repo_id}/"
        if path.startswith(api + "revision/") and self.listing_patch is not None:
            body = {"id": self.repo_id, "modelId": self.repo_id, "sha": self.commit, "private": False,
                    "siblings": [f.sibling() for f in self.files]}
            self.requests.append({"method": "GET", "path": path, "query": "", "range": None})
            return self.reply(handler, 200, json.dumps(self.listing_patch(body)).encode(),
                              {"Content-Type": "application/json"})
        if path.startswith(api + "tree/") and self.tree_extra:
            extra = [RepoFile(name, data, lfs=False) for name, data in self.tree_extra.items()]
            body = [f.tree_entry() for f in self.files + extra]
            self.requests.append({"method": "GET", "path": path, "query": "", "range": None})
            return self.reply(handler, 200, json.dumps(body).encode(), {"Content-Type": "application/json"})
        resolve = f"/{self.repo_id}/resolve/"
        if path.startswith(resolve) and self.tree_extra:
            name = path[len(resolve):].split("/", 1)[1]
            if name in self.tree_extra:
                self.requests.append({"method": "HEAD" if head else "GET", "path": path, "query": "", "range": None})
                return self.send_file(handler, RepoFile(name, self.tree_extra[name], lfs=False), head)
        return super().handle(handler, head)


def layer_tar(files: dict[str, bytes]) -> bytes:
    """An uncompressed image layer holding `files` (regular files)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class FakeRegistry:
    """One repository's image (a manifest over `layers`), served by digest on 127.0.0.1 over plain HTTP.

    challenge: a WWW-Authenticate value answered with 401 to every request without the token; token_hits records
    the requests the token service (this server, at /token) received with their Authorization header.
    manifest_body: bytes served for the manifest instead of the real one (e.g. an oversized one).
    """

    def __init__(self, repository: str, layers: list[bytes], challenge: str | None = None,
                 manifest_body: bytes | None = None):
        self.repository, self.challenge = repository, challenge
        self.blobs = {digest_of(layer): layer for layer in layers}
        config = b"{}"
        self.blobs[digest_of(config)] = config
        manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digest_of(config),
                               "size": len(config)},
                    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": digest_of(layer),
                                "size": len(layer)} for layer in layers]}
        self.manifest = manifest_body if manifest_body is not None else json.dumps(manifest).encode()
        self.digest = digest_of(self.manifest)
        self.token_hits: list[str | None] = []
        self.authorizations: list[tuple[str, str | None]] = []

    def start(self) -> str:
        registry = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                registry.handle(self, head=False)

            def do_HEAD(self):
                registry.handle(self, head=True)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        return self.host

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def reply(self, handler, status: int, body: bytes, headers: dict | None = None, head: bool = False) -> None:
        handler.send_response(status)
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if not head:
            handler.wfile.write(body)

    def handle(self, handler: BaseHTTPRequestHandler, head: bool) -> None:
        path = urlsplit(handler.path).path
        authorization = handler.headers.get("Authorization")
        self.authorizations.append((path, authorization))
        if path == "/token":
            self.token_hits.append(authorization)
            return self.reply(handler, 200, b'{"token": "issued"}', {"Content-Type": "application/json"})
        if self.challenge and authorization != "Bearer issued":
            return self.reply(handler, 401, b"{}", {"WWW-Authenticate": self.challenge})
        base = f"/v2/{self.repository}/"
        if path == base + f"manifests/{self.digest}":
            return self.reply(handler, 200, self.manifest,
                              {"Content-Type": "application/vnd.oci.image.manifest.v1+json"}, head)
        if path.startswith(base + "blobs/") and path[len(base + "blobs/"):] in self.blobs:
            return self.reply(handler, 200, self.blobs[path[len(base + "blobs/"):]], {}, head)
        return self.reply(handler, 404, b'{"errors": [{"code": "MANIFEST_UNKNOWN"}]}', {}, head)


class TokenService:
    """A token service on its own port (another origin than the registry's): records who sent it what."""

    def __init__(self):
        self.hits: list[str | None] = []

    def start(self) -> str:
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                service.hits.append(self.headers.get("Authorization"))
                body = b'{"token": "issued"}'
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/token"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
