// The pi-cli harness on the real pi CLI (node_modules/.bin/pi --mode rpc), run in a loopback-only network
// namespace against the fake provider (Chat Completions; the other two APIs pi speaks in the last test).
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { events, makeBrain, tempDir, textOf, waitForEvent } from "../../../test/helpers/brain.js";
import { agentRequests, type CliBed, cliBed, historyOf } from "../../../test/helpers/cli.js";
import { offeredTools } from "../../testing/fake-provider/shell-agent.js";
import { locateCli } from "../cli/locate.js";
import { PiCliFactory } from "./factory.js";

// Real CLIs start slowly on a loaded machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const pi = locateCli("pi");
let bed: CliBed | undefined;

async function start(api?: string, path = "/v1"): Promise<CliBed> {
  bed = await cliBed((launcher) => new PiCliFactory({ launcher }), {
    path,
    model: "fake-model",
    ...(api ? { api } : {}),
  });
  return bed;
}

afterEach(async () => {
  await bed?.close();
  bed = undefined;
});

describe.runIf(pi)("pi-cli on the real CLI", () => {
  it("runs a turn with a shell tool call and its result, then text, with usage", async () => {
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
    expect(agentRequests(b.sandbox.provider.requests)[0]?.headers.authorization).toBe(
      "Bearer sk-fake-test-key",
    );
  });

  it("fails a turn the provider refuses with provider_error, and the next turn works", async () => {
    const b = await start();
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
    const b = await start();
    const session = await b.create();
    const slow = await session.prompt("Talk SLOW please");
    await waitForEvent(session, (e) => e.type === "assistant.delta" && e.turn === slow.turn);
    await session.interrupt();
    expect((await slow.settled).status).toBe("interrupted");
    const next = await session.prompt("NOTOOL say hello");
    expect((await next.settled).status).toBe("completed");
    expect(textOf(await events(session), next.turn)).toBe("hello from fake");
  });

  it("gates pi's tools with the policy: denied and ask tools are not enabled, and an ask says why", async () => {
    const b = await start();
    const session = await b.create({ permissions: { tools: { bash: "deny", write: "ask" } } });
    const turn = await session.prompt("List the files here");
    expect((await turn.settled).status).toBe("completed");
    const tools = offeredTools(agentRequests(b.sandbox.provider.requests)[0]?.body).map((t) => t.name);
    expect(tools.sort()).toEqual(["edit", "read"]);
    expect(textOf(await events(session), turn.turn)).toBe("hello from fake");
    const warning = (await events(session)).find((e) => e.type === "harness.warning");
    expect(JSON.stringify(warning?.data)).toMatch(/disabled: write/);
  });

  it("steers the running turn", async () => {
    const b = await start();
    const session = await b.create();
    const turn = await session.prompt("List the files here CMD[sleep 1; ls]");
    await waitForEvent(session, (e) => e.type === "tool.call");
    await session.steer("NOTOOL and also this");
    expect((await turn.settled).status).toBe("completed");
    const sent = agentRequests(b.sandbox.provider.requests);
    expect(sent.some((r) => historyOf(r).includes("NOTOOL and also this"))).toBe(true);
  });

  it("resumes the session in a new process after a host restart", async () => {
    const b = await start();
    const session = await b.create();
    await (await session.prompt("List the files here")).settled;
    const t = await b.restart();
    const again = await t.brain.session(session.id);
    const before = b.sandbox.provider.requests.length;
    const turn = await again.prompt("NOTOOL what did we do before?");
    expect((await turn.settled).status).toBe("completed");
    const sent = agentRequests(b.sandbox.provider.requests.slice(before));
    expect(historyOf(sent[0]!)).toContain("List the files here");
    expect(historyOf(sent[0]!)).toContain('"role":"tool"');
  });

  it("restores a checkpoint into a fresh dir: full history, tools run in the new dir", async () => {
    const b = await start();
    const session = await b.create();
    await (await session.prompt("List the files here")).settled;
    await session.checkpoint();
    await (await session.prompt("NOTOOL second turn")).settled;
    // A second checkpoint stores only what the CLI appended: it fails if the CLI rewrote an earlier byte.
    const checkpoint = await session.checkpoint();
    expect(checkpoint.files.some((f) => f.path.startsWith("pi/sessions/") && f.append_only)).toBe(true);
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

  it.each([
    ["openai-responses", "/v1", "/v1/responses"],
    ["anthropic", "", "/v1/messages"],
  ])("speaks %s to the endpoint when told", async (api, path, endpoint) => {
    const b = await start(api, path);
    const session = await b.create();
    const turn = await session.prompt("List the files here");
    expect((await turn.settled).status).toBe("completed");
    expect(textOf(await events(session), turn.turn)).toBe("Let me look.done");
    expect(agentRequests(b.sandbox.provider.requests)[0]?.path).toBe(endpoint);
  });
});

describe("pi-cli failures are brain_errors that name the CLI; the session stays usable", () => {
  it("a CLI that is not installed", async () => {
    const t = makeBrain({ factories: [new PiCliFactory({ bin: "/nonexistent/pi" })] });
    try {
      const session = await t.brain.create({ harness: "pi-cli" });
      const outcome = await (await session.prompt("hi")).settled;
      expect(outcome.error?.message).toMatch(
        /pi-cli: the "\/nonexistent\/pi" program was not found.*npm install @mariozechner\/pi-coding-agent/,
      );
    } finally {
      await t.cleanup();
    }
  });

  it("an endpoint without a model, and an api pi cannot speak", async () => {
    const t = makeBrain({ factories: [new PiCliFactory()], provider: { base_url: "http://127.0.0.1:9/v1" } });
    try {
      const session = await t.brain.create({ harness: "pi-cli" });
      const outcome = await (await session.prompt("hi")).settled;
      expect(outcome.error?.message).toMatch(
        /pi needs the model's id at that endpoint: set the session's model/,
      );
    } finally {
      await t.cleanup();
    }
    const u = makeBrain({
      factories: [new PiCliFactory()],
      provider: { base_url: "http://127.0.0.1:9", api: "gemini" },
    });
    try {
      const session = await u.brain.create({ harness: "pi-cli", config: { model: "m" } });
      const outcome = await (await session.prompt("hi")).settled;
      expect(outcome.error?.message).toMatch(/the provider's api "gemini" is not one pi speaks/);
    } finally {
      await u.cleanup();
    }
  });

  it.runIf(pi)(
    "a CLI that prints garbage, then one that exits: each fails its turn with the stderr tail",
    async () => {
      const dir = tempDir("brain-fake-pi-");
      const script = join(dir, "pi");
      writeFileSync(
        script,
        `#!/bin/sh
n=$(cat "${dir}/runs" 2>/dev/null || echo 0); echo $((n+1)) > "${dir}/runs"
if [ "$n" = 0 ]; then echo "this is not json"; sleep 5; fi
if [ "$n" = 1 ]; then echo "fatal: gave up" >&2; exit 3; fi
exec "${pi}" "$@"
`,
      );
      chmodSync(script, 0o755);
      bed = await cliBed((launcher) => new PiCliFactory({ launcher, bin: script }), {
        path: "/v1",
        model: "fake-model",
      });
      const session = await bed.create();
      const garbage = await (await session.prompt("NOTOOL one")).settled;
      expect(garbage.error?.message).toMatch(
        /pi-cli: pi wrote a line that is not JSON on stdout: this is not json/,
      );
      const exited = await (await session.prompt("NOTOOL two")).settled;
      expect(exited.error?.message).toMatch(
        /pi-cli: pi exited with code 3; its stderr ended with: fatal: gave up/,
      );
      const fine = await session.prompt("NOTOOL three");
      expect((await fine.settled).status).toBe("completed");
      expect(textOf(await events(session), fine.turn)).toBe("hello from fake");
    },
  );
});
