// Handoff and rebuild through Brain's log, on in-process harnesses (fast): the api harness seeded natively, the
// echo runner (a family Brain cannot seed) given the history as a marked summary. The real CLIs' pairs are in
// src/testing/cli-handoff.test.ts.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONVERSATION_FILE } from "../harnesses/api/conversation.js";
import { apiTestBed } from "../harnesses/api/testing/bed.js";
import { echoFactory, events, makeBrain, textOf } from "../testing/brain.js";

const bed = apiTestBed();
const brain = (home?: string) => bed.brain({ factories: [echoFactory()], ...(home ? { home } : {}) });

/** An api session with a tool turn and a text turn: every kind of item a history must carry. */
async function apiConversation() {
  const session = await brain().brain.create({
    harness: "api",
    config: { model: "anthropic:fake-model", tools: ["echo"] },
  });
  bed.fake.script([
    {
      text: "Calling echo.",
      toolCalls: [{ id: "toolu_1", name: "echo", arguments: { value: "PAPAYA-42" } }],
    },
    { text: "echo said PAPAYA-42" },
    { text: "second answer" },
  ]);
  expect((await (await session.prompt("first: echo something")).settled).status).toBe("completed");
  expect((await (await session.prompt("second: and then?")).settled).status).toBe("completed");
  return session;
}

const EARLIER = [
  "first: echo something",
  "Calling echo.",
  "PAPAYA-42",
  "echo said PAPAYA-42",
  "second: and then?",
  "second answer",
];

function expectCarries(body: unknown) {
  const sent = JSON.stringify(body);
  for (const text of EARLIER) expect(sent).toContain(text);
}

describe("rebuild", () => {
  it("rewrites a lost api conversation from the log; the next request carries the whole history", async () => {
    const session = await apiConversation();
    const native = bed.current.store.paths(session.id).native;
    await bed.current.brain.close();
    rmSync(join(native, CONVERSATION_FILE));
    const again = brain(bed.current.home);
    const failed = await (await (await again.brain.session(session.id)).prompt("third")).settled;
    expect(failed.error?.message).toMatch(/conversation file .* is missing/);
    const { seeded, aside } = await again.brain.rebuild(session.id);
    expect(seeded.how).toBe("native");
    expect(existsSync(aside)).toBe(true);
    const reopened = await again.brain.session(session.id);
    bed.fake.script([{ text: "third answer" }]);
    const before = bed.fake.requests.length;
    expect((await (await reopened.prompt("third")).settled).status).toBe("completed");
    const request = bed.fake.requests[before]!;
    expectCarries(request.body);
    // The tool call went back as a call with its result, not as text: the same family made it.
    expect(JSON.stringify(request.body)).toContain('"tool_use"');
    expect((await events(reopened)).some((e) => e.type === "session.recovered")).toBe(true);
    expect((await again.brain.record(session.id)).seeded).toMatchObject({ how: "native" });
  });
});

describe("rebuilds at once", () => {
  it("refuse the second, and leave the session open to its next prompt", async () => {
    const { brain: b } = brain();
    const session = await b.create({ harness: "echo" });
    await (await session.prompt("first")).settled;
    const both = await Promise.allSettled([b.rebuild(session.id), b.rebuild(session.id)]);
    expect(both.map((r) => r.status)).toEqual(["fulfilled", "rejected"]);
    expect((both[1] as PromiseRejectedResult).reason).toMatchObject({
      code: "conflict",
      message: `session ${session.id} is being rebuilt already: wait for that to end, then ask again if need be`,
    });
    const dir = bed.current.store.paths(session.id).dir;
    expect(readdirSync(dir).filter((n) => n.startsWith("native-before-rebuild-"))).toHaveLength(1);
    // Each closes the session and opens it again: neither may forget the other's open, which holds the log's lock.
    const turn = await (await b.session(session.id)).prompt("second");
    expect((await turn.settled).status).toBe("completed");
  });
});

