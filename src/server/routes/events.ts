// GET /v1/sessions/{id}/events: the session's events as Server-Sent Events, from the durable log. `id:` is the
// seq; Last-Event-ID (or ?after=) replays what came after it, then the stream tails live events.
// Last-Event-ID wins over ?after=: an EventSource reconnects with the URL it opened (?after= the seq it
// started from) plus the id of the last event it got, so only the header says what the client has.
import type { ServerResponse } from "node:http";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { ENDPOINTS } from "../../protocol/endpoints.js";
import type { ControlLeases } from "../control.js";
import type { SessionService } from "../sessions.js";
import type { TickFlusher } from "../sse/flusher.js";
import type { FeedHub } from "../sse/hub.js";
import { ChunkFrames, ResponseSink } from "../sse/sink.js";
import { type SseLimits, SseStream } from "../sse/stream.js";
import type { Watchers } from "../sse/watchers.js";
import { DATA_HEADERS } from "../static.js";
import type { RouteDef } from "./route.js";
import { refusePastEnd, seqParam } from "./sessions.js";

export interface EventRouteParts {
  sessions: SessionService;
  hub: FeedHub;
  leases: ControlLeases;
  flusher: TickFlusher;
  watchers: Watchers;
  limits: SseLimits;
  /** A message as a client may see it (a failed stream's last comment). */
  shown?: (text: string) => string;
}

const HEADERS = {
  ...DATA_HEADERS,
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-store, no-transform",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

/**
 * The cursor to replay after, and what named it: Last-Event-ID when the client sent one, else ?after=, else 0.
 * Both are checked.
 */
function resumeSeq(
  lastEventId: string | undefined,
  after: string | undefined,
): { seq: number; name: string } {
  const fromQuery = seqParam(after, "after");
  if (lastEventId) return { seq: seqParam(lastEventId, "Last-Event-ID"), name: "Last-Event-ID" };
  return { seq: fromQuery, name: "after" };
}

export function eventRoute(parts: EventRouteParts): RouteDef {
  // Shared by the route's streams: watchers written to in a row with the same batch frame it once.
  const frames = new ChunkFrames();
  return {
    ...ENDPOINTS.events,
    handle: async (ctx) => {
      const id = ctx.params.id!;
      const cursor = resumeSeq(ctx.header("last-event-id"), ctx.query("after"));
      const after = cursor.seq;
      const live = await parts.sessions.forWatching(ctx.caller, id); // 404 before any header is sent
      // And 400 for a cursor past the end: the stream would wait without a word until the log reached it.
      if (after > 0) {
        const last = live ? live.log.lastSeq : (await parts.sessions.seqBounds(id)).last;
        refusePastEnd(id, after, last, cursor.name);
      }
      parts.watchers.roomFor(ctx.caller.tenant); // and 429: nothing is awaited from here to add()
      // Hono answers HEAD with the GET route's Response, body dropped: a head written here would be written twice.
      if (ctx.request.method === "HEAD") return new Response(null, { headers: HEADERS });
      const res = ctx.env.outgoing as ServerResponse;
      res.writeHead(200, HEADERS);
      res.write("retry: 1000\n: connected\n\n");
      let release = () => {};
      const sink = new ResponseSink(res, frames);
      const stream = new SseStream(
        sink,
        parts.hub,
        id,
        after,
        parts.flusher,
        parts.limits,
        (reason) => {
          forget(reason);
          release();
        },
        parts.shown,
      );
      const forget = parts.watchers.add(stream, ctx.caller.tenant);
      if (ctx.caller.client && ctx.caller.role === "controller") {
        release = parts.leases.streamOpened(id, ctx.caller.client);
      }
      if (res.destroyed) stream.close("client");
      else void stream.start();
      return RESPONSE_ALREADY_SENT;
    },
  };
}
