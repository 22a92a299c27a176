// What a session folds from its whole log (the index of its Idempotency-Keys; its pending requests and open turns
// when its store keeps no open state, as the cluster store) is read a page at a time, never the log at once.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { makeBrain, type TestBrain } from "../testing/brain.js";
import { runInSmallHeap } from "../testing/small-heap.js";

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

const dist = (path: string) =>
  JSON.stringify(pathToFileURL(join(import.meta.dirname, "../../dist/src", path)).href);

/** A session whose log holds 40 steers of 3 MiB (120 MiB) under keys k0..k39, and a request pending. */
async function bigSession(): Promise<string> {
  t = makeBrain();
  const session = await t.brain.create({ harness: "echo" });
  const big = "x".repeat(3 << 20);
  for (let i = 0; i < 40; i++) {
    await session.log.append([{ type: "user.steer", data: { text: big, idempotency_key: `k${i}` } }]);
  }
  await session.log.append([{ type: "permission.requested", data: { id: "p1", tool: "echo" } }]);
  await t.brain.close();
  return session.id;
}

/** A session whose log holds 40 answers under keys a0..a39, each with a reason of 3 MiB (120 MiB). */
async function bigAnswers(): Promise<string> {
  t = makeBrain();
  const session = await t.brain.create({ harness: "echo" });
  const reason = "x".repeat(3 << 20);
  for (let i = 0; i < 40; i++) {
    await session.log.append([
      { type: "permission.requested", data: { id: `p${i}`, tool: "echo" } },
      {
        type: "permission.resolved",
        data: { id: `p${i}`, decision: "deny", reason, idempotency_key: `a${i}` },
      },
    ]);
  }
  await t.brain.close();
  return session.id;
}

/** Runs `body` (with `session` open) in a host with a 96 MiB heap (a daemon, in small); returns its stdout. */
function inSmallHost(id: string, body: string, store = "undefined"): string {
  const script = `const { makeBrain } = await import(${dist("testing/brain.js")});
    const { FsSessionStore } = await import(${dist("store/fs/index.js")});
    const { Brain } = await import(${dist("core/brain.js")});
    const made = makeBrain({ home: ${JSON.stringify(t.home)} });
    const store = ${store};
    const brain = store ? new Brain({ ...made.brain.options, store }) : made.brain;
    const session = await brain.session(${JSON.stringify(id)});
    ${body}
    await brain.close();`;
  return runInSmallHeap(script, 96);
}

describe("a log bigger than the heap", () => {
  it("finds a command's Idempotency-Key", async () => {
    const id = await bigSession();
    const found = "(await session.commandEvent('k39'))?.event.data ?? null";
    expect(JSON.parse(inSmallHost(id, `process.stdout.write(JSON.stringify(${found}));`))).toEqual({
      text: "",
      idempotency_key: "k39",
    });
  }, 60_000);

  it("keeps no answer's reason in the index of its keys: each stays as long as the session is open", async () => {
    const id = await bigAnswers();
    const found = "await Promise.all(Array.from({ length: 40 }, (_, i) => session.commandEvent('a' + i)))";
    const out = inSmallHost(id, `process.stdout.write(JSON.stringify((${found}).at(-1).event.data));`);
    expect(JSON.parse(out)).toEqual({ id: "p39", idempotency_key: "a39" });
  }, 60_000);

  it("opens with its pending requests from a store that keeps no open state (as the cluster store)", async () => {
    const id = await bigSession();
    // The fs store's logs without the open state they keep: the session folds the log itself.
    const store = `new (class extends FsSessionStore {
      async openLog(id) {
        const log = await super.openLog(id);
        const get = (l, k) => (k === "openState" ? undefined : typeof l[k] === "function" ? l[k].bind(l) : l[k]);
        return new Proxy(log, { get });
      }
    })(${JSON.stringify(t.home)})`;
    const pending = "session.pendingRequests().map((r) => r.id)";
    const out = inSmallHost(id, `process.stdout.write(JSON.stringify(${pending}));`, store);
    expect(JSON.parse(out)).toEqual(["p1"]);
  }, 60_000);

  it("is viewed with its pending requests from a store that keeps no tail (as the cluster store)", async () => {
    const id = await bigSession();
    const store = `new (class extends FsSessionStore {
      tail = undefined;
    })(${JSON.stringify(t.home)})`;
    const script = `const { FsSessionStore } = await import(${dist("store/fs/index.js")});
      const { pendingInStore } = await import(${dist("core/pending.js")});
      const { pending } = await pendingInStore(${store}, ${JSON.stringify(id)});
      process.stdout.write(JSON.stringify(pending.map((r) => r.id)));`;
    const stdout = runInSmallHeap(script, 96);
    expect(JSON.parse(stdout)).toEqual(["p1"]);
  }, 60_000);
});
