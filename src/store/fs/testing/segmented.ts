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

/**
 * 800k deltas: 40 completed turns (each with its prompt when `prompted`) of 20 commits of 1,000 deltas each. A few
 * MiB on disk, hundreds of MiB as events: for the tests that read such a log in a small heap.
 */
export async function manyDeltas(
  log: { append(events: NewEvent[]): Promise<unknown> },
  prompted: boolean,
): Promise<void> {
  for (let t = 0; t < 40; t++) {
    const turn = `t${t}`;
    await log.append([
      ...(prompted ? [{ type: "user.prompt", turn, data: { text: `prompt ${t}` } } as NewEvent] : []),
      { type: "turn.started", turn, data: {} },
    ]);
    for (let b = 0; b < 20; b++) {
      const texts = Array.from({ length: 1000 }, (_, i) => `word${i} `);
      await log.append(texts.map((text) => ({ type: "assistant.delta", turn, data: { text } }) as NewEvent));
    }
    await log.append([
      { type: "assistant.message", turn, data: { text: "all" } },
      { type: "turn.settled", turn, data: { status: "completed" } },
    ]);
  }
}
