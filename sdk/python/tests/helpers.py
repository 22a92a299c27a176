import json
import os
import queue
import subprocess
import sys
import threading

# The SDK modules, for a host started in a process of its own (PYTHONPATH=sdk/python, as an extension host runs).
SDK_DIR = os.path.join(os.path.dirname(__file__), "..")


class Capture:
    """Runs an agent's dispatcher in-process and collects every line it writes."""

    def __init__(self, agent):
        self.agent = agent
        self.messages = queue.Queue()
        agent._writer = lambda text: self.messages.put(json.loads(text))

    def send(self, method, params=None, rid=None):
        msg = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        if rid is not None:
            msg["id"] = rid
        self.agent._dispatch(msg)

    def until(self, match, timeout=10):
        """Messages up to and including the first that matches."""
        seen = []
        while True:
            msg = self.messages.get(timeout=timeout)
            seen.append(msg)
            if match(msg):
                return seen


def reply_to(rid):
    return lambda msg: msg.get("id") == rid and ("result" in msg or "error" in msg)


def events(messages, kind=None):
    out = [m["params"] for m in messages if m.get("method") == "harness.event"]
    return [e for e in out if kind is None or e.get("type") == kind]


def in_thread(fn):
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    return t


def start_stdio_host(script, env=None, blank_first=True, **popen):
    """Starts the host `script` in a process of its own, as Brain starts a stdio host: its three streams piped,
    the SDK on its PYTHONPATH, `env` over this process's environment. `blank_first`: reads the blank line the
    protocol stream starts with (see nui_wire.protocol_stdout), so every line after it is a protocol line."""
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": SDK_DIR, **(env or {})},
        **popen,
    )
    if blank_first:
        first = proc.stdout.readline()
        assert first in ("\n", b"\n"), f"the host's stdout began with {first!r}, not a blank line"
    return proc
