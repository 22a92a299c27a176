// The feeds of sessions another node owns (cluster mode): their watchers follow the log through the store.
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../protocol/events.js";
import { FeedHub, type FeedListener } from "./hub.js";

const event = (seq: number) =>
  ({
    v: 1,
    seq,
    ts: "2026-12-04T00:00:00.000Z",
    session: "s",
    type: "user.prompt",
    data: { text: "hi" },
  }) as SessionEvent;

describe("FeedHub following a session another node owns", () => {
  it("follows it again when starting the follow failed (NATS between leaders), and the watchers catch up", async () => {
    let tries = 0;
    let deliver: ((batch: SessionEvent[]) => void) | undefined;
    const hub = new FeedHub(
      async () => [],
      async (_session, listener) => {
        tries += 1;
        if (tries === 1) throw new Error("TIMEOUT");
        deliver = listener;
        return () => {};
      },
    );
    let attached = 0;
    const got: number[] = [];
    const listener: FeedListener = {
      events: (batch) => got.push(...batch.map((e) => e.seq)),
      attached: () => {
        attached += 1;
      },
      ended: () => {},
    };
    const stop = hub.listen("s", listener);
    for (let i = 0; i < 200 && deliver === undefined; i++) await new Promise((r) => setTimeout(r, 25));
    expect(deliver).toBeDefined();
    expect(attached).toBe(1);
    deliver!([event(1)]);
    expect(got).toEqual([1]);
    stop();
  });
});
