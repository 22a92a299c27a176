import json
import os
import socket
import subprocess
import sys
import time

SDK_DIR = os.path.join(os.path.dirname(__file__), "..")


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
