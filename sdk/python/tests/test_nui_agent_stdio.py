import json
import threading

from helpers import Capture, events, reply_to, start_stdio_host
from nui_agent_stdio import NuiAgent


class EchoAgent(NuiAgent):
    name = "echo"
    version = "0.2.0"

    def run(self, message, run_id, **kwargs):
        yield f"echo:{message}"
        yield {"type": "tool_call", "toolCallId": "t1", "name": "lookup", "args": {"q": message}}
        yield {"type": "tool_result", "toolCallId": "t1", "content": "found"}


def test_info_names_the_agent_and_its_capabilities():
    cap = Capture(EchoAgent())
    cap.send("harness.info", rid=1)
    [msg] = cap.until(reply_to(1))
    assert msg["result"]["name"] == "echo"
    assert msg["result"]["version"] == "0.2.0"
    assert msg["result"]["capabilities"] == ["run", "cancel", "shutdown"]


def test_run_streams_strings_as_text_and_dicts_as_they_are_then_done_then_the_reply():
    cap = Capture(EchoAgent())
    cap.send("harness.run", {"message": "hello", "runId": "run-1", "harnessId": "echo"}, rid=2)
    seen = cap.until(reply_to(2))
    evs = events(seen)
    assert [e["type"] for e in evs] == ["text", "tool_call", "tool_result", "done"]
    assert evs[0] == {"runId": "run-1", "type": "text", "content": "echo:hello"}
    assert evs[1]["args"] == {"q": "hello"}
    assert all(e["runId"] == "run-1" for e in evs)
    assert seen[-1]["result"] == {"runId": "run-1"}


def test_text_over_the_4_mib_frame_cap_is_sent_in_pieces_each_line_under_it():
    class Long(NuiAgent):
        def run(self, message, run_id, **kwargs):
            yield "é😀x" * (2 << 20)

    lines = []
    cap = Capture(Long())
    writer = cap.agent._writer
    cap.agent._writer = lambda text: (lines.append(text), writer(text))
    cap.send("harness.run", {"message": "m", "runId": "r"}, rid=1)
    texts = events(cap.until(reply_to(1)), "text")
    assert "".join(e["content"] for e in texts) == "é😀x" * (2 << 20)
    assert max(len(line.encode()) for line in lines) <= 4 << 20


def _run_capturing_lines(agent):
    lines = []
    cap = Capture(agent)
    writer = cap.agent._writer
    cap.agent._writer = lambda text: (lines.append(text), writer(text))
    cap.send("harness.run", {"message": "m", "runId": "r"}, rid=1)
    return cap.until(reply_to(1)), lines


def test_an_error_over_the_4_mib_frame_cap_is_cut_short_saying_so():
    class Failing(NuiAgent):
        def run(self, message, run_id, **kwargs):
            raise RuntimeError("e" * (5 << 20))
            yield  # a generator

    seen, lines = _run_capturing_lines(Failing())
    [error] = events(seen, "error")
    assert error["error"].startswith("RuntimeError: " + "e" * 1000)
    assert "cut short: the whole error message took" in error["error"]
    assert events(seen, "done")
    assert max(len(line.encode()) for line in lines) <= 4 << 20


def test_a_tool_result_over_the_4_mib_frame_cap_is_cut_short_saying_so():
    class Dumping(NuiAgent):
        def run(self, message, run_id, **kwargs):
            yield {"type": "tool_call", "toolCallId": "t1", "name": "dump", "args": {}}
            yield {"type": "tool_result", "toolCallId": "t1", "content": {"rows": ["r" * 1000] * 6000}}
            yield "dumped"

    seen, lines = _run_capturing_lines(Dumping())
    [result] = events(seen, "tool_result")
    assert result["content"].startswith('{"rows": ["rrr')
    assert "cut short: the whole tool result took" in result["content"]
    assert [e["content"] for e in events(seen, "text")] == ["dumped"]
    assert max(len(line.encode()) for line in lines) <= 4 << 20


def test_an_image_over_the_4_mib_frame_cap_ends_the_run_with_an_error_naming_it():
    class Picturing(NuiAgent):
        def run(self, message, run_id, **kwargs):
            yield {"type": "image", "mimeType": "image/png", "data": "A" * (5 << 20)}
            yield "never sent"

    seen, lines = _run_capturing_lines(Picturing())
    [error] = events(seen, "error")
    assert '"image" event of' in error["error"] and "over the 4 MiB line" in error["error"]
    assert not events(seen, "image") and not events(seen, "text")
    assert max(len(line.encode()) for line in lines) <= 4 << 20


