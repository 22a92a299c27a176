// The codex harness on the real Codex CLI (node_modules/.bin/codex app-server), run in a loopback-only network
// namespace against the fake provider (OpenAI Responses).
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { events, makeBrain, tempDir, textOf, waitForEvent } from "../../../test/helpers/brain.js";
import {
  agentRequests,
  answerNextPermission,
  type CliBed,
  cliBed,
  historyOf,
} from "../../../test/helpers/cli.js";
import { locateCli } from "../cli/locate.js";
import { CodexFactory } from "./factory.js";

// Real CLIs start slowly on a loaded machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const codex = locateCli("codex");
let bed: CliBed;

beforeEach(async () => {
  bed = await cliBed((launcher) => new CodexFactory({ launcher }), { path: "/v1", model: "fake-model" });
});
afterEach(async () => {
  await bed?.close();
});

describe.runIf(codex)("codex on the real CLI", () => {
  it("runs a turn with a shell tool call and its result, then text", async () => {
    const session = await bed.create();
    await session.start();
    writeFileSync(join(bed.t.store.paths(session.id).native, "work", "marker.txt"), "x");
    const turn = await session.prompt("List the files here");
    expect(await turn.settled).toEqual({ turn: turn.turn, status: "completed" });
    const all = await events(session);
    const call = all.find((e) => e.type === "tool.call");
    expect(call?.data).toMatchObject({ name: "exec_command" });
    expect(JSON.stringify(call?.data)).toContain("ls -1");
    const result = all.find((e) => e.type === "tool.result");
    expect(result?.data).toMatchObject({
      id: (call?.data as { id: string } | undefined)?.id,
      is_error: false,
    });
    expect(JSON.stringify(result?.data)).toContain("marker.txt");
    expect(textOf(all, turn.turn)).toContain("done");
    const last = all.filter((e) => e.type === "assistant.message").at(-1);
    expect(last?.data).toMatchObject({ text: "done", usage: { input: expect.any(Number) } });
    const sent = agentRequests(bed.sandbox.provider.requests);
    expect(sent[0]?.headers.authorization).toBe("Bearer sk-fake-test-key");
  });

  it("fails a turn the provider refuses with provider_error, and the next turn works", async () => {
    const b = bed;
    const session = await b.create();
    b.sandbox.provider.script([{ error: { status: 400, message: "the fake provider refuses this" } }]);
    const failed = await (await session.prompt("NOTOOL refused")).settled;
    expect(failed.status).toBe("failed");
    expect(failed.error?.code).toBe("provider_error");
    expect(failed.error?.message).toContain("the fake provider refuses this");
    const next = await session.prompt("NOTOOL again");
    expect((await next.settled).status).toBe("completed");
  });

  it("interrupts mid-stream, and the next turn works", async () => {
    const session = await bed.create();
    const slow = await session.prompt("Talk SLOW please");
    await waitForEvent(session, (e) => e.type === "assistant.delta" && e.turn === slow.turn);
    await session.interrupt();
    expect((await slow.settled).status).toBe("interrupted");
    const next = await session.prompt("NOTOOL say hello");
    expect((await next.settled).status).toBe("completed");
    expect(textOf(await events(session), next.turn)).toBe("hello from fake");
  });

  it("asks Brain's policy for approvals: one allowed, one denied", async () => {
    const session = await bed.create({ permissions: { tools: { exec_command: "ask" } } });
    const work = join(bed.t.store.paths(session.id).native, "work");
    const allowed = await session.prompt("Create a file CMD[touch allowed.txt]");
    expect(await answerNextPermission(session, "allow")).toBe("exec_command");
    expect((await allowed.settled).status).toBe("completed");
    expect(existsSync(join(work, "allowed.txt"))).toBe(true);

    const denied = await session.prompt("Create a file CMD[touch denied.txt]");
    await answerNextPermission(session, "deny");
    expect((await denied.settled).status).toBe("completed");
    expect(existsSync(join(work, "denied.txt"))).toBe(false);
    const results = (await events(session)).filter((e) => e.type === "tool.result" && e.turn === denied.turn);
    expect(results[0]?.data).toMatchObject({ is_error: true });
  });

  it("steers the running turn with turn/steer", async () => {
    const session = await bed.create({ permissions: { tools: { exec_command: "ask" } } });
    const turn = await session.prompt("Create a file CMD[touch steered.txt]");
    await waitForEvent(session, (e) => e.type === "permission.requested");
    await session.steer("NOTOOL and also this");
    await answerNextPermission(session, "allow");
    expect((await turn.settled).status).toBe("completed");
    const all = await events(session);
    expect(all.find((e) => e.type === "user.steer")?.data).toEqual({ text: "NOTOOL and also this" });
    const sent = agentRequests(bed.sandbox.provider.requests);
    expect(sent.some((r) => historyOf(r).includes("NOTOOL and also this"))).toBe(true);
  });

  it("resumes the thread in a new process after a host restart", async () => {
    const session = await bed.create();
    await (await session.prompt("List the files here")).settled;
    const t = await bed.restart();
    const again = await t.brain.session(session.id);
    const before = bed.sandbox.provider.requests.length;
    const turn = await again.prompt("NOTOOL what did we do before?");
    expect((await turn.settled).status).toBe("completed");
    const sent = agentRequests(bed.sandbox.provider.requests.slice(before));
    expect(historyOf(sent[0]!)).toContain("List the files here");
    expect(historyOf(sent[0]!)).toContain("function_call_output");
  });

  it("restores a checkpoint into a fresh dir: the fork's next request carries the full history", async () => {
    const session = await bed.create();
    await (await session.prompt("List the files here")).settled;
    await session.checkpoint();
    await (await session.prompt("NOTOOL second turn")).settled;
    // A second checkpoint stores only what the CLI appended: it fails if the CLI rewrote an earlier byte.
    const checkpoint = await session.checkpoint();
    expect(checkpoint.files.map((f) => f.path)).toContain("codex.json");
    expect(checkpoint.files.some((f) => f.path.includes("/rollout-") && f.append_only)).toBe(true);
    const fork = await bed.t.brain.fork(session.id);
    const before = bed.sandbox.provider.requests.length;
    const turn = await fork.prompt("List the files here CMD[pwd]");
    expect((await turn.settled).status).toBe("completed");
    const sent = agentRequests(bed.sandbox.provider.requests.slice(before));
    const history = historyOf(sent[0]!);
    expect(history).toContain("List the files here");
    expect(history).toContain("second turn");
    // The shell runs in the fork's own working directory, not the original's.
    const pwd = (await events(fork)).find((e) => e.type === "tool.result");
    expect(JSON.stringify(pwd?.data)).toContain(join(bed.t.store.paths(fork.id).native, "work"));
  });
});

