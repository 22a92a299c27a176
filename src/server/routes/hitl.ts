// nui's HITL REST API (what NUI_API_URL promises extensions): create a request and wait for its answer, list,
// read and answer pending requests. The shapes are nui's (src/protocol/nui/hitl.ts), so nui_hitl.py works
// unchanged against the daemon.
import { HitlCreateBody, HitlRespondBody } from "../../protocol/nui/hitl.js";
import type { HitlService } from "../hitl/service.js";
import type { RouteDef } from "./route.js";

/**
 * Each route twice: under /api/hitl with the bearer header, and under /nui/{token}/api/hitl for nui's SDK, which
 * sends no header: NUI_API_URL=http://127.0.0.1:7777/nui/TOKEN makes an unchanged extension authenticate.
 */
export function hitlRoutes(hitl: HitlService): RouteDef[] {
  return ["", "/nui/{token}"].flatMap((prefix) =>
    routes(hitl).map((route) => ({ ...route, path: `${prefix}${route.path}` })),
  );
}

function routes(hitl: HitlService): RouteDef[] {
  return [
    {
      method: "POST",
      path: "/api/hitl/requests",
      tag: "hitl",
      summary:
        "nui: create a HITL request (approval → Brain permission request, question → Brain question) in the running turn",
      body: HitlCreateBody,
      status: 201,
      drive: true,
      handle: async (ctx) => hitl.create(ctx.caller, ctx.body as HitlCreateBody),
    },
    {
      method: "GET",
      path: "/api/hitl/requests",
      tag: "hitl",
      summary: "nui: the pending HITL requests (every pending Brain permission request and question)",
      query: {
        sessionId: "only this session's",
        runId: "only this turn's",
        pending: "accepted; always true",
      },
      handle: async (ctx) =>
        hitl.list(ctx.caller, {
          ...(ctx.query("sessionId") ? { sessionId: ctx.query("sessionId") } : {}),
          ...(ctx.query("runId") ? { runId: ctx.query("runId") } : {}),
        }),
    },
    {
      method: "GET",
      path: "/api/hitl/requests/{requestId}",
      tag: "hitl",
      summary: "nui: one pending HITL request",
      query: { sessionId: "the session whose request to read, when its id is pending in several" },
      handle: async (ctx) => hitl.get(ctx.caller, ctx.params.requestId!, ctx.query("sessionId")),
    },
    {
      method: "GET",
      path: "/api/hitl/requests/{requestId}/wait",
      tag: "hitl",
      summary: "nui: block until the request is answered; the response envelope",
      query: { sessionId: "the session whose request to wait for, when its id is pending in several" },
      handle: async (ctx) =>
        hitl.wait(ctx.caller, ctx.params.requestId!, ctx.request.signal, ctx.query("sessionId")),
    },
    {
      method: "POST",
      path: "/api/hitl/requests/{requestId}/respond",
      tag: "hitl",
      summary:
        "nui: answer a pending request (approval: answers.approved; question: answers.answer); 409 once answered",
      body: HitlRespondBody,
      query: { sessionId: "the session whose request to answer, when its id is pending in several" },
      drive: true,
      handle: async (ctx) =>
        hitl.respond(ctx.caller, ctx.params.requestId!, ctx.body as HitlRespondBody, ctx.query("sessionId")),
    },
    {
      method: "DELETE",
      path: "/api/hitl/requests/{requestId}",
      tag: "hitl",
      summary: "nui: cancel a pending request (a permission request is denied, a question goes unanswered)",
      query: { sessionId: "the session whose request to cancel, when its id is pending in several" },
      drive: true,
      handle: async (ctx) => {
        await hitl.respond(
          ctx.caller,
          ctx.params.requestId!,
          { status: "cancelled" },
          ctx.query("sessionId"),
        );
        return { ok: true };
      },
    },
  ];
}
