"""
nui-compatible harness framework over TCP: the host listens on 127.0.0.1, writes its connection file
(`<dir>/<id>.json` with host, port, session_id, pid) and serves JSON-RPC 2.0 on every connection.

    from nui_agent import NuiAgent

    class MyAgent(NuiAgent):
        name = "my-agent"

        def run(self, message, run_id, **kwargs):
            yield f"You said: {message}"

    if __name__ == "__main__":
        MyAgent().serve()

The connection file goes to $NUI_CONNECTIONS_DIR (Brain sets it), else ~/.nui/connections (nui's place); it is
named $NUI_CONNECTION_ID (from ext:<extension>/<harness-id>), else --project-id, else the agent's name. It is
removed when the host stops. Everything else (threads, cancel, HITL) is nui_agent_stdio's NuiAgent.

The port answers every process on this machine, so the file also holds a token (Brain's addition; the file is
readable by its owner only), and a connection is served only once its first request, harness.authenticate
{token}, presented it: Brain sends it when the file names one. Anything else first is refused and the
connection closed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import signal
import socket
import sys
import threading
import uuid
import weakref
from pathlib import Path
from typing import Any, Dict

from nui_agent_stdio import ConnectionRuns, LineTooLong, dumps, parse_line, read_lines
from nui_agent_stdio import NuiAgent as _StdioAgent

# What a connection that has not authenticated yet may take of the host: a while, and a short first line.
AUTHENTICATE_WITHIN_SECONDS = 30
MAX_AUTHENTICATE_BYTES = 64 * 1024


class NuiAgent(_StdioAgent):
    def on_start(self, port: int) -> None:
        """Called once the server listens and the connection file is written."""
        _ = port

    def connection_dir(self) -> Path:
        configured = os.environ.get("NUI_CONNECTIONS_DIR", "").strip()
        return Path(configured) if configured else Path.home() / ".nui" / "connections"

    def connection_id(self) -> str:
        env = os.environ.get("NUI_CONNECTION_ID", "").strip()
        if env:
            return env
        args = sys.argv[1:]
        for i, arg in enumerate(args):
            if arg == "--project-id" and i + 1 < len(args):
                return args[i + 1]
        return self.name

    def serve(self) -> None:
        """Listens until harness.shutdown, SIGTERM or SIGINT; blocks."""
        self.harness_id = os.environ.get("NUI_HARNESS_ID", self.harness_id or self.name)
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        port = server.getsockname()[1]
        path = self.connection_dir() / f"{self.connection_id()}.json"
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._token = secrets.token_urlsafe(32)
        info = {"host": "127.0.0.1", "port": port, "session_id": str(uuid.uuid4()), "pid": os.getpid(), "token": self._token}
        tmp = path.with_suffix(".json.tmp")
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        # Created readable by its owner alone (the token is the secret of every connection), then moved in place.
        fd = os.open(str(tmp), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(json.dumps(info))
        tmp.replace(path)
        sys.stderr.write(f"[{self.name}] listening on 127.0.0.1:{port}; connection file {path}\n")
        self._server = server
        signal.signal(signal.SIGTERM, lambda *_: self._stop_server())
        signal.signal(signal.SIGINT, lambda *_: self._stop_server())
        self.on_start(port)
        # accept() wakes up every half second to see whether a shutdown was asked for on some connection.
        server.settimeout(0.5)
        try:
            while not self._shutdown_requested:
                try:
                    conn, _addr = server.accept()
                except socket.timeout:
                    continue
                except OSError:
                    break
                # Until it authenticates, a connection may be anyone's: it gets a while to do so, not for ever.
                conn.settimeout(AUTHENTICATE_WITHIN_SECONDS)
                threading.Thread(target=self._serve_connection, args=(conn,), daemon=True).start()
        finally:
            self._finish()
            server.close()
            try:
                path.unlink()
            except OSError:
                pass

    def _stop_server(self) -> None:
        self._shutdown_requested = True
        try:
            self._server.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _serve_connection(self, conn: socket.socket) -> None:
        lock = threading.Lock()

        def send(text: str) -> None:
            with lock:
                try:
                    conn.sendall(text.encode())
                except OSError:
                    pass

        authenticated = False
        # Each connection is another session's, another tenant's perhaps: its runs, cancels and questions are its own.
        runs = ConnectionRuns(send)
        with self._lock():
            self._connections.append(runs)

        def chunks():
            unauthenticated = 0
            while True:
                try:
                    data = conn.recv(65536)
                except socket.timeout:
                    sys.stderr.write(f"[{self.name}] refused a connection: no harness.authenticate within {AUTHENTICATE_WITHIN_SECONDS} s\n")
                    return
                except OSError:
                    return
                if not data:
                    return
                if not authenticated:
                    unauthenticated += len(data)
                    if unauthenticated > MAX_AUTHENTICATE_BYTES and b"\n" not in data:
                        sys.stderr.write(f"[{self.name}] refused a connection: its first line is over {MAX_AUTHENTICATE_BYTES} bytes\n")
                        return
                yield data

        try:
            # Lines as Brain reads them, each decoded once whole (a character two reads share stays whole).
            for text in read_lines(chunks()):
                if authenticated:
                    self._handle_connection_line(text, runs)
                elif text.strip(" \t\r\n"):
                    authenticated = self._authenticate(text, send)
                    if not authenticated:
                        return
                    conn.settimeout(None)
                if self._shutdown_requested:
                    self._stop_server()
                    break
        except LineTooLong as exc:
            sys.stderr.write(f"[{self.name}] {exc}: the connection is ended\n")
        finally:
            conn.close()
            self._end_runs_of(runs)
            with self._lock():
                self._connections.remove(runs)

    def _end_runs_of(self, runs: ConnectionRuns) -> None:
        """The connection is gone: its runs are cancelled, as by harness.cancel; nothing they send can arrive now,
        and a question they asked over it can never be answered (its wait would hold the run's thread for good)."""
        with self._lock():
            flags = list(runs.flags.items())
        for run_id, flag in flags:
            flag.set()
            self._release_hitl(runs, run_id)
            self._guarded("on_cancel", self.on_cancel, run_id)

    def _authenticate(self, line: str, send) -> bool:
        """A connection's first message: harness.authenticate with the file's token, or a refusal (then its end)."""
        req = parse_line(line)
        req = req if isinstance(req, dict) else {}
        method = req.get("method")
        params = req.get("params") if isinstance(req.get("params"), dict) else {}
        token = params.get("token")
        if method == "harness.authenticate" and isinstance(token, str):
            sent = hashlib.sha256(token.encode("utf8", "replace")).digest()
            if hmac.compare_digest(sent, hashlib.sha256(self._token.encode()).digest()):
                if req.get("id") is not None:
                    send(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": {"ok": True}}) + "\n")
                return True
            why = "the token is not the one in this host's connection file"
        else:
            why = f"{str(method)[:100]!r} before harness.authenticate"
        sys.stderr.write(f"[{self.name}] refused a connection: {why}\n")
        if req.get("id") is not None:
            message = (
                "this host serves a connection only once it sent harness.authenticate {token} with the token of its "
                f"connection file (refused: {why})"
            )
            send(json.dumps({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32001, "message": message}}) + "\n")
        return False

    def _handle_connection_line(self, line: str, runs: ConnectionRuns) -> None:
        # Replies and events of requests read on this connection go back on it.
        req = parse_line(line) if line.strip(" \t\r\n") else None
        if isinstance(req, dict):
            method = req.get("method", "")
            if method == "harness.run" and self._malformed(req) is None:
                run_id = (req.get("params") or {}).get("runId") or str(uuid.uuid4())
                req.setdefault("params", {})["runId"] = run_id
                with self._lock():
                    # Threads that run already there: none of them was started by the run (see _may_name).
                    runs.before[run_id] = set(threading.enumerate())
            local = self._local()
            local.conn = runs
            try:
                self._dispatch(req)
            finally:
                local.conn = None

    def _write(self, msg: Dict[str, Any]) -> None:
        # A connection's reading thread and its runs' threads write on it; a thread the agent started, on the one
        # connection running the run its message names.
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        run_id = params.get("runId")
        own = getattr(self._local(), "conn", None)
        runs = own if own is not None else self._conn_of(run_id) if isinstance(run_id, str) and run_id else None
        if runs is None or runs.writer is None:
            sys.stderr.write(f"[{self.name}] dropped a message with no connection to send it on\n")
            return
        runs.writer(dumps(msg) + "\n")

    def _run(self, rid: Any, run_id: str, params: Dict[str, Any], conn: ConnectionRuns) -> None:
        try:
            super()._run(rid, run_id, params, conn)
        finally:
            with self._lock():
                before = conn.before.pop(run_id, set())
                self._strays.update(t for t in threading.enumerate() if t not in before)

    @property
    def _strays(self) -> "weakref.WeakSet[threading.Thread]":
        """Threads started while a run worked that outlived it: whose they were, no run working now can tell."""
        return self.__dict__.setdefault("_outlived", weakref.WeakSet())

    def _may_name(self, conn: ConnectionRuns, run_id: str) -> bool:
        """This host serves many sessions, of other tenants too: a thread that outlived the run it was started in (or
        that was there before `run_id` began) is not taken for `run_id`'s, where its text or question would reach
        another session. Only a thread started while `run_id` worked, and outliving no run, is; any other names its
        run (run_id=) or is dropped."""
        thread = threading.current_thread()
        before = conn.before.get(run_id)
        return before is not None and thread not in before and thread not in self._strays


__all__ = ["NuiAgent"]