describe("codex failures are brain_errors that name the CLI; the session stays usable", () => {
  it("a CLI that is not installed", async () => {
    const t = makeBrain({ factories: [new CodexFactory({ bin: "/nonexistent/codex" })] });
    try {
      const session = await t.brain.create({ harness: "codex" });
      const outcome = await (await session.prompt("hi")).settled;
      expect(outcome.error?.code).toBe("brain_error");
      expect(outcome.error?.message).toMatch(
        /codex: the "\/nonexistent\/codex" program was not found.*npm install @openai\/codex/,
      );
    } finally {
      await t.cleanup();
    }
  });

  it.runIf(codex)(
    "a CLI that prints garbage, then one that exits: each fails its turn with the stderr tail",
    async () => {
      const dir = tempDir("brain-fake-codex-");
      const script = join(dir, "codex");
      writeFileSync(
        script,
        `#!/bin/sh
n=$(cat "${dir}/runs" 2>/dev/null || echo 0); echo $((n+1)) > "${dir}/runs"
if [ "$n" = 0 ]; then echo "this is not json"; echo "oops on stderr" >&2; sleep 5; fi
if [ "$n" = 1 ]; then echo "fatal: gave up" >&2; exit 3; fi
exec "${codex}" "$@"
`,
      );
      chmodSync(script, 0o755);
      await bed.close();
      bed = await cliBed((launcher) => new CodexFactory({ launcher, bin: script }), {
        path: "/v1",
        model: "fake-model",
      });
      const session = await bed.create();
      const garbage = await (await session.prompt("NOTOOL one")).settled;
      expect(garbage.error?.code).toBe("brain_error");
      expect(garbage.error?.message).toMatch(
        /codex: codex wrote a line that is not JSON on stdout: this is not json/,
      );
      const exited = await (await session.prompt("NOTOOL two")).settled;
      expect(exited.error?.message).toMatch(
        /codex: codex exited with code 3; its stderr ended with: fatal: gave up/,
      );
      const fine = await session.prompt("NOTOOL three");
      expect((await fine.settled).status).toBe("completed");
      expect(textOf(await events(session), fine.turn)).toBe("hello from fake");
    },
  );

  it("a provider api Codex cannot speak", async () => {
    const t = makeBrain({ factories: [new CodexFactory()], provider: { api: "anthropic" } });
    try {
      const session = await t.brain.create({ harness: "codex" });
      const outcome = await (await session.prompt("hi")).settled;
      expect(outcome.error?.message).toMatch(
        /speaks only the OpenAI Responses API, but the provider's api is "anthropic"/,
      );
    } finally {
      await t.cleanup();
    }
  });
});