describe("rebuilds one after another", () => {
  it("keep one before-rebuild folder, the original native state; each later one removes the state it replaced", async () => {
    const { brain: b } = brain();
    const session = await b.create({ harness: "echo" });
    await (await session.prompt("first")).settled;
    const { dir, native } = bed.current.store.paths(session.id);
    writeFileSync(join(native, "original.txt"), "the harness's own state");
    const asides = [];
    for (const n of [1, 2, 3]) {
      asides.push((await b.rebuild(session.id)).aside);
      // What the harness writes after a rebuild is a state the log can make again.
      writeFileSync(join(native, `rebuilt-${n}.txt`), `state after rebuild ${n}`);
    }
    const kept = readdirSync(dir).filter((n) => n.startsWith("native-before-rebuild-"));
    expect(kept).toHaveLength(1);
    expect(readFileSync(join(dir, kept[0]!, "original.txt"), "utf8")).toBe("the harness's own state");
    expect(readdirSync(join(dir, kept[0]!)).filter((n) => n.startsWith("rebuilt-"))).toEqual([]);
    expect(asides.map((aside) => basename(aside))).toEqual([kept[0], kept[0], kept[0]]);
    expect(readdirSync(dir)).not.toContain("native-being-rebuilt");
    const now = readdirSync(native);
    expect(now).toContain("rebuilt-3.txt");
    for (const gone of ["original.txt", "rebuilt-1.txt", "rebuilt-2.txt"]) expect(now).not.toContain(gone);
    expect((await (await (await b.session(session.id)).prompt("after")).settled).status).toBe("completed");
  });
});

describe("a rebuild under way", () => {
  it("refuses a prompt and a checkpoint, naming the rebuild; the session takes both once it ends", async () => {
    let entered!: () => void;
    const seeding = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The native dir is half rewritten while the seeder runs: nothing may run a turn on it or copy it meanwhile.
    const { brain } = bed.use(
      makeBrain({
        seeders: {
          echo: async ({ dir }) => {
            entered();
            await held;
            // What the echo runner's check of its history looks for: the last prompt, in a file of its dir.
            writeFileSync(join(dir, "seeded.txt"), "hello");
          },
        },
      }),
    );
    const session = await brain.create({ harness: "echo", config: {} });
    expect((await (await session.prompt("hello")).settled).status).toBe("completed");
    const rebuilding = brain.rebuild(session.id);
    await seeding;
    const open = await brain.session(session.id);
    const refusal = {
      code: "conflict",
      message: `session ${session.id} is being rebuilt, which keeps prompts and checkpoints out: ask again once it ends`,
    };
    await expect(open.prompt("now?")).rejects.toMatchObject(refusal);
    await expect(open.checkpoint()).rejects.toMatchObject(refusal);
    release();
    await rebuilding;
    const after = await brain.session(session.id);
    expect((await (await after.prompt("now")).settled).status).toBe("completed");
    await after.checkpoint();
    const types = (await events(after)).map((e) => e.type);
    // Only the turns before the rebuild and after its event ran: none on the half-written dir.
    expect(types.filter((type) => type === "turn.started")).toHaveLength(2);
    expect(types.indexOf("session.recovered")).toBeLessThan(types.lastIndexOf("turn.started"));
    expect(types.filter((type) => type === "checkpoint.created")).toHaveLength(1);
  });
});

