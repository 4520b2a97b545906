"""A tiny stand-in for the Hugging Face Hub (on 127.0.0.1 unless told another address; HTTP, or HTTPS with a test
CA), enough for huggingface_hub's snapshot_download and the chart's own download script.

It answers the calls snapshot_download and model_info make (HF_ENDPOINT points here):
  GET  /api/models/<repo>/revision/<rev>[?blobs=true]   the revision's file list (sizes, blob ids, LFS sha256)
  GET  /api/models/<repo>/tree/<rev>[?recursive=true]   the same as a tree listing (newer huggingface_hub)
  HEAD /<repo>/resolve/<rev>/<file>                     X-Repo-Commit, ETag, size (X-Linked-* for LFS files)
  GET  /<repo>/resolve/<rev>/<file>                     the content, honouring `Range: bytes=N-` (resume)
  GET  /tiktoken/<name>                                 a plain file (the harmony vocabulary's stand-in)
LFS files are served at `rate` bytes per second, so a download can be interrupted midway (or held open: `hold`).
Every request is recorded (method, path, Range) so a test can see what a run asked for; `corrupt` serves one LFS file
with a flipped byte (same size), which only a hash check notices.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit


@dataclass
class RepoFile:
    path: str
    content: bytes
    lfs: bool

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()

    @property
    def blob_id(self) -> str:
        # Git's object id of the file (for an LFS file, of its pointer; a stand-in is fine here).
        return hashlib.sha1(b"blob %d\0" % len(self.content) + self.content).hexdigest()

    def sibling(self) -> dict:
        entry = {"rfilename": self.path, "size": len(self.content), "blobId": self.blob_id}
        if self.lfs:
            entry["lfs"] = {"size": len(self.content), "sha256": self.sha256, "pointerSize": 134}
        return entry

    def tree_entry(self) -> dict:
        entry = {"type": "file", "path": self.path, "size": len(self.content), "oid": self.blob_id}
        if self.lfs:
            entry["lfs"] = {"size": len(self.content), "oid": self.sha256, "pointerSize": 134}
        return entry


@dataclass
class FakeHub:
    repo_id: str
    commit: str
    files: list[RepoFile]
    extra: dict[str, bytes] = field(default_factory=dict)  # /tiktoken/<name> -> content
    rate: float = 4 * 1024 * 1024  # bytes per second for LFS content
    # Set: LFS content stops after its first chunk until the event is set (a download held open while a test starts
    # another); bounded by hold_timeout.
    hold: threading.Event | None = None
    hold_timeout: float = 60
    corrupt: str | None = None
    requests: list[dict] = field(default_factory=list)
    served: dict[str, int] = field(default_factory=dict)  # bytes of content sent, by file path

    def start(self, ssl_context=None, host: str = "127.0.0.1", port: int = 0) -> str:
        """Serve on host:port (port 0: a free one); with an ssl.SSLContext, over TLS (an https:// URL)."""
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet: the test reads hub.requests instead
                pass

            def do_HEAD(self):
                hub.handle(self, head=True)

            def do_GET(self):
                hub.handle(self, head=False)

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        if ssl_context is not None:
            self.server.socket = ssl_context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
        scheme = "https" if ssl_context is not None else "http"
        return f"{scheme}://{host}:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def file(self, path: str) -> RepoFile:
        return next(f for f in self.files if f.path == path)

    def content(self, repo_file: RepoFile) -> bytes:
        if self.corrupt == repo_file.path:
            data = bytearray(repo_file.content)
            data[len(data) // 2] ^= 0xFF
            return bytes(data)
        return repo_file.content

    def handle(self, handler: BaseHTTPRequestHandler, head: bool) -> None:
        url = urlsplit(handler.path)
        path = unquote(url.path)
        self.requests.append({"method": "HEAD" if head else "GET", "path": path, "query": url.query,
                              "range": handler.headers.get("Range")})
        api = f"/api/models/{self.repo_id}/"
        resolve = f"/{self.repo_id}/resolve/"
        if path.startswith(api + "revision/") or path.startswith(api + "tree/"):
            revision = path[len(api):].split("/", 1)[1]
            if revision not in (self.commit, "main"):
                return self.reply(handler, 404, b'{"error": "Revision Not Found"}', {"X-Error-Code": "RevisionNotFound"})
            if path.startswith(api + "tree/"):
                body = [f.tree_entry() for f in self.files]
            else:
                body = {"id": self.repo_id, "modelId": self.repo_id, "sha": self.commit, "private": False,
                        "siblings": [f.sibling() for f in self.files]}
            return self.reply(handler, 200, json.dumps(body).encode(), {"Content-Type": "application/json"})
        if path.startswith(resolve):
            revision, name = path[len(resolve):].split("/", 1)
            match = [f for f in self.files if f.path == name]
            if revision not in (self.commit, "main") or not match:
                return self.reply(handler, 404, b"", {"X-Error-Code": "EntryNotFound"})
            return self.send_file(handler, match[0], head)
        if path.startswith("/tiktoken/") and path[len("/tiktoken/"):] in self.extra:
            return self.reply(handler, 200, self.extra[path[len("/tiktoken/"):]], {})
        self.reply(handler, 404, b"", {})

    def reply(self, handler, status: int, body: bytes, headers: dict, head: bool = False) -> None:
        handler.send_response(status)
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if not head:
            handler.wfile.write(body)

    def send_file(self, handler, repo_file: RepoFile, head: bool) -> None:
        data = self.content(repo_file)
        headers = {"X-Repo-Commit": self.commit, "ETag": f'"{repo_file.blob_id}"', "Accept-Ranges": "bytes"}
        if repo_file.lfs:
            headers.update({"X-Linked-Etag": f'"{repo_file.sha256}"', "X-Linked-Size": str(len(data))})
        start = 0
        requested = handler.headers.get("Range")
        if requested and not head:
            start = int(requested.removeprefix("bytes=").split("-")[0])
        status = 206 if start else 200
        if start:
            headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        body = data[start:]
        handler.send_response(status)
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if head:
            return
        step = 256 * 1024
        try:
            for offset in range(0, len(body), step):
                handler.wfile.write(body[offset:offset + step])
                self.served[repo_file.path] = self.served.get(repo_file.path, 0) + len(body[offset:offset + step])
                if repo_file.lfs:
                    time.sleep(step / self.rate)
                    if self.hold is not None:
                        self.hold.wait(self.hold_timeout)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client was killed mid-download: what the test is about
