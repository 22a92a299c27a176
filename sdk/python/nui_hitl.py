"""
nui-compatible human-in-the-loop client: the REST API under NUI_API_URL.

Same functions and behaviour as nui's harness-sdk/nui_hitl.py, so extensions written for nui run unchanged:
create a request (POST /api/hitl/requests), then block until it is answered
(GET /api/hitl/requests/<id>/wait). Under Brain, NUI_API_URL points at Brain's loopback server, which turns
each request into a Brain question or permission request that any Brain client can answer.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, List, Optional

# The SDK's one JSON writer: NaN and Infinity go as null (json.dumps' own spelling is no JSON, and Brain's server
# would refuse the whole request), as the shared wire fixtures say.
from nui_wire import dumps

DEFAULT_API_URL = "http://127.0.0.1:8080"


def resolve_nui_session_id(session_id: str = "", ctx: Optional[Dict[str, Any]] = None) -> str:
    """The session id: explicit, else ctx["nuiSessionId"], else $NUI_SESSION_ID, else ctx["sessionId"]."""
    if str(session_id or "").strip():
        return str(session_id).strip()
    ctx = ctx or {}
    from_ctx = str(ctx.get("nuiSessionId") or "").strip()
    if from_ctx:
        return from_ctx
    from_env = os.environ.get("NUI_SESSION_ID", "").strip()
    if from_env:
        return from_env
    return str(ctx.get("sessionId") or "").strip()


def resolve_nui_run_id(run_id: str = "", ctx: Optional[Dict[str, Any]] = None) -> str:
    """The run id: explicit, else ctx["runId"], else $NUI_RUN_ID."""
    if str(run_id or "").strip():
        return str(run_id).strip()
    ctx = ctx or {}
    from_ctx = str(ctx.get("runId") or "").strip()
    if from_ctx:
        return from_ctx
    return os.environ.get("NUI_RUN_ID", "").strip()


def api_url() -> str:
    """$NUI_API_URL, else $NUI_URL, else nui's default http://127.0.0.1:8080 (no trailing slash)."""
    for key in ("NUI_API_URL", "NUI_URL"):
        value = os.environ.get(key, "").strip()
        if value:
            return value.rstrip("/")
    return DEFAULT_API_URL


def _request(method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
    url = api_url() + path
    data = None
    headers = {"Accept": "application/json"}
    if body is not None:
        data = dumps(body).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req) as resp:
            raw = resp.read().decode()
            return json.loads(raw) if raw else {}
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode().strip()
        raise RuntimeError(f"HITL {method} {path} failed ({exc.code}): {detail}") from exc


def create_request(
    *,
    kind: str = "question",
    payload: Optional[Dict[str, Any]] = None,
    session_id: str = "",
    run_id: str = "",
    routing: Optional[Dict[str, Any]] = None,
    ttl_seconds: Optional[int] = None,
    request_id: str = "",
    correlation_id: str = "",
    step_name: str = "",
    ctx: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    body: Dict[str, Any] = {
        "kind": kind,
        "payload": payload or {},
        "sessionId": resolve_nui_session_id(session_id, ctx),
        "runId": resolve_nui_run_id(run_id, ctx),
    }
    if routing:
        body["routing"] = routing
    if ttl_seconds is not None:
        body["ttlSeconds"] = ttl_seconds
    if request_id:
        body["requestId"] = request_id
    if correlation_id:
        body["correlationId"] = correlation_id
    if step_name:
        body["stepName"] = step_name
    return _request("POST", "/api/hitl/requests", body)


def wait_response(request_id: str) -> Dict[str, Any]:
    return _request("GET", f"/api/hitl/requests/{urllib.parse.quote(request_id, safe='')}/wait")


def respond(
    request_id: str,
    *,
    status: str = "answered",
    answers: Optional[Dict[str, Any]] = None,
    channel: str = "nui-ui",
) -> Dict[str, Any]:
    body: Dict[str, Any] = {"status": status, "respondedBy": {"channel": channel}}
    if answers is not None:
        body["answers"] = answers
    return _request("POST", f"/api/hitl/requests/{urllib.parse.quote(request_id, safe='')}/respond", body)


def list_pending(*, session_id: str = "", run_id: str = "") -> List[Dict[str, Any]]:
    query = {"pending": "true"}
    if session_id:
        query["sessionId"] = session_id
    if run_id:
        query["runId"] = run_id
    out = _request("GET", "/api/hitl/requests?" + urllib.parse.urlencode(query))
    return out if isinstance(out, list) else []


def question_payload(questions=None, title: str = "", message: str = "") -> Dict[str, Any]:
    return {"questions": questions or [], "title": title, "message": message}


def approval_payload(
    title: str = "", message: str = "", tool_name: str = "", tool_input=None, description: str = ""
) -> Dict[str, Any]:
    return {
        "title": title,
        "message": message,
        "toolName": tool_name,
        "toolInput": tool_input or {},
        "description": description,
    }


def ask_user(
    *,
    questions: Optional[List[Dict[str, Any]]] = None,
    title: str = "",
    message: str = "",
    session_id: str = "",
    run_id: str = "",
    routing: Optional[Dict[str, Any]] = None,
    emit_event: Optional[Callable[[Dict[str, Any]], None]] = None,
    ctx: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    req = create_request(
        kind="question",
        payload=question_payload(questions, title, message),
        session_id=session_id,
        run_id=run_id,
        routing=routing,
        ctx=ctx,
    )
    if emit_event:
        emit_event(req)
    return wait_response(req["requestId"])


def request_approval(
    *,
    title: str = "",
    message: str = "",
    tool_name: str = "",
    tool_input: Optional[Dict[str, Any]] = None,
    description: str = "",
    session_id: str = "",
    run_id: str = "",
    routing: Optional[Dict[str, Any]] = None,
    emit_event: Optional[Callable[[Dict[str, Any]], None]] = None,
    ctx: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    req = create_request(
        kind="approval",
        payload=approval_payload(title, message, tool_name, tool_input, description),
        session_id=session_id,
        run_id=run_id,
        routing=routing,
        ctx=ctx,
    )
    if emit_event:
        emit_event(req)
    return wait_response(req["requestId"])
