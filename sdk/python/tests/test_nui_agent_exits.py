import sys

from helpers import Capture, events, reply_to
from nui_agent_stdio import NuiAgent

# run() works in a thread of its own, where sys.exit() ends that thread alone: under nui's SDK it ended the host,
# which the client sees. A run that ended so, sending neither `done` nor its reply, would leave the turn waiting.


def test_sys_exit_in_run_ends_the_run_with_an_error_naming_it_and_the_host_serves_on():
    class Quitting(NuiAgent):
        def run(self, message, run_id, **kwargs):
            yield "checking the key"
            if message == "quit":
                sys.exit("ANTHROPIC_API_KEY is not set")
            yield "fine"

    cap = Capture(Quitting())
    cap.send("harness.run", {"message": "quit", "runId": "r1"}, rid=1)
    seen = cap.until(reply_to(1), timeout=5)
    assert [e["type"] for e in events(seen)] == ["text", "error", "done"]
    assert events(seen, "error")[0]["error"] == "run() called sys.exit('ANTHROPIC_API_KEY is not set')"
    assert seen[-1]["result"] == {"runId": "r1"}

    cap.send("harness.run", {"message": "again", "runId": "r2"}, rid=2)
    assert [e["content"] for e in events(cap.until(reply_to(2), timeout=5), "text")] == ["checking the key", "fine"]


def test_sys_exit_in_get_session_id_is_reported_and_the_run_still_ends(capsys):
    class Quitting(NuiAgent):
        def run(self, message, run_id, **kwargs):
            yield "ok"

        def get_session_id(self, run_id):
            sys.exit(3)

    cap = Capture(Quitting())
    cap.send("harness.run", {"message": "x", "runId": "r"}, rid=1)
    seen = cap.until(reply_to(1), timeout=5)
    assert [e["type"] for e in events(seen)] == ["text", "done"]
    assert "get_session_id raised SystemExit: 3" in capsys.readouterr().err
