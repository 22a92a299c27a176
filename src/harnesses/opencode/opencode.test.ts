// The opencode harness on the real opencode CLI (node_modules/.bin/opencode serve), run in a loopback-only
// network namespace against the fake provider (Chat Completions). The server it starts inside the namespace is
// published back to the host by the sandbox launcher.
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { events, makeBrain, tempDir, textOf, waitForEvent } from "../../../test/helpers/brain.js";
import {
  agentRequests,
  answerNextPermission,
  type CliBed,
  cliBed,
  historyOf,
} from "../../../test/helpers/cli.js";
import { locateCli } from "../cli/locate.js";
import { OpencodeFactory } from "./factory.js";

// opencode's 185 MB binary can take tens of seconds to start on a loaded machine.
vi.setConfig({ testTimeout: 400_000, hookTimeout: 60_000 });

const opencode = locateCli("opencode");
let bed: CliBed | undefined;

async function start(bin?: string): Promise<CliBed> {
  bed = await cliBed((launcher) => new OpencodeFactory({ launcher, ...(bin ? { bin } : {}) }), {
    path: "/v1",
    model: "fake-model",
  });
  return bed;
}

afterEach(async () => {
  await bed?.close();
  bed = undefined;
});

describe.runIf(opencode)("opencode on the real CLI", () => {
  it("runs a turn with a shell tool call and its result, then text; interrupts; resumes after a restart", async () => {
    const b = await start();
    const session = await b.create();
    await session.start();
    writeFileSync(join(b.t.store.paths(session.id).native, "work", "marker.txt"), "x");
    const turn = await session.prompt("List the files here");
    expect(await turn.settled).toEqual({ turn: turn.turn, status: "completed" });
    const all = await events(session);
    const call = all.find((e) => e.type === "tool.call");
    expect(call?.data).toMatchObject({ name: "bash", arguments: { command: "ls -1" } });
    const result = all.find((e) => e.type === "tool.result");
    expect(result?.data).toMatchObject({
      id: (call?.data as { id: string } | undefined)?.id,
      is_error: false,
    });
    expect(JSON.stringify(result?.data)).toContain("marker.txt");
    expect(textOf(all, turn.turn)).toBe("Let me look.done");
    const last = all.filter((e) => e.type === "assistant.message").at(-1);
    expect(last?.data).toMatchObject({
      text: "done",
      stop_reason: "stop",
      usage: { input: expect.any(Number) },
    });

    const slow = await session.prompt("Talk SLOW please");
    await waitForEvent(session, (e) => e.type === "assistant.delta" && e.turn === slow.turn);
    await session.interrupt();
    expect((await slow.settled).status).toBe("interrupted");

    const t = await b.restart();
    const again = await t.brain.session(session.id);
    const before = b.sandbox.provider.requests.length;
    const next = await again.prompt("NOTOOL what did we do before?");
    expect((await next.settled).status).toBe("completed");
    expect(textOf(await events(again), next.turn)).toBe("hello from fake");
    const history = historyOf(agentRequests(b.sandbox.provider.requests.slice(before))[0]!);
    expect(history).toContain("List the files here");
    expect(history).toContain('"role":"tool"');
  });

  it("asks Brain's policy for approvals (one allowed, one denied) and queues a steer as a follow-up", async () => {
    const b = await start();
    const session = await b.create({ permissions: { tools: { bash: "ask" } } });
    const work = join(b.t.store.paths(session.id).native, "work");
    const allowed = await session.prompt("Create a file CMD[touch allowed.txt]");
    await waitForEvent(session, (e) => e.type === "permission.requested");
    await session.steer("NOTOOL and then this");
    expect(await answerNextPermission(session, "allow")).toBe("bash");
    expect((await allowed.settled).status).toBe("completed");
    expect(existsSync(join(work, "allowed.txt"))).toBe(true);
    const all = await events(session);
    expect(all.find((e) => e.type === "user.steer")?.data).toEqual({
      text: "NOTOOL and then this",
      queued: true,
    });
    expect(textOf(all, allowed.turn)).toBe("Let me look.donehello from fake");

    const denied = await session.prompt("Create a file CMD[touch denied.txt]");
    await answerNextPermission(session, "deny");
    await denied.settled;
    expect(existsSync(join(work, "denied.txt"))).toBe(false);
    const results = (await events(session)).filter((e) => e.type === "tool.result" && e.turn === denied.turn);
    expect(results[0]?.data).toMatchObject({ is_error: true });
  });

  it("restores a checkpoint into a fresh dir: full history, tools run in the new dir", async () => {
    const b = await start();
    const session = await b.create();
    await (await session.prompt("List the files here")).settled;
    await (await session.prompt("NOTOOL second turn")).settled;
    const checkpoint = await session.checkpoint();
    expect(checkpoint.files.map((f) => f.path).sort()).toEqual([
      "opencode-session.json",
      "opencode-state.json",
    ]);
    const fork = await b.t.brain.fork(session.id);
    const before = b.sandbox.provider.requests.length;
    const turn = await fork.prompt("Where are we CMD[pwd]");
    expect((await turn.settled).status).toBe("completed");
    const history = historyOf(agentRequests(b.sandbox.provider.requests.slice(before))[0]!);
    expect(history).toContain("List the files here");
    expect(history).toContain("second turn");
    const pwd = (await events(fork)).find((e) => e.type === "tool.result");
    expect(JSON.stringify(pwd?.data)).toContain(join(b.t.store.paths(fork.id).native, "work"));
  });
});

describe("opencode failures are brain_errors that name the CLI; the session stays usable", () => {
  it("a CLI that is not installed", async () => {
    const t = makeBrain({ factories: [new OpencodeFactory({ bin: "/nonexistent/opencode" })] });
    try {
      const session = await t.brain.create({ harness: "opencode" });
      const outcome = await (await session.prompt("hi")).settled;
      expect(outcome.error?.message).toMatch(
        /opencode: the "\/nonexistent\/opencode" program was not found.*npm install opencode-ai/,
      );
    } finally {
      await t.cleanup();
    }
  });

  it.runIf(opencode)("a server that exits before it is healthy, then one that works", async () => {
    const dir = tempDir("brain-fake-opencode-");
    const script = join(dir, "opencode");
    writeFileSync(
      script,
      `#!/bin/sh
n=$(cat "${dir}/runs" 2>/dev/null || echo 0); echo $((n+1)) > "${dir}/runs"
if [ "$n" = 0 ]; then echo "fatal: gave up" >&2; exit 3; fi
exec "${opencode}" "$@"
`,
    );
    chmodSync(script, 0o755);
    const b = await start(script);
    const session = await b.create();
    const failed = await (await session.prompt("NOTOOL one")).settled;
    expect(failed.error?.code).toBe("brain_error");
    expect(failed.error?.message).toMatch(
      /opencode: opencode exited with code 3; its stderr ended with: fatal: gave up/,
    );
    const fine = await session.prompt("NOTOOL two");
    expect((await fine.settled).status).toBe("completed");
    expect(textOf(await events(session), fine.turn)).toBe("hello from fake");
  });
});
