"""A host whose output Brain is not reading (its read gate holds a session's output while the session's log is
behind): the host's write blocks, and what it must still do meanwhile, above all handle an interrupt."""

import fcntl
import json
import queue
import sys
import termios
import threading

from helpers import start_stdio_host

# One text event far larger than a pipe holds: its write blocks until the other end reads. on_cancel says so on
# stderr, as an agent stopping its work (a child process, a model call) would act at once.
STDIO_AGENT = (
    "import sys\n"
    "from nui_agent_stdio import NuiAgent\n"
    "class A(NuiAgent):\n"
    "    name = 'flooder'\n"
    "    def on_cancel(self, run_id):\n"
    "        sys.stderr.write(f'on_cancel {run_id} cancelled={self.cancelled(run_id).is_set()}\\n')\n"
    "        sys.stderr.flush()\n"
    "    def run(self, message, run_id, **kw):\n"
    "        yield 'x' * 300000\n"
    "A().serve_stdio()\n"
)


def unread_bytes(fd):
    """How many bytes wait in the pipe `fd` reads."""
    size = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
    return int.from_bytes(size, sys.byteorder)


def wait_for(check, what, tries=600):
    """Polls `check` (each try waits up to 0.1 s) until it holds; fails naming `what` if it never does."""
    stop = threading.Event()
    for _ in range(tries):
        if check():
            return
        stop.wait(0.1)
    raise AssertionError(f"never: {what}")


def lines_of(stream, into):
    for line in iter(stream.readline, b""):
        into.put(line.decode())


def test_a_cancel_is_handled_while_the_hosts_stdout_is_not_read(tmp_path):
    script = tmp_path / "host.py"
    script.write_text(STDIO_AGENT)
    proc = start_stdio_host(script)
    errors = queue.Queue()
    threading.Thread(target=lines_of, args=(proc.stderr, errors), daemon=True).start()
    try:
        send = lambda msg: (proc.stdin.write((json.dumps(msg) + "\n").encode()), proc.stdin.flush())
        send({"jsonrpc": "2.0", "id": 1, "method": "harness.run", "params": {"message": "m", "runId": "r1"}})
        # The pipe is full and the run's event is not all in it: the run's write is blocked.
        out = proc.stdout.fileno()
        capacity = fcntl.fcntl(out, fcntl.F_GETPIPE_SZ)
        wait_for(lambda: unread_bytes(out) >= capacity, "the host filled its stdout")
        send({"jsonrpc": "2.0", "id": 2, "method": "harness.cancel", "params": {"runId": "r1"}})
        said = []
        try:
            while not said or not said[-1].startswith("on_cancel"):
                said.append(errors.get(timeout=60))
        except queue.Empty:
            raise AssertionError(f"on_cancel was not called while stdout was not read; stderr: {said}") from None
        assert said[-1] == "on_cancel r1 cancelled=True\n"
        # Read again: every line is whole, the event first, and the run ends cancelled.
        seen = []
        while not any(m.get("id") == 1 for m in seen):
            seen.append(json.loads(proc.stdout.readline()))
        texts = [m["params"]["content"] for m in seen if m.get("method") == "harness.event" and m["params"]["type"] == "text"]
        assert texts == ["x" * 300000]
        assert seen[-1]["result"] == {"runId": "r1", "cancelled": True}
    finally:
        proc.kill()
        proc.wait()
