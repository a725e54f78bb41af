"""A TCP proxy in front of Redis that freezes at a chosen command: what a process had sent up to then
reaches Redis, nothing after does (in either direction), until the process is killed.

Why: "a server dies halfway through applying a race" means a SIGKILL between two particular Redis calls.
Killing on a timer lands anywhere (usually after the work is done); watching the process's own bytes
for the command that marks the point, and holding everything after it, lands exactly there, every run.
"""

from __future__ import annotations

import socket
import threading


class FreezeProxy:
    """Listens on ``port`` and relays each connection to ``target``; once ``trigger`` is set (armed),
    the first client->server chunk that contains it is relayed, then every connection stops relaying
    (``frozen`` is set)."""

    def __init__(self, target_host: str, target_port: int, trigger: bytes | None = None,
                 cut: bool = False) -> None:
        self.target = (target_host, target_port)
        self.trigger = trigger
        self.cut = cut
        """Once frozen, hang up on the process instead of holding its connections: every connection to it is
        closed and new ones are closed at once, until :meth:`thaw` (Redis gone right after the command
        that triggered: it ran, its answer was lost, and every retry fails at once)."""
        self.frozen = threading.Event()
        self._clients: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self.cut and self.frozen.is_set():
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, upstream]
                self._clients.append(client)
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, watch: bool) -> None:
        tail = b""
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                return
            if not data:
                return
            if self.frozen.is_set():
                continue  # held: the process waits for an answer that never comes
            trigger = self.trigger
            hit = watch and trigger is not None and trigger in tail + data
            tail = (tail + data)[-64:]
            if hit:  # frozen before the command goes: its answer must not slip back first
                self.trigger = None
                self.frozen.set()
            try:
                sink.sendall(data)
            except OSError:
                return
            if hit and self.cut:
                self._hang_up()

    def _hang_up(self) -> None:
        """Close every connection to the process (their Redis side stays open: what was sent still runs)."""
        with self._lock:
            clients, self._clients = self._clients, []
        for sock in clients:
            try:
                sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            except OSError:
                pass

    def thaw(self) -> None:
        """Relay again (new connections; in cut mode the old ones are gone already)."""
        self.frozen.clear()

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                try:
                    sock.close()
                except OSError:
                    pass