def test_run_receives_the_other_params_as_keyword_arguments():
    got = {}

    class Agent(NuiAgent):
        def run(self, message, run_id, **kwargs):
            got.update(kwargs)
            yield "ok"

    cap = Capture(Agent())
    params = {"message": "m", "runId": "r", "sessionId": "s", "workingDir": "/w", "systemPrompt": "p", "model": "x", "harnessId": "h"}
    cap.send("harness.run", params, rid=3)
    cap.until(reply_to(3))
    assert got == {"sessionId": "s", "workingDir": "/w", "systemPrompt": "p", "model": "x", "harnessId": "h"}


def test_an_exception_in_run_is_an_error_event_and_the_run_still_ends():
    class Failing(NuiAgent):
        def run(self, message, run_id, **kwargs):
            yield "partial"
            raise ValueError("model unavailable")

    cap = Capture(Failing())
    cap.send("harness.run", {"message": "x", "runId": "r"}, rid=4)
    seen = cap.until(reply_to(4))
    assert [e["type"] for e in events(seen)] == ["text", "error", "done"]
    assert events(seen, "error")[0]["error"].startswith("ValueError: model unavailable\n")


def test_hooks_that_raise_are_reported_and_neither_a_run_nor_the_host_ends_there(capsys):
    class Faulty(NuiAgent):
        def run(self, message, run_id, **kwargs):
            yield "ok"
            self.cancelled(run_id).wait(30)  # works until cancelled

        def get_session_id(self, run_id):
            raise RuntimeError("no session yet")

        def on_cancel(self, run_id):
            raise RuntimeError("cleanup failed")

    cap = Capture(Faulty())
    cap.send("harness.run", {"message": "x", "runId": "r"}, rid=5)
    seen = cap.until(lambda m: m.get("method") == "harness.event" and m["params"]["type"] == "text")
    cap.send("harness.cancel", {"runId": "r"}, rid=6)
    replies = {}
    seen += cap.until(lambda m: replies.update({m.get("id"): m}) or {5, 6} <= replies.keys())
    assert [e["type"] for e in events(seen)] == ["text", "done"]
    assert replies[6]["result"] == {"ok": True}
    assert replies[5]["result"] == {"runId": "r", "cancelled": True}
    err = capsys.readouterr().err
    assert "get_session_id raised RuntimeError: no session yet" in err
    assert "on_cancel raised RuntimeError: cleanup failed" in err


def test_done_carries_the_session_id_for_the_next_run():
    class Resuming(NuiAgent):
        def run(self, message, run_id, **kwargs):
            yield kwargs.get("sessionId") or "first"

        def get_session_id(self, run_id):
            return "conv-7"

    cap = Capture(Resuming())
    cap.send("harness.run", {"message": "x", "runId": "r"}, rid=5)
    assert events(cap.until(reply_to(5)), "done")[0]["sessionId"] == "conv-7"


def test_cancel_is_handled_while_run_works():
    cancelled = []

    class Slow(NuiAgent):
        def run(self, message, run_id, **kwargs):
            yield "started"
            self.cancelled(run_id).wait(30)  # works until cancelled
            yield "after cancel"

        def on_cancel(self, run_id):
            cancelled.append(run_id)

    cap = Capture(Slow())
    cap.send("harness.run", {"message": "x", "runId": "slow"}, rid=6)
    cap.until(lambda m: m.get("method") == "harness.event" and m["params"]["type"] == "text")
    cap.send("harness.cancel", {"runId": "slow"}, rid=7)
    seen = cap.until(reply_to(6))
    assert {"jsonrpc": "2.0", "id": 7, "result": {"ok": True}} in seen
    assert cancelled == ["slow"]
    assert seen[-1]["result"] == {"runId": "slow", "cancelled": True}
    # the run stops at the yield after the cancel: nothing it yields from then on is sent
    assert events(seen, "text") == []
    assert [e["type"] for e in events(seen)] == ["done"]


