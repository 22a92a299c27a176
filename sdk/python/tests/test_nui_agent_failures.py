import asyncio
import re

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
    assert re.search(r'test_nui_agent_failures\.py", line \d+, in lookup\n', error)
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
    # Python's own stand-in for the message: "<exception str() failed>", before 3.10 "<unprintable … object>".
    assert re.search(r"Unprintable: <[^>]+>", events(seen, "error")[0]["error"])
    assert seen[-1]["result"] == {"runId": "r"}


def cancel_own_task():
    """What an agent on asyncio sees when its task is cancelled: asyncio.CancelledError, a BaseException."""

    async def work():
        asyncio.current_task().cancel()
        await asyncio.sleep(30)

    asyncio.run(work())


def test_a_base_exception_from_run_such_as_asyncio_cancelled_fails_the_run_and_ends_it():
    class OnAsyncio(NuiAgent):
        def run(self, message, run_id, **kwargs):
            yield "working "
            cancel_own_task()

    cap = Capture(OnAsyncio())
    cap.send("harness.run", {"message": "x", "runId": "r"}, rid=3)
    seen = cap.until(reply_to(3), timeout=5)
    assert [e["type"] for e in events(seen)] == ["text", "error", "done"]
    assert events(seen, "error")[0]["error"].startswith("asyncio.exceptions.CancelledError\n")
    assert seen[-1]["result"] == {"runId": "r"}


def test_a_base_exception_from_a_hook_is_reported_and_the_run_still_ends(capsys):
    class HookOnAsyncio(NuiAgent):
        def run(self, message, run_id, **kwargs):
            yield "ok"

        def get_session_id(self, run_id):
            cancel_own_task()

    cap = Capture(HookOnAsyncio())
    cap.send("harness.run", {"message": "x", "runId": "r"}, rid=4)
    seen = cap.until(reply_to(4), timeout=5)
    assert [e["type"] for e in events(seen)] == ["text", "done"]
    assert "get_session_id raised CancelledError" in capsys.readouterr().err
