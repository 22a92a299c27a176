import json
import os
import socket
import subprocess
import sys
import time

from helpers import SDK_DIR


def read_json_lines(sock_file, until):
    out = []
    while True:
        msg = json.loads(sock_file.readline())
        out.append(msg)
        if until(msg):
            return out


def test_tcp_host_writes_its_connection_file_serves_runs_and_removes_the_file_on_shutdown(tmp_path):
    script = tmp_path / "host.py"
    script.write_text(
        "from nui_agent import NuiAgent\n"
        "class A(NuiAgent):\n"
        "    name = 'tcp-echo'\n"
        "    def run(self, message, run_id, **kw):\n"
        "        yield 'tcp:' + message\n"
        "A().serve()\n"
    )
    conn_dir = tmp_path / "connections"
    env = {**os.environ, "PYTHONPATH": SDK_DIR, "NUI_CONNECTIONS_DIR": str(conn_dir), "NUI_CONNECTION_ID": "ext-demo-echo"}
    proc = subprocess.Popen([sys.executable, str(script)], env=env, stderr=subprocess.PIPE)
    try:
        path = conn_dir / "ext-demo-echo.json"
        deadline = time.time() + 20
        while not path.exists() and time.time() < deadline:
            time.sleep(0.05)
        info = json.loads(path.read_text())
        assert info["host"] == "127.0.0.1" and info["pid"] == proc.pid and info["port"] > 0 and info["session_id"]
        sock = socket.create_connection((info["host"], info["port"]))
        f = sock.makefile("r")
        sock.sendall((json.dumps({"jsonrpc": "2.0", "id": "a", "method": "harness.authenticate", "params": {"token": info["token"]}}) + "\n").encode())
        assert read_json_lines(f, lambda m: m.get("id") == "a")[-1]["result"] == {"ok": True}
        # A malformed request is answered with an error; the connection serves on.
        sock.sendall((json.dumps({"jsonrpc": "2.0", "id": 0, "method": "harness.run", "params": "hi"}) + "\n").encode())
        assert read_json_lines(f, lambda m: m.get("id") == 0)[-1]["error"]["code"] == -32602
        sock.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": "harness.run", "params": {"message": "hi", "runId": "r1"}}) + "\n").encode())
        seen = read_json_lines(f, lambda m: m.get("id") == 1)
        texts = [m["params"]["content"] for m in seen if m.get("method") == "harness.event" and m["params"]["type"] == "text"]
        assert texts == ["tcp:hi"]
        sock.sendall((json.dumps({"jsonrpc": "2.0", "id": 2, "method": "harness.shutdown", "params": {}}) + "\n").encode())
        assert read_json_lines(f, lambda m: m.get("id") == 2)[-1]["result"] == {"ok": True}
        assert proc.wait(timeout=10) == 0
        assert not path.exists()
    finally:
        if proc.poll() is None:
            proc.kill()


def start_host(tmp_path):
    script = tmp_path / "host.py"
    script.write_text(
        "from nui_agent import NuiAgent\n"
        "class A(NuiAgent):\n"
        "    name = 'tcp-echo'\n"
        "    def run(self, message, run_id, **kw):\n"
        "        yield 'tcp:' + message\n"
        "A().serve()\n"
    )
    conn_dir = tmp_path / "connections"
    env = {**os.environ, "PYTHONPATH": SDK_DIR, "NUI_CONNECTIONS_DIR": str(conn_dir), "NUI_CONNECTION_ID": "ext-demo-echo"}
    proc = subprocess.Popen([sys.executable, str(script)], env=env, stderr=subprocess.PIPE)
    path = conn_dir / "ext-demo-echo.json"
    deadline = time.time() + 20
    while not path.exists() and time.time() < deadline:
        time.sleep(0.05)
    return proc, path, json.loads(path.read_text())


