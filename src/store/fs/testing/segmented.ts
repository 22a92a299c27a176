// A log written the way the segment tests need it: a permission request made first and never answered, then
// completed turns streamed one delta per commit, so a small segment size rolls it into several segments.
import type { NewEvent, SessionEvent } from "../../../protocol/events.js";
import type { JsonlEventLog } from "../jsonl-log.js";

export const pendingRequest: NewEvent = {
  type: "permission.requested",
  turn: "q",
  data: { id: "p1", tool: "bash" } as never,
};

/** A completed turn of `n` deltas, committed as a model streams them (one commit per delta). */
export async function streamedTurn(log: JsonlEventLog, id: string, n: number): Promise<SessionEvent[]> {
  const out = [
    ...(await log.append([
      { type: "user.prompt", turn: id, data: { text: `prompt ${id}` } },
      { type: "turn.started", turn: id, data: {} },
    ])),
  ];
  const texts: string[] = [];
  for (let i = 0; i < n; i++) {
    texts.push(`word${i} `);
    out.push(...(await log.append([{ type: "assistant.delta", turn: id, data: { text: texts.at(-1)! } }])));
  }
  out.push(
    ...(await log.append([
      { type: "assistant.message", turn: id, data: { text: texts.join("") } } as NewEvent,
      { type: "turn.settled", turn: id, data: { status: "completed" } },
    ])),
  );
  return out;
}

/** The request, then 8 turns of 40 deltas; closes the log and returns every event it was given back. */
export async function writeSegmented(log: JsonlEventLog): Promise<SessionEvent[]> {
  const all = [...(await log.append([{ type: "turn.started", turn: "q", data: {} }, pendingRequest]))];
  for (let t = 0; t < 8; t++) all.push(...(await streamedTurn(log, `t${t}`, 40)));
  await log.close();
  return all;
}
