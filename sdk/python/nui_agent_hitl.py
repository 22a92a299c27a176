"""
The human-in-the-loop part of NuiAgent (nui_agent_stdio.py): ask_user() and request_approval(), over nui's REST
API when NUI_API_URL is set (nui_hitl.py), else over the protocol itself (a hitl_request event, answered by a
harness.hitl_response notification). A mixin of NuiAgent's, which supplies emit(), current_run_id(), _lock() and
_conn_of() (the connection whose run a run id is: a question waits among its run's connection's, and only an answer
read on that connection answers it).
"""

from __future__ import annotations

import os
import threading
import uuid
from typing import Any, Dict


class HitlMixin:
    def ask_user(
        self,
        *,
        questions=None,
        title: str = "",
        message: str = "",
        session_id: str = "",
        run_id: str = "",
        routing=None,
    ) -> dict:
        """Asks the person at the other end; blocks until answered. Returns nui's response envelope."""
        from nui_hitl import ask_user as rest_ask_user
        from nui_hitl import question_payload

        if self._use_rest():
            return rest_ask_user(
                questions=questions,
                title=title,
                message=message,
                session_id=session_id,
                run_id=run_id or self.current_run_id(),
                routing=routing,
                emit_event=self._emit_hitl_request,
            )
        return self._ask_over_protocol("question", question_payload(questions, title, message), run_id)

    def request_approval(
        self,
        *,
        title: str = "",
        message: str = "",
        tool_name: str = "",
        tool_input=None,
        description: str = "",
        session_id: str = "",
        run_id: str = "",
        routing=None,
    ) -> dict:
        """Asks for approval; blocks until decided. `status` is "answered" (approved) or "declined"."""
        from nui_hitl import approval_payload
        from nui_hitl import request_approval as rest_request_approval

        if self._use_rest():
            return rest_request_approval(
                title=title,
                message=message,
                tool_name=tool_name,
                tool_input=tool_input,
                description=description,
                session_id=session_id,
                run_id=run_id or self.current_run_id(),
                routing=routing,
                emit_event=self._emit_hitl_request,
            )
        payload = approval_payload(title, message, tool_name, tool_input, description)
        return self._ask_over_protocol("approval", payload, run_id)

    @staticmethod
    def _use_rest() -> bool:
        return bool(os.environ.get("NUI_API_URL", "").strip())

    def _emit_hitl_request(self, req: Dict[str, Any]) -> None:
        run_id = req.get("runId") or self.current_run_id()
        self.emit(
            {
                "type": "hitl_request",
                "requestId": req.get("requestId", ""),
                "sessionId": req.get("sessionId", ""),
                "runId": run_id,
                "kind": req.get("kind", ""),
                "payload": req.get("payload") or {},
                "status": req.get("status", ""),
                "expiresAt": req.get("expiresAt", ""),
            },
            run_id,
        )

    def _ask_over_protocol(self, kind: str, payload: Dict[str, Any], run_id: str = "") -> Dict[str, Any]:
        rid = run_id or self.current_run_id()
        request_id = str(uuid.uuid4())
        waiter = {"event": threading.Event(), "response": None, "runId": rid}
        conn = self._conn_of(rid)
        if conn is None:  # no connection runs it (or several do): the question could reach no one, or the wrong one
            return {"requestId": request_id, "status": "cancelled", "answers": {"reason": f"no run {rid!r} to ask in"}}
        with self._lock():
            conn.waiters[request_id] = waiter
        # A question that could not be sent (too long for a line) raises here: its waiter goes all the same.
        try:
            self._emit_hitl_request({"requestId": request_id, "runId": rid, "kind": kind, "payload": payload, "status": "pending"})
            waiter["event"].wait()
        finally:
            with self._lock():
                conn.waiters.pop(request_id, None)
        response = waiter["response"]
        if response is None:
            return {"requestId": request_id, "status": "cancelled", "answers": {"reason": "the run was cancelled"}}
        return response

    def _answer_hitl(self, conn, params: Dict[str, Any]) -> None:
        """An answer read on `conn` answers a question of its own runs only."""
        with self._lock():
            waiter = conn.waiters.get(params.get("requestId", ""))
        if waiter is not None:
            waiter["response"] = params.get("response") or {}
            waiter["event"].set()

    def _release_hitl(self, conn, run_id: str) -> None:
        with self._lock():
            waiters = [w for w in conn.waiters.values() if w["runId"] == run_id]
        for waiter in waiters:
            waiter["event"].set()