describe("handoff", () => {
  it("api → api: a new linked session whose first request carries everything; the original is untouched", async () => {
    const source = await apiConversation();
    const lastSeq = source.log.lastSeq;
    const moved = await bed.current.brain.handoff(source.id, { to: "api" });
    const record = await bed.current.brain.record(moved.id);
    expect(record.handoff_from).toEqual({ session: source.id, seq: lastSeq });
    expect((await events(moved))[0]?.data).toMatchObject({ handoff_from: { session: source.id } });
    bed.fake.script([{ text: "continued" }]);
    const before = bed.fake.requests.length;
    expect((await (await moved.prompt("third")).settled).status).toBe("completed");
    expectCarries(bed.fake.requests[before]!.body);
    expect(source.log.lastSeq).toBe(lastSeq);
  });

  it("api → api on another provider: call ids it would refuse go as ids it takes, call and result alike", async () => {
    const source = await brain().brain.create({
      harness: "api",
      config: { model: "openai-chat:kimi-k2", tools: ["echo"] },
    });
    // Kimi's ids; Anthropic takes only ^[a-zA-Z0-9_-]+$ and refuses every request holding another.
    bed.fake.script([
      {
        toolCalls: [
          { id: "functions.echo:0", name: "echo", arguments: { value: "a" } },
          { id: "functions_echo_0", name: "echo", arguments: { value: "b" } },
        ],
      },
      { text: "echoed" },
    ]);
    await (await source.prompt("echo twice")).settled;
    const moved = await bed.current.brain.handoff(source.id, { to: "api", model: "anthropic:claude" });
    bed.fake.script([{ text: "on anthropic" }]);
    expect((await (await moved.prompt("next")).settled).status).toBe("completed");
    const [, call, results] = bed.fake.requests.at(-1)!.body.messages;
    const used = call.content.map((part: { id: string }) => part.id);
    expect(used.every((id: string) => /^[a-zA-Z0-9_-]+$/.test(id))).toBe(true);
    expect(new Set(used).size).toBe(2);
    expect(results.content.map((part: { tool_use_id: string }) => part.tool_use_id)).toEqual(used);
    // An id a provider takes stays as it was.
    expect(used[1]).toBe("functions_echo_0");
  });

  it("api → a family Brain cannot seed: the history goes as a marked summary in the first prompt only", async () => {
    const source = await apiConversation();
    const moved = await bed.current.brain.handoff(source.id, { to: "echo" });
    expect((await bed.current.brain.record(moved.id)).seeded).toEqual({ how: "summary", seq: 0 });
    const first = await moved.prompt("third");
    expect((await first.settled).status).toBe("completed");
    const echoed = textOf(await events(moved), first.turn);
    expect(echoed).toMatch(/^.*\[Conversation history, carried over from an earlier session/s);
    for (const text of EARLIER) expect(echoed).toContain(text);
    expect(echoed).toContain("Assistant called tool echo with");
    const second = await moved.prompt("fourth");
    await second.settled;
    expect(textOf(await events(moved), second.turn)).not.toContain("Conversation history");
  });

  it("a fork of a summary-seeded session checkpointed before its first turn carries the summary on", async () => {
    const source = await apiConversation();
    const moved = await bed.current.brain.handoff(source.id, { to: "echo" });
    await moved.checkpoint();
    const fork = await bed.current.brain.fork(moved.id);
    const first = await fork.prompt("third");
    expect((await first.settled).status).toBe("completed");
    const echoed = textOf(await events(fork), first.turn);
    expect(echoed).toContain("[Conversation history, carried over from an earlier session");
    for (const text of EARLIER) expect(echoed).toContain(text);
  });

  it("a handed-off session checkpoints and forks like any other: the fork's first request has it all", async () => {
    const source = await apiConversation();
    const moved = await bed.current.brain.handoff(source.id, { to: "api" });
    bed.fake.script([{ text: "third answer" }]);
    expect((await (await moved.prompt("third")).settled).status).toBe("completed");
    await moved.checkpoint();
    const fork = await bed.current.brain.fork(moved.id);
    await bed.current.brain.close();
    const again = brain(bed.current.home);
    const reopened = await again.brain.session(fork.id);
    bed.fake.script([{ text: "fourth answer" }]);
    const before = bed.fake.requests.length;
    expect((await (await reopened.prompt("fourth")).settled).status).toBe("completed");
    expectCarries(bed.fake.requests[before]!.body);
    expect(JSON.stringify(bed.fake.requests[before]!.body)).toContain("third answer");
  });

  it("refuses an unknown harness, naming the known ones", async () => {
    const source = await apiConversation();
    await expect(bed.current.brain.handoff(source.id, { to: "nope" })).rejects.toThrow(
      /unknown harness "nope"/,
    );
  });
});

describe("a seeding that fails", () => {
  /** A Brain whose echo seeder fails as a full disk would. */
  const failingSeeder = () =>
    bed.use(
      makeBrain({
        seeders: {
          echo: async () => {
            throw new Error("ENOSPC: no space left on device");
          },
        },
      }),
    );

  it("rebuild: puts the old native files back, and the session goes on", async () => {
    const { brain, store } = failingSeeder();
    const session = await brain.create({ harness: "echo", config: {} });
    expect((await (await session.prompt("hello")).settled).status).toBe("completed");
    const native = store.paths(session.id).native;
    const before = readdirSync(native);
    await expect(brain.rebuild(session.id)).rejects.toThrow(/ENOSPC/);
    expect(readdirSync(native)).toEqual(before);
    const again = await brain.session(session.id);
    expect((await (await again.prompt("still there?")).settled).status).toBe("completed");
  });

  it("handoff: lists no half-made session, and the source goes on", async () => {
    const { brain } = failingSeeder();
    const source = await brain.create({ harness: "echo", config: {} });
    expect((await (await source.prompt("hello")).settled).status).toBe("completed");
    await expect(brain.handoff(source.id, { to: "echo" })).rejects.toThrow(/ENOSPC/);
    expect((await brain.list()).map((r) => r.id)).toEqual([source.id]);
    expect((await (await source.prompt("still there?")).settled).status).toBe("completed");
  });
});
