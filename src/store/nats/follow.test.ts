// A follow of a session's log (another node writes it) that fails while followed is said, and made again from
// the last seq it delivered: its watchers get every later event, none twice. It used to end without a word, and
// the watchers of that session on this node got no event of it again.
import type { KV } from "@nats-io/kv";
import { describe, expect, it } from "vitest";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { useNatsCluster } from "../../testing/nats-bed.js";
import type { TestNode } from "../../testing/nats-store.js";
import { NatsSessionStore } from "./session-store.js";

const delta = (text: string): NewEvent =>
  ({ type: "assistant.delta", turn: "t1", data: { text } }) as NewEvent;
const nats = useNatsCluster();

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("following a cluster session's log", () => {
  it("says so when the follow fails, and follows again from the last seq delivered", async () => {
    const [a, b] = await nats.twoNodes("follow");
    const warnings: string[] = [];
    const watcher = new NatsSessionStore(b.ctx, {
      home: b.home,
      holder: { node: "watcher" },
      warn: (message) => warnings.push(message),
    });
    await a.store.create({ harness: "process", config: { model: "m1" }, id: "f1" });
    const log = await a.store.openLog("f1");
    await log.append([delta("before")]);
    const seen: SessionEvent[] = [];
    let failOnce = true;
    const stop = await watcher.follow("f1", 0, (events) => {
      seen.push(...events);
      // A listener's throw ends the loop that reads the consumer, as a consumer the client gives up on does.
      if (failOnce) {
        failOnce = false;
        throw new Error("listener broke");
      }
    });
    try {
      await until("the first batch", () => seen.length === 1);
      await until("the warning", () => warnings.length > 0);
      expect(warnings[0]).toMatch(/following session f1's log failed after seq 1 \(listener broke\)/);
      for (let i = 0; i < 3; i++) await log.append([delta(`after ${i}`)]);
      await until("the events after the failure", () => seen.length >= 4);
      expect(seen.map((e) => [e.seq, (e.data as { text: string }).text])).toEqual([
        [1, "before"],
        [2, "after 0"],
        [3, "after 1"],
        [4, "after 2"],
      ]);
    } finally {
      stop();
      await log.close();
      await watcher.close();
    }
  }, 60_000);

  /**
   * A watcher node whose watches of session `id`'s record are the real ones, each kept so the test can end it as
   * the client ends one it gives up on; `held` makes the next watch wait until it resolves.
   */
  function watcherOf(node: TestNode, id: string) {
    const watches: { stop(): void }[] = [];
    const gate: { held?: Promise<void> } = {};
    const records = new Proxy(node.ctx.records, {
      get(target, prop) {
        if (prop === "watch") {
          return async (opts?: { key?: string }) => {
            if (opts?.key === id && gate.held) await gate.held;
            const watch = await target.watch(opts as Parameters<KV["watch"]>[0]);
            if (opts?.key === id) watches.push(watch);
            return watch;
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const warnings: string[] = [];
    const store = new NatsSessionStore(
      { ...node.ctx, records },
      { home: node.home, holder: { node: "watcher" }, warn: (message) => warnings.push(message) },
    );
    return { store, watches, gate, warnings };
  }

  for (const when of ["after it is watched again", "while it is not watched"] as const) {
    it(`says so when the watch for a delete ends, watches again, and tells of a delete made ${when}`, async () => {
      const [a, b] = await nats.twoNodes(`gone-${when === "while it is not watched" ? "down" : "up"}`);
      const { store, watches, gate, warnings } = watcherOf(b, "g1");
      await a.store.create({ harness: "process", config: { model: "m1" }, id: "g1" });
      let told = 0;
      const stop = await store.follow(
        "g1",
        0,
        () => {},
        () => told++,
      );
      try {
        expect(watches).toHaveLength(1);
        let letGo = () => {};
        if (when === "while it is not watched") gate.held = new Promise((resolve) => (letGo = resolve));
        watches[0]!.stop();
        await until("the warning", () => warnings.length > 0);
        expect(warnings[0]).toMatch(
          /watching session g1's record for its delete failed \(the watch ended\); watching it again in \d+ ms/,
        );
        if (when === "while it is not watched") {
          await a.store.remove("g1");
          letGo();
        } else {
          await until("the second watch", () => watches.length === 2);
          await a.store.remove("g1");
        }
        await until("the delete told", () => told > 0);
        expect(told).toBe(1);
      } finally {
        stop();
        await store.close();
      }
    }, 60_000);
  }
});
