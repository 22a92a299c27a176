"""
nui-compatible harness framework: JSON-RPC 2.0 over stdin/stdout, for extension harnesses.

Write the agent once; it runs under nui and under Brain unchanged:

    from nui_agent_stdio import NuiAgent

    class EchoAgent(NuiAgent):
        name = "echo"
        version = "0.1.0"

        def run(self, message: str, run_id: str, **kwargs):
            yield f"You said: {message}"              # a str is a "text" event
            yield {"type": "image", "mimeType": "image/png", "data": "..."}   # a dict is sent as it is

    if __name__ == "__main__":
        EchoAgent().serve_stdio()

Protocol (docs/protocol.md in Brain): requests harness.info, harness.run {message, runId, sessionId?, workingDir?, systemPrompt?,
model?, harnessId?}, harness.cancel {runId}, harness.shutdown; harness.event notifications
{runId, type: text|tool_call|tool_result|hitl_request|image|error|done, ...}.

What this framework does beyond nui's own:
- run() works in its own thread, so harness.cancel is read and handled while run() is working: on_cancel()
  is called at once, cancelled(run_id) is set, and the run stops at its next yield.
- print() inside an agent goes to stderr, as does what its child processes write to stdout: stdout carries only
  protocol lines.
- ask_user() and request_approval() use nui's REST API when NUI_API_URL is set (as nui does); without it they
  ask over the protocol (a hitl_request event, answered by a harness.hitl_response notification).
- emit(event) sends an event from anywhere in a run (a callback, another thread).
"""

from __future__ import annotations

import os
import sys
import threading
import uuid
from collections import OrderedDict
from typing import Any, Callable, Dict, Generator, Iterable, List, Optional, Set, Union

from nui_agent_hitl import HitlMixin

# The wire's helpers, importable from here as before they had a module of their own.
from nui_wire import (  # noqa: F401
    MAX_EVENT_BYTES,
    MAX_LINE_BYTES,
    MAX_TEXT_UNITS,
    LineTooLong,
    _fitted,
    dumps,
    failure,
    parse_line,
    protocol_stdout,
    read_lines,
    text_pieces,
)

Chunk = Union[str, Dict[str, Any]]

# Cancels for runs a connection is not running are kept (a run may arrive after its cancel), but only the latest so
# many: a host told to cancel many runs it never sees would otherwise grow without bound.
MAX_EARLY_CANCELS = 1000


class ConnectionRuns:
    """The runs of one connection (a stdio host has one; nui_agent's TCP host one per connection, each another
    session's, another tenant's perhaps): their cancel flags, threads and questions, and the cancels that came before
    their run. A run id from a connection is looked up among that connection's runs only, as the TypeScript SDK's
    host does: another connection's run of the same id is not this one's to cancel, answer or write into."""

    def __init__(self, writer: Optional[Callable[[str], Any]] = None) -> None:
        self.writer = writer  # where its replies and events go (None: the host's own stdout)
        self.flags: Dict[str, threading.Event] = {}
        self.early: "OrderedDict[str, None]" = OrderedDict()
        self.threads: Dict[str, threading.Thread] = {}
        self.waiters: Dict[str, Dict[str, Any]] = {}
        self.before: Dict[str, Set[threading.Thread]] = {}  # the threads there as each run began (TCP host)


