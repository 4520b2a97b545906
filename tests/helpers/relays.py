"""Small network middlemen on 127.0.0.1 for the tests.

TcpRelay forwards a port to a server, optionally slowing either direction (so a download can be killed midway, or
Helm's requests trickle to the API server so a fault lands between two objects) and recording what the client
sends (so a test can read the requests, e.g. a Range header). ConnectProxy is an HTTP proxy that only tunnels
(CONNECT, what clients use for https:// through a proxy), recording each target, as corporate proxies in front of
a Hub mirror do. TlsClientRelay hands a plain HTTP/2 client's connections to a TLS server it does not verify.
"""
from __future__ import annotations

import socket
import threading
import time

from tests.e2e.bridge import hang_up


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
        hang_up(sink, source)


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


class TlsClientRelay:
    """127.0.0.1:<port> -> TLS to `target` (host, port): what a gateway does towards a server whose certificate it
    does not check (the endpoint picker serves its ext-proc gRPC over TLS with a self-signed certificate that names
    no host; Envoy's cluster to it skips verification, which grpcio cannot). The client speaks plain HTTP/2 to the
    relay. One asyncio loop, on a thread of its own, moves every byte: an OpenSSL connection must not be read and
    written by two threads at once (two _pump threads on one SSLSocket corrupted records under load, "bad record
    mac", "unexpected record", and the gRPC client saw "Socket closed")."""

    def __init__(self, target: tuple[str, int], connect_timeout: float = 60):
        import asyncio
        import ssl
        self.target, self.connect_timeout = target, connect_timeout
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self.context.check_hostname = False
        self.context.verify_mode = ssl.CERT_NONE
        self.context.set_alpn_protocols(["h2"])
        self.failures: list[str] = []  # why a connection to the target ended abnormally, one line each
        self._writers: set = set()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, "127.0.0.1", 0), self.loop).result(timeout=30)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _serve(self, client_reader, client_writer) -> None:
        import asyncio
        self._writers.add(client_writer)
        try:
            server_reader, server_writer = await asyncio.wait_for(asyncio.open_connection(
                *self.target, ssl=self.context, server_hostname=""), self.connect_timeout)
        except (OSError, asyncio.TimeoutError) as error:
            self.failures.append(f"connect: {type(error).__name__}: {error}")
            client_writer.close()
            self._writers.discard(client_writer)
            return
        self._writers.add(server_writer)

        async def pipe(reader, writer, what: str) -> None:
            try:
                while data := await reader.read(64 * 1024):
                    writer.write(data)
                    await writer.drain()
            except (OSError, asyncio.IncompleteReadError) as error:
                self.failures.append(f"{what}: {type(error).__name__}: {error}")
            finally:
                writer.close()
        await asyncio.gather(pipe(client_reader, server_writer, "to the target"),
                             pipe(server_reader, client_writer, "from the target"))
        self._writers.difference_update({client_writer, server_writer})

    def close(self) -> None:
        import asyncio

        async def shut() -> None:
            self.server.close()
            for writer in list(self._writers):
                writer.close()
            pending = asyncio.all_tasks() - {asyncio.current_task()}
            if pending:
                await asyncio.wait(pending, timeout=5)
        try:
            asyncio.run_coroutine_threadsafe(shut(), self.loop).result(timeout=10)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)
            if not self.thread.is_alive():
                self.loop.close()
