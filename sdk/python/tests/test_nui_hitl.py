import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from helpers import Capture, events, reply_to
from nui_agent_stdio import NuiAgent
from nui_hitl import api_url, create_request, list_pending, resolve_nui_run_id, resolve_nui_session_id, wait_response


def test_session_id_prefers_the_explicit_one():
    assert resolve_nui_session_id("sess-1", {"sessionId": "other"}) == "sess-1"


def test_session_id_from_ctx_then_env_then_ctx_session(monkeypatch):
    monkeypatch.delenv("NUI_SESSION_ID", raising=False)
    assert resolve_nui_session_id(ctx={"nuiSessionId": "nui-42"}) == "nui-42"
    assert resolve_nui_session_id(ctx={"sessionId": "plain"}) == "plain"
    monkeypatch.setenv("NUI_SESSION_ID", "env-sess")
    assert resolve_nui_session_id(ctx={"sessionId": "plain"}) == "env-sess"


def test_run_id_from_ctx_then_env(monkeypatch):
    monkeypatch.setenv("NUI_RUN_ID", "env-run")
    assert resolve_nui_run_id(ctx={"runId": "run-9"}) == "run-9"
    assert resolve_nui_run_id() == "env-run"


def test_api_url_defaults_like_nui(monkeypatch):
    monkeypatch.delenv("NUI_API_URL", raising=False)
    monkeypatch.delenv("NUI_URL", raising=False)
    assert api_url() == "http://127.0.0.1:8080"
    monkeypatch.setenv("NUI_URL", "http://example:9000/")
    assert api_url() == "http://example:9000"
    monkeypatch.setenv("NUI_API_URL", "http://brain:1234")
    assert api_url() == "http://brain:1234"


class FakeNui:
    """nui's HITL REST API, answering every request with a fixed response once it is waited on."""

    def __init__(self):
        self.created = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if self.path == "/api/hitl/requests":
                    fake.created.append(body)
                    return self._json(200, {**body, "requestId": f"req-{len(fake.created)}", "status": "delivered"})
                self._json(404, {"error": "no"})

            def do_GET(self):
                if self.path.endswith("/wait"):
                    rid = self.path.split("/")[-2]
                    return self._json(200, {"requestId": rid, "status": "answered", "answers": {"ok": True}})
                if self.path.startswith("/api/hitl/requests?"):
                    return self._json(200, [{"requestId": "req-1"}])
                self._json(404, {"error": "no"})

            def _json(self, code, obj):
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_):
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


@pytest.fixture
def nui(monkeypatch):
    fake = FakeNui()
    monkeypatch.setenv("NUI_API_URL", fake.url)
    monkeypatch.setenv("NUI_SESSION_ID", "sess-env")
    yield fake
    fake.close()


def test_rest_client_creates_waits_and_lists(nui):
    req = create_request(kind="approval", payload={"title": "t"}, run_id="r1")
    assert req["requestId"] == "req-1"
    assert nui.created[0] == {"kind": "approval", "payload": {"title": "t"}, "sessionId": "sess-env", "runId": "r1"}
    assert wait_response("req-1")["status"] == "answered"
    assert list_pending(session_id="sess-env") == [{"requestId": "req-1"}]


def test_ask_user_with_nui_api_url_goes_through_rest_and_announces_the_request(nui):
    class Asking(NuiAgent):
        def run(self, message, run_id, **kwargs):
            resp = self.ask_user(title="T", message="Proceed?")
            yield resp["status"]

    cap = Capture(Asking())
    cap.send("harness.run", {"message": "x", "runId": "rest-run"}, rid=1)
    seen = cap.until(reply_to(1))
    [request] = events(seen, "hitl_request")
    assert request["requestId"] == "req-1" and request["runId"] == "rest-run"
    assert nui.created[0]["runId"] == "rest-run"
    assert nui.created[0]["payload"] == {"questions": [], "title": "T", "message": "Proceed?"}
    assert events(seen, "text")[0]["content"] == "answered"
