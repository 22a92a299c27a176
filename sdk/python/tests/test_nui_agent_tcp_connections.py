"""A TCP host serves every session of its harness, other tenants' too, one connection each: a connection's cancel,
answer or run id reaches that connection's runs only, as in the TypeScript SDK's host."""

import json
import os
import platform
import socket
import subprocess
import sys
import time

from helpers import SDK_DIR

# Each run asks a question over the protocol (no NUI_API_URL), then says what it was told and whether it was cancelled
# (a run's yield after its cancel is not sent). A run told "worker" first starts a thread of its own, which says it,
# naming its run, once the run has its answer.
AGENT = (
    "import threading\n"
    "from nui_agent import NuiAgent\n"
    "class A(NuiAgent):\n"
    "    name = 'asker'\n"
    "    def run(self, message, run_id, **kw):\n"
    "        said, answered = [], threading.Event()\n"
    "        worker = threading.Thread(target=lambda: answered.wait() and self.emit({'type': 'text', 'content': said[0]}, run_id))\n"
    "        if message.startswith('worker'):\n"
    "            worker.start()\n"
    "        answer = self.ask_user(message=message)\n"
    "        said.append(f\"{message}: {answer.get('answers')} cancelled={self.cancelled(run_id).is_set()}\")\n"
    "        answered.set()\n"
    "        if message.startswith('worker'):\n"
    "            worker.join()\n"
    "        else:\n"
    "            yield said[0]\n"
    "A().serve()\n"
)


class Connection:
    def __init__(self, info):
        self.sock = socket.create_connection((info["host"], info["port"]), timeout=60)
        self.file = self.sock.makefile("r")
        self.send("harness.authenticate", {"token": info["token"]}, rid="auth")
        assert self.until(lambda m: m.get("id") == "auth")[-1]["result"] == {"ok": True}

    def send(self, method, params, rid=None):
        msg = {"jsonrpc": "2.0", "method": method, "params": params}
        if rid is not None:
            msg["id"] = rid
        self.sock.sendall((json.dumps(msg) + "\n").encode())

    def until(self, match):
        seen = []
        while True:
            line = self.file.readline()
            assert line, f"the connection closed; read so far: {seen}"
            seen.append(json.loads(line))
            if match(seen[-1]):
                return seen

    def question(self):
        """Reads up to the run's question; its requestId."""
        return self.until(lambda m: m.get("method") == "harness.event" and m["params"]["type"] == "hitl_request")[-1]["params"]["requestId"]

    def answer(self, request_id, answers):
        response = {"requestId": request_id, "status": "answered", "answers": answers}
        self.send("harness.hitl_response", {"runId": "r1", "requestId": request_id, "response": response})

    def run_end(self, rid):
        """The texts the run sent and its reply's result."""
        seen = self.until(lambda m: m.get("id") == rid and "result" in m)
        texts = [m["params"]["content"] for m in seen if m.get("method") == "harness.event" and m["params"]["type"] == "text"]
        return texts, seen[-1]["result"]

    def close(self):
        self.file.close()
        self.sock.close()


# Each run asks a question, then says which runs on_cancel was called for so far.
CANCEL_NOTING_AGENT = (
    "from nui_agent import NuiAgent\n"
    "class A(NuiAgent):\n"
    "    name = 'asker'\n"
    "    noted = []\n"
    "    def on_cancel(self, run_id):\n"
    "        self.noted.append(run_id)\n"
    "    def run(self, message, run_id, **kw):\n"
    "        self.ask_user(message=message)\n"
    "        yield f'on_cancel for {self.noted}'\n"
    "A().serve()\n"
)


