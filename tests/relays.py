"""Small network middlemen on 127.0.0.1 for the tests.

TcpRelay forwards a port to a server, optionally slowing either direction (so a download can be killed midway, or
Helm's requests trickle to the API server so a fault lands between two objects) and recording what the client
sends (so a test can read the requests, e.g. a Range header). ConnectProxy is an HTTP proxy that only tunnels
(CONNECT, what clients use for https:// through a proxy), recording each target, as corporate proxies in front of
a Hub mirror do.
"""
from __future__ import annotations

import socket
import threading
import time


def _pump(source: socket.socket, sink: socket.socket, rate: float | None, record: bytearray | None,
          lock: threading.Lock) -> None:
    step = 1024 if rate else 64 * 1024  # small steps keep a slow direction smooth
    try:
        while True:
            data = source.recv(step)
            if not data:
                break
            if record is not None:
                with lock:
                    record.extend(data)
            sink.sendall(data)
            if rate:
                time.sleep(len(data) / rate)
    except OSError:
        pass
    finally:
        for end in (sink, source):
            try:
                end.shutdown(socket.SHUT_RDWR)
                end.close()
            except OSError:
                pass


class _Listener:
    """A socket on a free port of `host` (127.0.0.1); each client is handed to `serve` in its own thread until
    `close`."""

    def __init__(self, host: str = "127.0.0.1"):
        self.listener = socket.create_server((host, 0))
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(client,), daemon=True).start()

    def serve(self, client: socket.socket) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.listener.close()


class TcpRelay(_Listener):
    """<listen>:<port> -> 127.0.0.1:target_port; `rate` bytes per second from the target, `upload_rate` towards it
    (None: full speed). `listen` is 127.0.0.1 unless a client in another network namespace needs the relay."""

    def __init__(self, target_port: int, rate: float | None = None, upload_rate: float | None = None,
                 listen: str = "127.0.0.1"):
        self.target_port, self.rate, self.upload_rate = target_port, rate, upload_rate
        self.sent = bytearray()  # everything clients sent, in order
        super().__init__(listen)

    def serve(self, client: socket.socket) -> None:
        try:
            server = socket.create_connection(("127.0.0.1", self.target_port))
        except OSError:  # the target is down (a fault test killed it): this client sees a closed connection
            client.close()
            return
        threading.Thread(target=_pump, args=(client, server, self.upload_rate, self.sent, self.lock),
                         daemon=True).start()
        _pump(server, client, self.rate, None, self.lock)

    def requests_text(self) -> str:
        with self.lock:
            return self.sent.decode("latin-1")


class ConnectProxy(_Listener):
    """An HTTP CONNECT proxy on 127.0.0.1; `targets` lists the host:port of every tunnel it opened."""

    def __init__(self):
        self.targets: list[str] = []
        super().__init__()

    def serve(self, client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(4096)
            if not chunk:
                client.close()
                return
            head += chunk
        method, target = head.split(b"\r\n", 1)[0].decode().split(" ")[:2]
        if method != "CONNECT":
            client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            client.close()
            return
        host, port = target.rsplit(":", 1)
        try:
            server = socket.create_connection((host, int(port)))
        except OSError:
            client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            client.close()
            return
        self.targets.append(target)
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        threading.Thread(target=_pump, args=(client, server, None, None, self.lock), daemon=True).start()
        _pump(server, client, None, None, self.lock)


class TlsClientRelay(_Listener):
    """127.0.0.1:<port> -> TLS to `target` (host, port): what a gateway does towards a server whose certificate it
    does not check (the endpoint picker serves its ext-proc gRPC over TLS with a self-signed certificate that names
    no host; Envoy's cluster to it skips verification). The client speaks plain HTTP/2 to the relay."""

    def __init__(self, target: tuple[str, int]):
        import ssl
        self.target = target
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self.context.check_hostname = False
        self.context.verify_mode = ssl.CERT_NONE
        self.context.set_alpn_protocols(["h2"])
        super().__init__()

    def serve(self, client: socket.socket) -> None:
        try:
            server = self.context.wrap_socket(socket.create_connection(self.target, timeout=60))
            server.settimeout(None)
        except OSError:
            client.close()
            return
        threading.Thread(target=_pump, args=(client, server, None, None, self.lock), daemon=True).start()
        _pump(server, client, None, None, self.lock)