class NuiAgent(HitlMixin):
    name: str = "nui-agent"
    version: str = "0.1.0"
    harness_id: str = ""
    capabilities = ["run", "cancel", "shutdown"]

    # ── Override these ───────────────────────────────────────────────────────

    def run(self, message: str, run_id: str, **kwargs) -> Iterable[Chunk]:
        """Yield text chunks (str) or raw events (dict). kwargs: sessionId, workingDir, systemPrompt, model, harnessId."""
        raise NotImplementedError("override run()")

    def on_cancel(self, run_id: str) -> None:
        """Called as soon as harness.cancel for a run under way arrives (from the reading thread, while run() works)."""
        _ = run_id

    def on_shutdown(self) -> None:
        """Called before the host exits."""

    def get_session_id(self, run_id: str) -> str:
        """The agent's own session id, sent in the done event; nui (and Brain) send it back with the next run."""
        _ = run_id
        return ""

    # ── Helpers for run() ────────────────────────────────────────────────────

    def cancelled(self, run_id: Optional[str] = None) -> threading.Event:
        """The run's cancel flag: `.is_set()` to poll, `.wait(timeout)` to sleep until cancelled."""
        rid = run_id or self.current_run_id() or ""
        conn = self._conn_of(rid)
        with self._lock():
            flag = conn.flags.get(rid) if conn is not None else None
            if flag is None:  # not a run of this host's (or one that has ended): a flag of its own, not kept
                flag = threading.Event()
                if conn is not None and rid in conn.early:
                    flag.set()
            return flag

    def current_run_id(self) -> str:
        """The run the calling thread works for; from a thread the agent started, the one run working ("" if none
        or several). Brain drops an event that names no running run, and a question it drops is never answered."""
        rid = getattr(self._local(), "run_id", "")
        if rid:
            return rid
        own = getattr(self._local(), "conn", None)
        with self._lock():
            conns = [own] if own is not None else list(self._connections)
            running = [(conn, run_id) for conn in conns for run_id in conn.flags]
            return running[0][1] if len(running) == 1 and self._may_name(*running[0]) else ""

    def _may_name(self, conn: ConnectionRuns, run_id: str) -> bool:
        """Whether the calling thread, which has no run of its own, may be taken for `run_id`'s, the one run working.
        A host of one session: yes (its runs are that session's). nui_agent's TCP host, which serves many: see there."""
        _ = conn, run_id
        return True

    def emit(self, event: Dict[str, Any], run_id: Optional[str] = None) -> None:
        """Sends one harness.event for the run (the current one by default)."""
        rid = run_id or self.current_run_id()
        content = event.get("content")
        pieces = text_pieces(content) if event.get("type") == "text" and isinstance(content, str) else []
        if len(pieces) > 1:
            for piece in pieces:
                self.emit({**event, "content": piece}, rid)
            return
        self._write({"jsonrpc": "2.0", "method": "harness.event", "params": {"runId": rid, **_fitted(event)}})

    # ── Serving ──────────────────────────────────────────────────────────────

    def serve_stdio(self) -> None:
        """Reads requests from stdin until it closes or harness.shutdown; blocks."""
        self.harness_id = os.environ.get("NUI_HARNESS_ID", self.harness_id or self.name)
        out = protocol_stdout()
        sys.stdout = sys.stderr  # print() in an agent must never corrupt the protocol
        self._writer = lambda text: (out.write(text), out.flush())
        # Bytes as they come (sys.stdin would decode them with the locale's encoding; frames are UTF-8).
        self._serve_chunks(iter(lambda: sys.stdin.buffer.read1(65536), b""))
        self._finish()

    def _serve_chunks(self, chunks: Iterable[bytes]) -> None:
        """Handles each line of the stream until it ends, harness.shutdown, or a line over the cap."""
        try:
            for line in read_lines(chunks):
                self._handle_line(line)
                if self._shutdown_requested:
                    return
        except LineTooLong as exc:
            sys.stderr.write(f"[{self.name}] {exc}: the connection is ended\n")

    # ── Internals ────────────────────────────────────────────────────────────

    _shutdown_requested = False
    _writer: Optional[Callable[[str], Any]] = None

    def _lock(self) -> threading.RLock:
        lock = self.__dict__.get("_rlock")
        if lock is None:
            lock = self.__dict__.setdefault("_rlock", threading.RLock())
        return lock

    @property
    def _connections(self) -> List[ConnectionRuns]:
        """The connections being served: the stdio stream, or a TCP host's open connections."""
        return self.__dict__.setdefault("_conns", [])

    @property
    def _stream(self) -> ConnectionRuns:
        """The runs of the one stream a stdio host serves (and of a message dispatched from no connection's thread)."""
        with self._lock():
            stream = self.__dict__.get("_stream_runs")
            if stream is None:
                stream = self.__dict__["_stream_runs"] = ConnectionRuns()
                self._connections.append(stream)
            return stream

    def _here(self) -> ConnectionRuns:
        """The connection whose message the calling thread handles (a TCP host's reading thread), else the stream."""
        return getattr(self._local(), "conn", None) or self._stream

    def _conn_of(self, run_id: str) -> Optional[ConnectionRuns]:
        """Whose run `run_id` is for the calling thread: a run's or a connection's thread looks among its own
        connection's runs only; a thread the agent started, in the one connection running that id. When several do
        (a client reused a running id), the one whose run this thread may be taken for (see _may_name); else None:
        its output is not guessed into another session."""
        own = getattr(self._local(), "conn", None)
        if own is not None:
            return own
        with self._lock():
            running = [conn for conn in self._connections if run_id in conn.flags]
            if len(running) > 1:
                running = [conn for conn in running if self._may_name(conn, run_id)]
        return running[0] if len(running) == 1 else None

    def _local(self) -> threading.local:
        return self.__dict__.setdefault("_thread_local", threading.local())

    def _write_lock(self) -> threading.Lock:
        lock = self.__dict__.get("_wlock")
        if lock is None:
            lock = self.__dict__.setdefault("_wlock", threading.Lock())
        return lock

    def _write(self, msg: Dict[str, Any]) -> None:
        text = dumps(msg) + "\n"
        # A lock of its own, never _lock(): a write blocks for as long as Brain does not read (its read gate holds a
        # session's output while the log is behind), and meanwhile a cancel must still set its flag and call
        # on_cancel. Held across write and flush, so lines never interleave; each writer holds only its own line.
        with self._write_lock():
            if self._writer is not None:
                self._writer(text)
            else:
                sys.stdout.write(text)
                sys.stdout.flush()

    def _handle_line(self, line: str) -> None:
        if not line.strip(" \t\r\n"):
            return
        req = parse_line(line)
        if req is None:
            sys.stderr.write(f"[{self.name}] ignored a line that is not JSON\n")
            return
        if isinstance(req, dict):
            self._dispatch(req)

    def _malformed(self, req: Dict[str, Any]) -> Optional[str]:
        """What makes a message unusable (params not an object, a runId or requestId not a string), or None."""
        params = req.get("params")
        if params is not None and not isinstance(params, dict):
            return f"params of {req.get('method')!r} must be an object, not {type(params).__name__}"
        for field in ("runId", "requestId"):
            value = (params or {}).get(field)
            if value is not None and not isinstance(value, str):
                return f"params.{field} of {req.get('method')!r} must be a string, not {type(value).__name__}"
        return None

    def _dispatch(self, req: Dict[str, Any]) -> None:
        """Handles one message; harness.run starts a thread and returns at once."""
        method = req.get("method", "")
        rid = req.get("id")
        # A malformed request is answered with an error (the caller would wait for a reply), never the host's end.
        malformed = self._malformed(req)
        if malformed is not None:
            sys.stderr.write(f"[{self.name}] ignored a request: {malformed}\n")
            if rid is not None:
                self._write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": malformed}})
            return
        params = req.get("params") or {}
        conn = self._here()

        if method == "harness.info":
            self._write({
                "jsonrpc": "2.0",
                "id": rid,
                "result": {
                    "id": self.harness_id or self.name,
                    "name": self.name,
                    "version": self.version,
                    "capabilities": list(self.capabilities),
                },
            })
        elif method == "harness.run":
            run_id = params.get("runId") or str(uuid.uuid4())
            thread = threading.Thread(target=self._run, args=(rid, run_id, params, conn), daemon=True)
            # Flag and thread are noted before it starts: so a cancel read meanwhile is kept, and a run that ends at
            # once forgets them both (noted after, they would be kept for good).
            with self._lock():
                flag = conn.flags.setdefault(run_id, threading.Event())
                if run_id in conn.early:
                    del conn.early[run_id]
                    flag.set()
                conn.threads[run_id] = thread
            thread.start()
        elif method == "harness.cancel":
            run_id = params.get("runId", "")
            with self._lock():
                flag = conn.flags.get(run_id)
                if flag is None:
                    conn.early[run_id] = None
                    conn.early.move_to_end(run_id)
                    while len(conn.early) > MAX_EARLY_CANCELS:
                        conn.early.popitem(last=False)
            if flag is not None:
                flag.set()
            self._release_hitl(conn, run_id)
            # on_cancel knows a run by its id alone: only this connection's run under way is its to stop. Another
            # connection's of the same id (nui_agent's TCP host serves other sessions' too) is not; nor is work that
            # has not begun (the run starts cancelled) or that has ended.
            if flag is not None:
                self._guarded("on_cancel", self.on_cancel, run_id)
            self._write({"jsonrpc": "2.0", "id": rid, "result": {"ok": True}})
        elif method == "harness.shutdown":
            self._guarded("on_shutdown", self.on_shutdown)
            self._write({"jsonrpc": "2.0", "id": rid, "result": {"ok": True}})
            self._shutdown_requested = True
        elif method == "harness.hitl_response":
            self._answer_hitl(conn, params)
        elif rid is not None:
            self._write({
                "jsonrpc": "2.0",
                "id": rid,
                "error": {"code": -32601, "message": f"method not found: {method}"},
            })

    def _run(self, rid: Any, run_id: str, params: Dict[str, Any], conn: ConnectionRuns) -> None:
        local = self._local()
        local.run_id = run_id
        local.conn = conn
        message = params.get("message", "")
        extra = {k: v for k, v in params.items() if k not in ("message", "runId")}
        flag = self.cancelled(run_id)
        try:
            result = self.run(message, run_id, **extra)
            for chunk in result or ():
                if flag.is_set():  # cancelled: what the run yields from now on is not sent
                    close = getattr(result, "close", None)
                    if close:
                        close()
                    break
                if isinstance(chunk, dict):
                    self.emit(chunk, run_id)
                elif chunk:
                    self.emit({"type": "text", "content": str(chunk)}, run_id)
        except SystemExit as exc:
            # In this thread sys.exit() would end the thread alone, silently: the run would send neither done nor
            # its reply, and the client would wait for it for good. It fails the run instead, saying so.
            self.emit({"type": "error", "error": f"run() called sys.exit({exc.code!r})"}, run_id)
        except BaseException as exc:  # the agent's failure is an event, never a dead host or a run left unanswered
            # BaseException, not Exception: asyncio's CancelledError (an agent on asyncio whose task was cancelled)
            # is none, and escaping this thread it ended it as sys.exit() did. No KeyboardInterrupt reaches it.
            self.emit({"type": "error", "error": failure(exc)}, run_id)
        finally:
            local.run_id = ""
        done: Dict[str, Any] = {"type": "done"}
        # The run must end (done, then the reply) whatever the agent's hooks do, or Brain waits for it forever.
        session_id = self._guarded("get_session_id", self.get_session_id, run_id)
        if session_id:
            done["sessionId"] = session_id
        self.emit(done, run_id)
        reply: Dict[str, Any] = {"runId": run_id}
        if flag.is_set():
            reply["cancelled"] = True
        self._write({"jsonrpc": "2.0", "id": rid, "result": reply})
        local.conn = None
        with self._lock():
            conn.flags.pop(run_id, None)
            conn.threads.pop(run_id, None)

    def _guarded(self, hook: str, fn: Callable[..., Any], *args: Any) -> Any:
        """Calls one of the agent's hooks; what it raises is reported on stderr, never the end of the host or a run."""
        try:
            return fn(*args)
        except BaseException as exc:  # sys.exit() or asyncio's CancelledError in a run's thread: a run unfinished
            if isinstance(exc, KeyboardInterrupt):  # the reading thread's Ctrl-C is the person's, not the hook's
                raise
            sys.stderr.write(f"[{self.name}] {hook} raised {exc.__class__.__name__}: {exc}\n")
            return None

    def _finish(self) -> None:
        with self._lock():
            conns = list(self._connections)
        for conn in conns:
            for flag in list(conn.flags.values()):
                flag.set()
            for waiter in list(conn.waiters.values()):
                waiter["event"].set()
        if not self._shutdown_requested:
            try:
                self.on_shutdown()
            except Exception:
                pass


__all__ = ["NuiAgent", "Chunk", "ConnectionRuns", "Generator"]
