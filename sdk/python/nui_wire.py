"""
The wire as Brain reads it, for the Python SDK's hosts and its HITL client: lines of JSON-RPC within Brain's 4 MiB
cap, read as Brain's reader splits and decodes them, and JSON written as JavaScript's JSON.stringify writes it.
The shared wire fixtures (src/testing/fixtures/wire in Brain) hold both SDKs to the same lines.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any, Dict, Generator, Iterable, List, Optional

# Brain reads a host's lines up to 4 MiB and ends a host that writes a longer one, with every session it serves.
# So long text goes in pieces of this many UTF-16 code units, as JavaScript counts a string's length: json.dumps
# escapes each to at most 6 bytes (an astral character is two, a surrogate pair). Counted so, not in Python's code
# points, the pieces are those Brain's TypeScript SDK sends for the same text (MAX_DELTA_CHARS in sdk/ts/turn.ts;
# the shared wire fixtures hold both to it). An error message or tool result is cut short to one piece, saying so
# (what a person reads of either is its start); any other event too long for a line is refused to the code that
# emitted it.
MAX_TEXT_UNITS = 512 * 1024
# What an event's own JSON may take of a line; the rest is room for the JSON-RPC envelope and the run id.
MAX_EVENT_BYTES = 4 * 1024 * 1024 - 64 * 1024

# Brain's line cap (MAX_FRAME in Brain's src/protocol/ndjson.ts): Brain writes no longer line, and reads none.
MAX_LINE_BYTES = 4 * 1024 * 1024


def _fitted(event: Dict[str, Any]) -> Dict[str, Any]:
    """The event as it may be sent: itself, or an error or tool result cut short. Raises ValueError otherwise."""
    size = len(json.dumps(event))  # json.dumps writes ASCII: characters are bytes
    if size <= MAX_EVENT_BYTES:
        return event
    kind = event.get("type")
    short: Optional[Dict[str, Any]] = None
    if kind == "error" and isinstance(event.get("error"), str):
        short = {**event, "error": _cut(event["error"], "error message", size)}
    elif kind == "tool_result":
        content = event.get("content")
        text = content if isinstance(content, str) else json.dumps(content)
        short = {**event, "content": _cut(text, "tool result", size)}
    if short is not None and len(json.dumps(short)) <= MAX_EVENT_BYTES:
        return short
    raise ValueError(f'a "{kind}" event of {size} bytes is over the 4 MiB line Brain reads from a host; it was not sent')


def protocol_stdout() -> Any:
    """The stream protocol lines go to: a file descriptor of their own, with fd 1 pointed at stderr. Swapping
    sys.stdout does not reach a child process the agent starts (a tool, `git status`) or C code: they write to fd 1,
    and what they wrote without its newline ran into the next protocol line, which Brain then dropped as not JSON.

    So did what the agent printed before serving without a newline (`print("x", end="")` at import). What Python
    still buffers of it is flushed once fd 1 is stderr, so it goes there; what reached the pipe already (Brain
    starts hosts with PYTHONUNBUFFERED=1, so every print does at once; a child's output) is ended by a newline the
    protocol stream starts with: a line of its own, which Brain warns about (not JSON-RPC, not fatal), or a blank
    line, which it skips, and the first protocol line arrives whole."""
    try:
        fd = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # no fd 1 or 2 to move: sys.stdout is all there is
        sys.stdout.flush()
        out = sys.stdout
    else:
        sys.stdout.flush()
        out = open(fd, "w", encoding="utf-8", newline="\n")
    out.write("\n")
    out.flush()
    return out


class LineTooLong(ValueError):
    """A line passed MAX_LINE_BYTES: what follows may be the rest of it, so the stream is read no further."""


def read_lines(chunks: Iterable[bytes]) -> Generator[str, None, None]:
    """The lines of a byte stream as Brain reads them: split on b"\\n" only (not on U+2028 or a lone \\r), each
    decoded once whole as UTF-8 with U+FFFD for bad bytes; a last line without its newline is not a line. Raises
    LineTooLong as soon as a line passes the cap, before it is held whole."""
    held: list = []
    size = 0
    for chunk in chunks:
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl == -1:
                break
            if size + nl - start > MAX_LINE_BYTES:
                raise LineTooLong(f"a line of more than {MAX_LINE_BYTES} bytes (at least {size + nl - start})")
            held.append(chunk[start:nl])
            line = b"".join(held).decode("utf-8", "replace")
            held, size = [], 0
            yield line
            start = nl + 1
        if start < len(chunk):
            held.append(chunk[start:])
            size += len(chunk) - start
            if size > MAX_LINE_BYTES:
                raise LineTooLong(f"a line of more than {MAX_LINE_BYTES} bytes (at least {size})")


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def parse_line(line: str) -> Any:
    """The JSON value of a line, or None when it is not JSON as Brain reads it: no NaN or Infinity (Python's json
    takes them), and only JSON's own whitespace around it (str.strip would take U+00A0 or a vertical tab too)."""
    try:
        return json.loads(line, parse_constant=_not_json)
    except (ValueError, RecursionError):  # nested deeper than json takes is not JSON here either
        return None


def _finite(value: Any) -> Any:
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def dumps(msg: Any) -> str:
    """A message as one line Brain can read: json.dumps, but NaN and Infinity written as null (as JSON.stringify
    writes them, and Brain's SDK). json.dumps' own NaN is no JSON: Brain would drop the whole line."""
    try:
        return json.dumps(msg, allow_nan=False)
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
        return json.dumps(_finite(msg), allow_nan=False)


def text_pieces(text: str, units: int = MAX_TEXT_UNITS) -> List[str]:
    """The text in pieces of at most `units` UTF-16 code units, never between the halves of a surrogate pair: as
    the TypeScript SDK's splitText cuts it."""
    if len(text) * 2 <= units:  # at most two units a character: short enough however it is counted
        return [text]
    data = text.encode("utf-16-le", "surrogatepass")
    pieces = []
    at = 0
    while at < len(data):
        end = min(at + 2 * units, len(data))
        # Little-endian: a unit's high byte is its second. A high surrogate last waits for its pair in the next piece.
        if end < len(data) and 0xD8 <= data[end - 1] <= 0xDB:
            end -= 2
        pieces.append(data[at:end].decode("utf-16-le", "surrogatepass"))
        at = end
    return pieces


def _cut(text: str, what: str, size: int) -> str:
    return f"{text_pieces(text)[0]}\n… [cut short: the whole {what} took {size} bytes, over the 4 MiB line Brain reads from a host]"


# The SDK's own modules: their frames in a run's traceback are the SDK at work, no help to the agent's author.
_SDK_DIR = os.path.dirname(os.path.realpath(__file__))
_SDK_FILES = {
    os.path.join(_SDK_DIR, name)
    for name in ("nui_agent_stdio.py", "nui_agent.py", "nui_agent_hitl.py", "nui_hitl.py", "nui_wire.py")
}
# A person reads the failed turn's error, not the host's stderr: the frames nearest the raise say where it went wrong.
FAILURE_FRAMES = 3


def failure(exc: BaseException) -> str:
    """What a run raised, for its error event: the exception as Python's traceback ends it ("KeyError: 'missing'",
    where its message alone said "'missing'") and the last frames of the agent's code that raised it. Never raises
    itself (an exception whose __str__ fails is still named): the run must go on to send done and its reply."""
    try:
        summary = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        frames = [
            frame
            for frame in traceback.extract_tb(exc.__traceback__)
            if os.path.realpath(frame.filename) not in _SDK_FILES
        ][-FAILURE_FRAMES:]
        if not frames:
            return summary
        tail = "".join(traceback.format_list(frames)).rstrip()
        return f"{summary}\nTraceback (its last {len(frames)} frames outside the SDK, most recent call last):\n{tail}"
    except Exception:  # a name is better than a run that never ends
        return exc.__class__.__name__