def start_host(tmp_path, agent=AGENT):
    script = tmp_path / "host.py"
    script.write_text(agent)
    conn_dir = tmp_path / "connections"
    env = {k: v for k, v in os.environ.items() if k != "NUI_API_URL"}
    env.update({"PYTHONPATH": SDK_DIR, "NUI_CONNECTIONS_DIR": str(conn_dir), "NUI_CONNECTION_ID": "ext-demo-asker"})
    proc = subprocess.Popen([sys.executable, str(script)], env=env, stderr=subprocess.DEVNULL)
    path = conn_dir / "ext-demo-asker.json"
    deadline = time.time() + 60
    while not path.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    return proc, json.loads(path.read_text())


def test_a_cancel_on_one_connection_does_not_stop_the_run_of_that_id_on_another(tmp_path):
    proc, info = start_host(tmp_path)
    a, b = Connection(info), Connection(info)
    try:
        a.send("harness.run", {"message": "a", "runId": "r1"}, rid=1)
        a_question = a.question()
        b.send("harness.run", {"message": "b", "runId": "r1"}, rid=1)
        b.question()
        b.send("harness.cancel", {"runId": "r1"}, rid=2)
        texts, result = b.run_end(1)
        assert texts == [] and result == {"runId": "r1", "cancelled": True}
        # A's run of r1 is A's: still asking, and not cancelled.
        a.answer(a_question, {"go": "on"})
        assert a.run_end(1) == (["a: {'go': 'on'} cancelled=False"], {"runId": "r1"})
    finally:
        a.close()
        b.close()
        proc.kill()
        proc.wait()


def test_on_cancel_is_called_for_a_cancel_of_the_connections_own_run_only(tmp_path):
    # The agent's on_cancel knows a run by its id alone: called for another connection's cancel of an id this one
    # runs, it would stop this connection's run's work.
    proc, info = start_host(tmp_path, CANCEL_NOTING_AGENT)
    a, b = Connection(info), Connection(info)
    try:
        a.send("harness.run", {"message": "a", "runId": "r1"}, rid=1)
        a_question = a.question()
        b.send("harness.cancel", {"runId": "r1"}, rid=2)
        b.until(lambda m: m.get("id") == 2)
        b.send("harness.run", {"message": "b", "runId": "r2"}, rid=3)
        b.question()
        b.send("harness.cancel", {"runId": "r2"}, rid=4)
        assert b.run_end(3) == ([], {"runId": "r2", "cancelled": True})
        a.answer(a_question, {"go": "on"})
        assert a.run_end(1) == (["on_cancel for ['r2']"], {"runId": "r1"})
    finally:
        a.close()
        b.close()
        proc.kill()
        proc.wait()


def test_an_answer_on_one_connection_does_not_answer_a_question_asked_on_another(tmp_path):
    proc, info = start_host(tmp_path)
    a, b = Connection(info), Connection(info)
    try:
        a.send("harness.run", {"message": "a", "runId": "r1"}, rid=1)
        a_question = a.question()
        b.send("harness.run", {"message": "b", "runId": "r2"}, rid=1)
        b_question = b.question()
        # B names A's request (ids are no secret once a client sees them), then answers its own.
        b.answer(a_question, {"from": "b"})
        b.answer(b_question, {"own": "b"})
        assert b.run_end(1) == (["b: {'own': 'b'} cancelled=False"], {"runId": "r2"})
        a.answer(a_question, {"from": "a"})
        assert a.run_end(1) == (["a: {'from': 'a'} cancelled=False"], {"runId": "r1"})
    finally:
        a.close()
        b.close()
        proc.kill()
        proc.wait()


