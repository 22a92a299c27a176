"""The Python SDK on the shared wire fixtures (src/testing/fixtures/wire/jsonrpc-lines.json): it answers the lines
Brain's reader takes (src/protocol/wire-fixtures.test.ts) and the TypeScript SDK's (test/sdk/wire-fixtures.test.ts),
and stops reading at a line over the cap, over stdio and over TCP; its HITL client writes what Brain reads too."""

import json
import os
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from nui_agent import NuiAgent as TcpAgent
from nui_agent_stdio import NuiAgent
from nui_hitl import create_request

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "src", "testing", "fixtures", "wire")
with open(os.path.join(FIXTURES, "jsonrpc-lines.json"), encoding="utf-8") as f:
    CASES = json.load(f)["cases"]


def padded_line(id, bytes, char):
    """A harness.info line of exactly `bytes` UTF-8 bytes before its newline (src/testing/wire-fixtures.ts)."""

    def line(pad):
        msg = {"jsonrpc": "2.0", "id": id, "method": "harness.info", "params": {"pad": pad}}
        return json.dumps(msg, ensure_ascii=False, separators=(",", ":"))

    need = bytes - len(line("").encode())
    each = len(char.encode())
    out = (line(char * (need // each) + "x" * (need % each)) + "\n").encode()
    assert len(out) == bytes + 1
    return out


def chunks_of(case):
    for chunk in case["in"]:
        if isinstance(chunk, str):
            yield chunk.encode("utf-8", "surrogatepass")
        elif "hex" in chunk:
            yield bytes.fromhex(chunk["hex"])
        else:
            yield padded_line(**chunk["pad"])


MARKER = b'{"jsonrpc":"2.0","id":"marker","method":"harness.info"}\n'


def answered(messages):
    """What the case expects from the replies: the ids before the marker's, and whether the marker went unread."""
    ids = [m["id"] for m in messages]
    ended = not ids or ids[-1] != "marker"
    return {"answered": ids if ended else ids[:-1], "ended": ended}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_stdio_reads_the_lines_brain_reads(case):
    agent = NuiAgent()
    messages = []
    agent._writer = lambda text: messages.append(json.loads(text))
    agent._serve_chunks(iter([*chunks_of(case), MARKER]))
    assert answered(messages) == {"answered": case["answered"], "ended": case["ended"]}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_tcp_reads_the_lines_brain_reads(case):
    agent = TcpAgent()
    agent._token = "t"
    server, client = socket.socketpair()
    served = threading.Thread(target=agent._serve_connection, args=(server,), daemon=True)
    served.start()
    client.sendall(b'{"jsonrpc":"2.0","id":"auth","method":"harness.authenticate","params":{"token":"t"}}\n')
    for chunk in chunks_of(case):
        try:
            client.sendall(chunk)
        except OSError:  # the host closed the connection: it read no further
            break
    try:
        client.sendall(MARKER)
        client.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    data = b""
    while True:
        # A host that ended the connection with our bytes unread resets it: on a Unix socket what it wrote before
        # is still read first, then recv raises where it would return b"" (seen in CI, not every run).
        try:
            got = client.recv(65536)
        except ConnectionResetError:
            break
        if not got:
            break
        data += got
    served.join(timeout=60)
    messages = [json.loads(line) for line in data.decode().splitlines()]
    assert messages[0] == {"jsonrpc": "2.0", "id": "auth", "result": {"ok": True}}
    assert answered(messages[1:]) == {"answered": case["answered"], "ended": case["ended"]}


NUMBERS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def revive(value):
    """The fixture's stand-ins made real, as src/testing/wire-fixtures.ts does."""
    if isinstance(value, list):
        return [revive(v) for v in value]
    if not isinstance(value, dict):
        return value
    if isinstance(value.get("$number"), str):
        return NUMBERS[value["$number"]]
    if isinstance(value.get("repeat"), str) and isinstance(value.get("times"), int):
        rest = {k: v for k, v in value.items() if k not in ("repeat", "times", "before")}
        text = value.get("before", "") + value["repeat"] * value["times"]
        return {**rest, "content": text} if "type" in rest else text
    return {k: revive(v) for k, v in value.items()}


with open(os.path.join(FIXTURES, "events-out.json"), encoding="utf-8") as f:
    EVENT_CASES = json.load(f)["cases"]


def brain_reads(line):
    """A line as Brain's JSON.parse reads it: NaN and Infinity are not JSON."""

    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(line, parse_constant=refuse)


@pytest.mark.parametrize("case", EVENT_CASES, ids=[c["name"] for c in EVENT_CASES])
def test_the_events_it_writes_are_those_brain_reads(case):
    yields = revive(case["yield"])

    class Yielding(NuiAgent):
        def run(self, message, run_id, **kwargs):
            yield from yields

    lines = []
    done = threading.Event()
    agent = Yielding()

    def write(text):
        lines.append(text)
        if '"id": "run"' in text:
            done.set()

    agent._writer = write
    agent._dispatch({"jsonrpc": "2.0", "id": "run", "method": "harness.run", "params": {"message": "m", "runId": "r"}})
    assert done.wait(60)
    messages = [brain_reads(line) for line in lines]
    events = [{k: v for k, v in m["params"].items() if k != "runId"} for m in messages if m.get("method") == "harness.event"]
    if "sent" in case:
        assert events == revive(case["sent"])
    else:
        assert "".join(e["content"] for e in events if e["type"] == "text") == revive(case["joined"])
    assert max(len(line.encode()) for line in lines) <= 4 << 20


@pytest.fixture
def hitl_server(monkeypatch):
    """A HITL REST API that keeps each request body's bytes as they came."""
    bodies = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            bodies.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            out = b'{"requestId": "req-1"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("NUI_API_URL", f"http://127.0.0.1:{server.server_port}")
    yield bodies
    server.shutdown()
    server.server_close()


# A HITL request is one body, not a stream of pieces: the cases whose events are sent as they were yielded.
WHOLE_CASES = [c for c in EVENT_CASES if "sent" in c and len(c["sent"]) == len(c["yield"]) + 1]


@pytest.mark.parametrize("case", WHOLE_CASES, ids=[c["name"] for c in WHOLE_CASES])
def test_the_hitl_requests_it_writes_are_those_brain_reads(case, hitl_server):
    create_request(payload={"events": revive(case["yield"])}, session_id="s", run_id="r")
    [body] = hitl_server
    sent = [e for e in revive(case["sent"]) if e["type"] != "done"]
    assert brain_reads(body.decode("utf-8", "surrogatepass"))["payload"] == {"events": sent}
