import json

from helpers import events, start_stdio_host

# sys.stdout is swapped for stderr in serve_stdio(), but a child process the agent starts (a tool, `git status`)
# and C code write to file descriptor 1, the protocol's pipe, where that swap does not reach. Output without its
# newline ran into the next protocol line, and Brain dropped that line as not JSON: an event lost.
HOST = """
import os, subprocess, sys
from nui_agent_stdio import NuiAgent

class A(NuiAgent):
    name = "noisy"
    def run(self, message, run_id, **kw):
        yield "first "
        subprocess.run([sys.executable, "-c", "import sys; sys.stdout.write('progress 50%')"], check=True)
        yield "second "
        os.write(1, b"written to fd 1")
        yield "third"

A().serve_stdio()
"""


def test_a_child_process_or_a_write_to_fd_1_goes_to_stderr_and_no_event_is_lost(tmp_path):
    script = tmp_path / "host.py"
    script.write_text(HOST)
    proc = start_stdio_host(script, text=True)
    run = {"jsonrpc": "2.0", "id": 1, "method": "harness.run", "params": {"message": "x", "runId": "r"}}
    shutdown = {"jsonrpc": "2.0", "id": 2, "method": "harness.shutdown"}
    proc.stdin.write(json.dumps(run) + "\n")
    proc.stdin.flush()
    out = []
    while not out or out[-1].get("id") != 1:
        line = proc.stdout.readline()
        assert line, "the host's stdout ended before the run's reply"
        out.append(json.loads(line))  # every line on stdout is a protocol line
    proc.stdin.write(json.dumps(shutdown) + "\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 2
    assert proc.wait(timeout=10) == 0
    assert [e["content"] for e in events(out, "text")] == ["first ", "second ", "third"]
    err = proc.stderr.read()
    assert "progress 50%" in err and "written to fd 1" in err




# What the agent printed without a newline before serve_stdio() (at import) ran into the first protocol line, which
# Brain then dropped as not JSON. Brain starts hosts with PYTHONUNBUFFERED=1: a print reaches the pipe at once.
EARLY = """
print("printed at import, no newline", end="")
from nui_agent_stdio import NuiAgent

class A(NuiAgent):
    name = "early"
    def run(self, message, run_id, **kw):
        yield "ok"

A().serve_stdio()
"""


def test_output_printed_without_a_newline_before_serving_does_not_run_into_the_first_protocol_line(tmp_path):
    script = tmp_path / "host.py"
    script.write_text(EARLY)
    for unbuffered in ("1", ""):
        proc = start_stdio_host(script, env={"PYTHONUNBUFFERED": unbuffered}, blank_first=False, text=True)
        run = {"jsonrpc": "2.0", "id": 1, "method": "harness.run", "params": {"message": "x", "runId": "r"}}
        proc.stdin.write(json.dumps(run) + "\n")
        proc.stdin.flush()
        lines = [proc.stdout.readline()]
        while not lines[-1].startswith('{"jsonrpc": "2.0", "id": 1'):
            lines.append(proc.stdout.readline())
            assert lines[-1], f"the host's stdout ended before the run's reply: {lines}"
        proc.stdin.close()
        proc.wait(timeout=10)
        # Unbuffered, the early text is a line of its own; buffered, it went to stderr, and the stream opens blank.
        early = "printed at import, no newline"
        assert lines[0] == (early + "\n" if unbuffered else "\n")
        out = [json.loads(line) for line in lines[1:]]  # every other line is a protocol line
        assert [e["content"] for e in events(out, "text")] == ["ok"]
        assert [m["id"] for m in out if "id" in m] == [1]
        assert (early in proc.stderr.read()) == (not unbuffered)