def test_a_run_id_already_running_on_another_connection_starts_a_run_of_its_own_not_a_takeover(tmp_path):
    proc, info = start_host(tmp_path)
    a, b = Connection(info), Connection(info)
    try:
        a.send("harness.run", {"message": "worker a", "runId": "r1"}, rid=1)
        a_question = a.question()
        b.send("harness.run", {"message": "worker b", "runId": "r1"}, rid=1)
        b_question = b.question()
        # A's worker, there before B's run began, names r1: it is A's r1, whatever B runs under that id.
        a.answer(a_question, {"to": "a"})
        assert a.run_end(1) == (["worker a: {'to': 'a'} cancelled=False"], {"runId": "r1"})
        b.answer(b_question, {"to": "b"})
        assert b.run_end(1) == (["worker b: {'to': 'b'} cancelled=False"], {"runId": "r1"})
        # A connection gone cancels its own runs, not the other's of the same id.
        a.send("harness.run", {"message": "a", "runId": "r1"}, rid=2)
        a.question()
        b.send("harness.run", {"message": "b", "runId": "r1"}, rid=2)
        b_question = b.question()
        a.close()
        b.answer(b_question, {"still": "b"})
        assert b.run_end(2) == (["b: {'still': 'b'} cancelled=False"], {"runId": "r1"})
    finally:
        a.close()
        b.close()
        proc.kill()
        proc.wait()


def test_a_question_from_a_thread_that_names_no_run_is_answered_cancelled_not_left_waiting(monkeypatch):
    # Sent naming no run, it reached no connection (or Brain dropped it): its ask waited for good.
    monkeypatch.delenv("NUI_API_URL", raising=False)
    from nui_agent import NuiAgent

    answer = NuiAgent().ask_user(message="anyone?")
    assert answer["status"] == "cancelled" and "no run" in answer["answers"]["reason"]


# A run told "flood" yields long texts until cancelled; any other says its message back. on_cancel notes its run in
# a file named by the host's argument.
FLOOD_AGENT = (
    "import os, sys\n"
    "from nui_agent import NuiAgent\n"
    "class A(NuiAgent):\n"
    "    name = 'flooder'\n"
    "    def on_cancel(self, run_id):\n"
    "        open(os.path.join(os.environ['FLOOD_MARKS'], run_id), 'w').close()\n"
    "    def run(self, message, run_id, **kw):\n"
    "        if message != 'flood':\n"
    "            yield f'echo {message}'\n"
    "            return\n"
    "        while True:\n"
    "            yield 'x' * 300000\n"
    "A().serve()\n"
)


# The sendto system call's number (socket.sendall's), by machine: /proc/<pid>/task/<tid>/syscall names it first.
SENDTO = {"x86_64": "44", "aarch64": "206"}


def sending_blocked(pid):
    """Whether a thread of process `pid` is inside sendto (blocked there: a send that completes leaves it at once)."""
    number = SENDTO[platform.machine()]
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/syscall") as f:
                if f.read().split(" ", 1)[0] == number:
                    return True
        except OSError:
            pass
    return False


def test_a_connection_not_read_holds_up_neither_another_connection_nor_its_own_cancel(tmp_path, monkeypatch):
    # Brain's read gate stops reading a session's connection while that session's log is behind: the host's write on
    # it blocks. Another session's connection is served meanwhile, and this one's cancel is handled at once.
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("FLOOD_MARKS", str(marks))
    proc, info = start_host(tmp_path, FLOOD_AGENT)
    a, b = Connection(info), Connection(info)
    try:
        a.send("harness.run", {"message": "flood", "runId": "r1"}, rid=1)
        for _ in range(600):
            if sending_blocked(proc.pid):
                break
            time.sleep(0.1)
        assert sending_blocked(proc.pid), "the host's write to the connection not read never blocked"
        b.send("harness.run", {"message": "hi", "runId": "r1"}, rid=1)
        assert b.run_end(1) == (["echo hi"], {"runId": "r1"})
        a.send("harness.cancel", {"runId": "r1"}, rid=2)
        for _ in range(600):
            if (marks / "r1").exists():
                break
            time.sleep(0.1)
        assert (marks / "r1").exists(), "on_cancel was not called while the connection was not read"
        texts, result = a.run_end(1)
        assert result == {"runId": "r1", "cancelled": True} and set(texts) == {"x" * 300000}
    finally:
        a.close()
        b.close()
        proc.kill()
        proc.wait()
