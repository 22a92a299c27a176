from helpers import Capture, events, reply_to
from nui_agent_stdio import NuiAgent

# What run() raises is the turn's error, and all a person reading the failed turn has: the exception's message
# alone ("'missing'" for a KeyError) named neither what went wrong nor where.


def lookup(table):
    return table["missing"]


def test_an_exception_in_run_is_named_with_its_type_and_the_tail_of_its_traceback():
    class Buggy(NuiAgent):
        def run(self, message, run_id, **kwargs):
            yield "partial"
            lookup({})

    cap = Capture(Buggy())
    cap.send("harness.run", {"message": "x", "runId": "r"}, rid=1)
    seen = cap.until(reply_to(1), timeout=5)
    assert [e["type"] for e in events(seen)] == ["text", "error", "done"]
    error = events(seen, "error")[0]["error"]
    assert error.startswith("KeyError: 'missing'\n")
    assert 'test_nui_agent_failures.py", line 9, in lookup' in error
    assert 'return table["missing"]' in error
    assert "nui_agent_stdio.py" not in error  # the SDK's own frames are no help to the agent's author


def test_an_exception_whose_message_cannot_be_read_still_fails_the_run_and_ends_it():
    class Unprintable(Exception):
        def __str__(self):
            raise RuntimeError("no message")

    class Broken(NuiAgent):
        def run(self, message, run_id, **kwargs):
            raise Unprintable()
            yield

    cap = Capture(Broken())
    cap.send("harness.run", {"message": "x", "runId": "r"}, rid=2)
    seen = cap.until(reply_to(2), timeout=5)
    assert [e["type"] for e in events(seen)] == ["error", "done"]
    assert "Unprintable: <exception str() failed>" in events(seen, "error")[0]["error"]
    assert seen[-1]["result"] == {"runId": "r"}