def test_cancels_for_runs_it_is_not_running_are_kept_only_so_many():
    # Each such cancel used to leave a flag behind for good: a host told to cancel many runs it never saw (or that
    # had ended) grew without bound.
    agent = EchoAgent()
    cap = Capture(agent)
    for i in range(5000):
        cap.send("harness.cancel", {"runId": f"unseen-{i}"}, rid=i)
    cap.until(reply_to(4999))
    held = len(agent._stream.flags) + len(agent._stream.early)
    assert held <= 1000  # MAX_EARLY_CANCELS
    # The latest are kept: a run that arrives after its cancel starts cancelled.
    cap.send("harness.run", {"message": "x", "runId": "unseen-4999"}, rid="late")
    assert cap.until(reply_to("late"))[-1]["result"] == {"runId": "unseen-4999", "cancelled": True}
    # A cancel for a run that has ended leaves no flag behind either.
    cap.send("harness.run", {"message": "x", "runId": "ended"}, rid="r")
    cap.until(reply_to("r"))
    cap.send("harness.cancel", {"runId": "ended"}, rid="c")
    cap.until(reply_to("c"))
    assert "ended" not in agent._stream.flags


def test_a_run_that_has_ended_leaves_nothing_behind():
    # A run that ended before harness.run's dispatch had noted its thread (most quick runs) left that thread noted
    # for good: a host grew with every run it served.
    class Quick(NuiAgent):
        def run(self, message, run_id, **kwargs):
            return ()

    agent = Quick()
    cap = Capture(agent)
    for i in range(50):
        cap.send("harness.run", {"message": "x", "runId": f"q{i}"}, rid=i)
        cap.until(reply_to(i))
    for thread in list(agent._stream.threads.values()):
        thread.join(10)  # the reply is written just before the run's thread forgets itself
    assert agent._stream.threads == {}
    assert agent._stream.flags == {}


def test_unknown_methods_get_method_not_found_and_notifications_are_ignored():
    cap = Capture(EchoAgent())
    cap.send("harness.nope", {}, rid=8)
    cap.send("some.notification", {})
    [msg] = cap.until(reply_to(8))
    assert msg["error"]["code"] == -32601


def test_a_malformed_request_gets_an_error_reply_and_the_host_serves_on(capsys):
    cap = Capture(EchoAgent())
    cap.send("harness.run", "not an object", rid=1)
    cap.send("harness.cancel", {"runId": ["r"]}, rid=2)
    cap.send("harness.hitl_response", {"requestId": {"id": 1}})  # a notification: nothing to answer
    cap.send("harness.info", rid=3)
    first = cap.until(reply_to(1))[-1]
    assert first["error"] == {"code": -32602, "message": "params of 'harness.run' must be an object, not str"}
    assert cap.until(reply_to(2))[-1]["error"]["message"] == "params.runId of 'harness.cancel' must be a string, not list"
    assert cap.until(reply_to(3))[-1]["result"]["name"] == "echo"
    assert "ignored a request: params.requestId of 'harness.hitl_response'" in capsys.readouterr().err


def test_ask_user_without_nui_api_url_asks_over_the_protocol(monkeypatch):
    monkeypatch.delenv("NUI_API_URL", raising=False)
    answers = {}

    class Asking(NuiAgent):
        def run(self, message, run_id, **kwargs):
            resp = self.ask_user(title="Pick", message="Which?", questions=[{"question": "Which?", "options": [{"label": "A"}, {"label": "B"}]}])
            answers.update(resp)
            yield f"got {resp['answers']['Which?']}"

    cap = Capture(Asking())
    cap.send("harness.run", {"message": "x", "runId": "h1"}, rid=9)
    [*_, request] = cap.until(lambda m: m.get("method") == "harness.event" and m["params"]["type"] == "hitl_request")
    params = request["params"]
    assert params["kind"] == "question" and params["runId"] == "h1"
    assert params["payload"]["questions"][0]["options"][1] == {"label": "B"}
    response = {"requestId": params["requestId"], "status": "answered", "answers": {"Which?": "B"}}
    cap.send("harness.hitl_response", {"runId": "h1", "requestId": params["requestId"], "response": response})
    seen = cap.until(reply_to(9))
    assert events(seen, "text")[0]["content"] == "got B"
    assert answers["status"] == "answered"


def test_a_cancel_releases_a_run_waiting_for_an_answer(monkeypatch):
    monkeypatch.delenv("NUI_API_URL", raising=False)

    class Asking(NuiAgent):
        def run(self, message, run_id, **kwargs):
            resp = self.request_approval(title="Deploy?", tool_name="deploy")
            yield resp["status"]

    cap = Capture(Asking())
    cap.send("harness.run", {"message": "x", "runId": "h2"}, rid=10)
    cap.until(lambda m: m.get("method") == "harness.event" and m["params"]["type"] == "hitl_request")
    cap.send("harness.cancel", {"runId": "h2"}, rid=11)
    seen = cap.until(reply_to(10))
    assert seen[-1]["result"]["cancelled"] is True