def test_a_connection_that_does_not_first_present_the_files_token_is_refused_and_closed_and_the_host_serves_on(tmp_path):
    proc, path, info = start_host(tmp_path)
    try:
        # The token is the secret of every connection: the file that holds it is its owner's alone.
        assert (path.stat().st_mode & 0o777) == 0o600 and len(info["token"]) >= 32
        for first in (
            {"jsonrpc": "2.0", "id": 1, "method": "harness.shutdown", "params": {}},
            {"jsonrpc": "2.0", "id": 1, "method": "harness.run", "params": {"message": "hi", "runId": "r1"}},
            {"jsonrpc": "2.0", "id": 1, "method": "harness.authenticate", "params": {"token": "guessed"}},
        ):
            sock = socket.create_connection((info["host"], info["port"]))
            f = sock.makefile("r")
            # What follows the refused first request on the same connection is never served either.
            then = {"jsonrpc": "2.0", "id": 2, "method": "harness.shutdown", "params": {}}
            sock.sendall((json.dumps(first) + "\n" + json.dumps(then) + "\n").encode())
            reply = json.loads(f.readline())
            assert reply["id"] == 1 and reply["error"]["code"] == -32001
            assert "harness.authenticate" in reply["error"]["message"]
            assert f.readline() == ""  # closed
            sock.close()
        # Nor may a stranger make it hold a first line that never ends, or send a line that is not JSON-RPC.
        for raw in (b"x" * (200 * 1024), b"not JSON-RPC\n"):
            sock = socket.create_connection((info["host"], info["port"]), timeout=10)
            sock.sendall(raw)
            try:
                assert sock.makefile("rb").read() == b""  # closed, nothing answered
            except ConnectionResetError:
                pass  # closed with what it sent unread
            sock.close()
        assert proc.poll() is None
        sock = socket.create_connection((info["host"], info["port"]))
        f = sock.makefile("r")
        sock.sendall((json.dumps({"jsonrpc": "2.0", "method": "harness.authenticate", "params": {"token": info["token"]}}) + "\n").encode())
        sock.sendall((json.dumps({"jsonrpc": "2.0", "id": 3, "method": "harness.run", "params": {"message": "hi", "runId": "r1"}}) + "\n").encode())
        seen = read_json_lines(f, lambda m: m.get("id") == 3)
        assert [m["params"]["content"] for m in seen if m.get("method") == "harness.event" and m["params"]["type"] == "text"] == ["tcp:hi"]
    finally:
        proc.kill()
        proc.wait()


def test_a_run_whose_connection_is_gone_is_cancelled_and_its_question_over_the_protocol_released(tmp_path):
    script = tmp_path / "host.py"
    marker = tmp_path / "ended"
    script.write_text(
        "import pathlib\n"
        "from nui_agent import NuiAgent\n"
        "class A(NuiAgent):\n"
        "    name = 'asker'\n"
        "    def run(self, message, run_id, **kw):\n"
        "        answer = self.ask_user(message='name?')\n"
        f"        pathlib.Path({str(marker)!r}).write_text(answer['status'] + ' ' + str(self.cancelled(run_id).is_set()))\n"
        "        yield 'never read'\n"
        "A().serve()\n"
    )
    conn_dir = tmp_path / "connections"
    env = {k: v for k, v in os.environ.items() if k != "NUI_API_URL"}
    env.update({"PYTHONPATH": SDK_DIR, "NUI_CONNECTIONS_DIR": str(conn_dir), "NUI_CONNECTION_ID": "ext-demo-asker"})
    proc = subprocess.Popen([sys.executable, str(script)], env=env, stderr=subprocess.PIPE)
    try:
        path = conn_dir / "ext-demo-asker.json"
        deadline = time.time() + 20
        while not path.exists() and time.time() < deadline:
            time.sleep(0.05)
        info = json.loads(path.read_text())
        sock = socket.create_connection((info["host"], info["port"]), timeout=10)
        f = sock.makefile("r")
        sock.sendall((json.dumps({"jsonrpc": "2.0", "method": "harness.authenticate", "params": {"token": info["token"]}}) + "\n").encode())
        sock.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": "harness.run", "params": {"message": "hi", "runId": "r1"}}) + "\n").encode())
        read_json_lines(f, lambda m: m.get("method") == "harness.event" and m["params"]["type"] == "hitl_request")
        f.close()
        sock.close()  # gone, with the question unanswered
        deadline = time.time() + 10
        while not marker.exists() and time.time() < deadline:
            time.sleep(0.05)
        assert marker.read_text() == "cancelled True"
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_a_first_line_nested_too_deep_for_json_is_refused_as_any_other_not_a_crash(capsys):
    from nui_agent import NuiAgent
    from nui_agent_stdio import ConnectionRuns

    agent = NuiAgent()
    agent._token = "secret-token-of-the-file"
    sent = []
    assert agent._authenticate("[" * 100000, sent.append) is False
    assert "refused a connection" in capsys.readouterr().err
    # Once authenticated, such a line is skipped as a line that is not JSON is, and the connection serves on.
    agent._handle_connection_line("[" * 100000, ConnectionRuns(sent.append))
    assert sent == []
