// One event's log line after its `{"seq":N,` (the seq is given at commit time). An assistant.delta whose text the
// fast frame decoder found verbatim in its frame (nothing in it needs escaping) is written as it came rather than
// serialised a second time.
import type { NewEvent } from "../../protocol/events.js";
import { verbatimDataJson } from "../../protocol/fast-frames.js";

/** Throws (as JSON.stringify does) when the event holds a value JSON cannot carry. */
export function eventLineTail(ts: string, session: string, e: NewEvent): string {
  const raw = verbatimDataJson(e.data);
  if (raw === undefined) {
    return JSON.stringify({ ts, session, turn: e.turn, type: e.type, data: e.data }).slice(1);
  }
  // ts is an ISO date and type an event name: neither needs escaping. The field order is JSON.stringify's above.
  const turn = e.turn === undefined ? "" : `"turn":${JSON.stringify(e.turn)},`;
  return `"ts":"${ts}","session":${JSON.stringify(session)},${turn}"type":"${e.type}","data":${raw}}`;
}