def test_serve_stdio_keeps_stdout_for_the_protocol_and_exits_on_shutdown(tmp_path):
    script = tmp_path / "host.py"
    script.write_text(
        "from nui_agent_stdio import NuiAgent\n"
        "class A(NuiAgent):\n"
        "    name = 'printer'\n"
        "    def run(self, message, run_id, **kw):\n"
        "        print('debug noise')\n"
        "        yield message.upper()\n"
        "A().serve_stdio()\n"
    )
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "harness.run", "params": {"message": "hi", "runId": "r"}},
    ]
    proc = start_stdio_host(script, text=True)
    proc.stdin.write("\n".join(json.dumps(l) for l in lines) + "\n")
    proc.stdin.flush()
    out = []
    while True:
        msg = json.loads(proc.stdout.readline())
        out.append(msg)
        if msg.get("id") == 1:
            break
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "harness.shutdown"}) + "\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["result"] == {"ok": True}
    assert proc.wait(timeout=10) == 0
    assert "debug noise" in proc.stderr.read()
    assert [e["content"] for e in events(out, "text")] == ["HI"]


def test_serve_stdio_reads_utf8_frames_whatever_the_locale(tmp_path):
    script = tmp_path / "host.py"
    script.write_text(
        "from nui_agent_stdio import NuiAgent\n"
        "class A(NuiAgent):\n"
        "    name = 'upper'\n"
        "    def run(self, message, run_id, **kw):\n"
        "        yield message.upper()\n"
        "A().serve_stdio()\n"
    )
    # A host whose locale is not UTF-8 (its standard streams' encoding is latin-1); Brain writes raw UTF-8.
    proc = start_stdio_host(script, env={"PYTHONIOENCODING": "latin-1"})
    run = {"jsonrpc": "2.0", "id": 1, "method": "harness.run", "params": {"message": "héllo €", "runId": "r"}}
    proc.stdin.write((json.dumps(run, ensure_ascii=False) + "\n").encode("utf-8"))
    proc.stdin.flush()
    out = []
    while not out or out[-1].get("id") != 1:
        out.append(json.loads(proc.stdout.readline().decode("utf-8")))
    proc.stdin.close()
    assert proc.wait(timeout=10) == 0
    assert [e["content"] for e in events(out, "text")] == ["HÉLLO €"]


def test_a_thread_of_the_agents_own_emits_and_asks_for_the_one_run_working(monkeypatch):
    monkeypatch.delenv("NUI_API_URL", raising=False)

    class Threaded(NuiAgent):
        def run(self, message, run_id, **kwargs):
            got = {}

            def work():
                self.emit({"type": "text", "content": "from a worker"})
                got.update(self.request_approval(title="Deploy?", tool_name="deploy"))

            worker = threading.Thread(target=work)
            worker.start()
            worker.join()
            yield got["status"]

    cap = Capture(Threaded())
    cap.send("harness.run", {"message": "x", "runId": "h3"}, rid=12)
    [*seen, request] = cap.until(lambda m: m.get("method") == "harness.event" and m["params"]["type"] == "hitl_request")
    assert events(seen, "text")[0] == {"runId": "h3", "type": "text", "content": "from a worker"}
    params = request["params"]
    assert params["runId"] == "h3"
    response = {"requestId": params["requestId"], "status": "answered", "answers": {}}
    cap.send("harness.hitl_response", {"runId": "h3", "requestId": params["requestId"], "response": response})
    seen = cap.until(reply_to(12))
    assert events(seen, "text")[0]["content"] == "answered"


def test_a_question_too_long_to_send_fails_the_ask_and_leaves_no_waiter_behind(monkeypatch):
    monkeypatch.delenv("NUI_API_URL", raising=False)

    class Verbose(NuiAgent):
        def run(self, message, run_id, **kwargs):
            self.ask_user(title="Pick", message="x" * (5 * 1024 * 1024))
            yield "not reached"

    agent = Verbose()
    cap = Capture(agent)
    cap.send("harness.run", {"message": "x", "runId": "h4"}, rid=13)
    seen = cap.until(reply_to(13))
    assert "over the 4 MiB line" in events(seen, "error")[0]["error"]
    assert agent._stream.waiters == {}
