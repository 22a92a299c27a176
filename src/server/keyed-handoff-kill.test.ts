// A keyed handoff across a real crash: a child process hands a session off under an Idempotency-Key and is
// killed (SIGKILL) between the handoff's steps: after the new session's record (which keeps the key) is written,
// while the seeder writes its native state; or once the handoff is made, before its answer reached anyone. The
// client's retry under the key must get a whole session either way: made again from a clean directory in the
// first case (never the half-seeded one), the same session, not made twice, in the second.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, expect, it } from "vitest";
import { bodyDigest } from "../core/command-keys.js";
import type { Seeder } from "../core/seed-messages.js";
import { makeBrain, type TestBrain } from "../testing/brain.js";
import { scriptChild } from "../testing/processes.js";
import { KeyedCreates, keyedSessionId, removeHalfMade } from "./keyed-creates.js";

let t: TestBrain | undefined;

afterEach(async () => {
  await t?.cleanup();
});

const dist = (module: string) =>
  JSON.stringify(pathToFileURL(path.join(import.meta.dirname, "../../dist/src", module)).href);

/** The seeder of the test's echo family: the whole transcript, in one file of the new session's native dir. */
const wholeSeeder: Seeder = async ({ dir, transcript }) => {
  writeFileSync(path.join(dir, "seeded.json"), JSON.stringify(transcript));
};

/**
 * The child: the first handoff on the same home. At "seeding" its seeder writes part of the native state and
 * never returns; at "made" the handoff completes and the child stays, its answer never sent.
 */
function childScript(home: string, source: string, made: object, at: "seeding" | "made"): string {
  return `import { writeFileSync, writeSync } from "node:fs";
    const { makeBrain } = await import(${dist("testing/brain.js")});
    setInterval(() => {}, 60_000);
    const seeder = async ({ dir, transcript }) => {
      if (${JSON.stringify(at)} === "seeding") {
        writeFileSync(dir + "/partial.json", "{");
        writeSync(1, "seeding\\n");
        return new Promise(() => {});
      }
      writeFileSync(dir + "/seeded.json", JSON.stringify(transcript));
    };
    const { brain } = makeBrain({ home: ${JSON.stringify(home)}, seeders: { echo: seeder } });
    await brain.handoff(${JSON.stringify(source)}, { to: "echo", made: ${JSON.stringify(made)} });
    writeSync(1, "made\\n");`;
}

it.each(["seeding", "made"] as const)(
  "finishes a keyed handoff on its retry when the first was killed at %s",
  async (at) => {
    t = makeBrain({ seeders: { echo: wholeSeeder } });
    const source = await t.brain.create({ harness: "echo" });
    await (await source.prompt("remember KIWI")).settled;
    await t.brain.closeSession(source.id);
    const body = { to: "echo" };
    const request = { tenant: "default", command: "handoff", source: source.id, key: "h1", body } as const;
    const id = keyedSessionId("default", "handoff", source.id, "h1");
    const sent = bodyDigest(["handoff", source.id, body]);

    const child = scriptChild(childScript(t.home, source.id, { id, idempotency: { key: "h1", sent } }, at));
    try {
      await expect.poll(child.out, { timeout: 60_000 }).toContain(at);
    } finally {
      await child.kill();
    }
    expect((await t.brain.record(id)).idempotency).toEqual({ key: "h1", sent });
    const native = t.store.paths(id).native;
    // Where the child was killed: mid-seeding (part of the native state, no first event) or made whole.
    expect(await t.brain.lastSeq(id)).toBe(at === "made" ? 1 : 0);
    expect(readdirSync(native)).toEqual([at === "made" ? "seeded.json" : "partial.json"]);

    const brain = t.brain;
    let makes = 0;
    const creates = new KeyedCreates(
      (sid) => brain.record(sid).catch(() => undefined),
      undefined,
      (sid) => removeHalfMade(brain, sid),
    );
    const retried = await creates.run(request, (made) => {
      makes++;
      return brain.handoff(source.id, { to: "echo", made });
    });
    expect([retried, makes]).toEqual([id, at === "seeding" ? 1 : 0]);
    const events = await brain.events(id);
    expect(events.filter((e) => e.type === "session.opened")).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: "session.opened",
      data: { handoff_from: { session: source.id } },
    });
    // The native state is one whole seeding: nothing of the killed attempt's part left beside it.
    expect(readdirSync(native)).toEqual(["seeded.json"]);
    expect(readFileSync(path.join(native, "seeded.json"), "utf8")).toContain("KIWI");
    expect((await brain.record(id)).seeded).toMatchObject({ how: "native" });
    // Made now: a retry gets it, making nothing again.
    expect(await creates.run(request, () => Promise.reject(new Error("made again")))).toBe(id);
  },
);
