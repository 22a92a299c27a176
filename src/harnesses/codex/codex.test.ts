// The codex harness on the real Codex CLI (node_modules/.bin/codex app-server), run in a loopback-only network
// namespace against the fake provider (OpenAI Responses). The checks every CLI family shares are in
// src/testing/cli-family.ts; here is what is Codex's own: a steer reaches the running turn.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import type { Session } from "../../core/session.js";
import { events, waitForEvent } from "../../testing/brain.js";
import { agentRequests, answerNextPermission, FAKE_KEY, historyOf } from "../../testing/cli.js";
import { checkKeyNotInAgent } from "../../testing/cli-credentials.js";
import { describeCliFamily } from "../../testing/cli-family.js";
import { describeLostHistory } from "../../testing/cli-lost-history.js";
import { checkpointsAfterHomeMoved } from "../../testing/cli-moved.js";
import { CODEX_HOME } from "./harness.js";
import { fragmentHash, rolloutsOf } from "./relocate.js";
import { codexCase } from "./testing/case.js";

// Real CLIs start slowly on a loaded machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const { found, start } = describeCliFamily({
  ...codexCase,
  refusals: [
    {
      name: "a provider api Codex cannot speak",
      provider: { api: "anthropic" },
      message: /speaks only the OpenAI Responses API, but the provider's api is "anthropic"/,
    },
    {
      name: "a model name config.toml cannot hold",
      config: { model: "fake\ud800model" },
      message: /the session's model \(config\.model\) holds a lone surrogate/,
    },
  ],
});
describeLostHistory({
  found,
  start,
  harness: "codex",
  transcript: ["codex/sessions"],
  named: /the Codex rollout of thread \S+ is missing/,
});

describe.runIf(found)("codex's own", () => {
  // Resumed under another directory, the harness rewrites the paths its session file names: a checkpoint built
  // on one taken before the move was refused ("bytes 0..N differ"), as the file is declared append-only.
  it("checkpoints after its home moved, building on the checkpoints from before, and restores them exactly", async () => {
    await checkpointsAfterHomeMoved(await start(), codexCase);
  });

  it("resumes a home copied whole with its own databases, which name the old home's rollout", async () => {
    await checkpointsAfterHomeMoved(await start(), codexCase, true, true);
  });

  it("never gives the agent the provider's key: its shell cannot print it, the provider gets it from Brain's proxy", async () => {
    await checkKeyNotInAgent(await start(), ["authorization", `Bearer ${FAKE_KEY}`], "/responses");
  });

  it("steers the running turn with turn/steer", async () => {
    const b = await start();
    const session = await b.create({ permissions: { tools: { exec_command: "ask" } } });
    const turn = await session.prompt("Create a file CMD[touch steered.txt]");
    await waitForEvent(session, (e) => e.type === "permission.requested");
    await session.steer("NOTOOL and also this");
    await answerNextPermission(session, "allow");
    expect((await turn.settled).status).toBe("completed");
    const all = await events(session);
    expect(all.find((e) => e.type === "user.steer")?.data).toEqual({ text: "NOTOOL and also this" });
    const sent = agentRequests(b.sandbox.provider.requests);
    expect(sent.some((r) => historyOf(r).includes("NOTOOL and also this"))).toBe(true);
  });

  // JSON leaves DEL raw, which TOML refuses: Codex then fails each thread, unable to load its config.toml.
  it("reads a model name with DEL in it from its config.toml, and asks the session's provider for it", async () => {
    const b = await start({ provider: { path: "/v1", model: "fake\x7fmodel" } });
    const session = await b.create();
    expect((await (await session.prompt("NOTOOL hello")).settled).status).toBe("completed");
    const [request] = agentRequests(b.sandbox.provider.requests);
    expect(request?.body.model).toBe("fake\x7fmodel");
    // Codex knows nothing of this model and says so to its user: the session's clients hear it too.
    const warnings = (await events(session)).filter((e) => e.type === "harness.warning");
    expect(warnings.map((e) => e.data.message)).toContainEqual(
      expect.stringMatching(/^codex: Model metadata for `fake\x7fmodel` not found/),
    );
  });

  // relocate.ts re-fingerprints the fragments it rewrites; its hash must be the one Codex itself writes, or a
  // resumed thread would show the model its permissions again. Checked on what this Codex wrote just now.
  it("fingerprints the fragments it showed the model as relocate's fragmentHash does", async () => {
    const b = await start();
    const session = await b.create();
    expect((await (await session.prompt("NOTOOL hello")).settled).status).toBe("completed");
    const home = join(b.t.store.paths(session.id).native, CODEX_HOME);
    // Every rollout under this session's CODEX_HOME: an empty thread id matches them all.
    const lines = rolloutsOf(home, "")
      .flatMap((file) => readFileSync(file, "utf8").trim().split("\n"))
      .map((line) => JSON.parse(line) as { type: string; payload: Record<string, unknown> });
    const blocks = lines
      .filter((l) => l.type === "response_item" && l.payload.role === "developer")
      .flatMap((l) => (l.payload.content as { text?: string }[]).map((c) => c.text ?? ""))
      .flatMap((text) => text.match(/<permissions instructions>[\s\S]*?<\/permissions instructions>/g) ?? []);
    expect(blocks.length).toBeGreaterThan(0);
    // The block names this session's own working directory, made for this run.
    expect(blocks[0]).toContain(b.t.store.paths(session.id).native);
    const states = lines.filter((l) => l.type === "world_state").map((l) => JSON.stringify(l.payload));
    expect(states.length).toBeGreaterThan(0);
    for (const block of blocks) expect(states.join("\n")).toContain(fragmentHash("developer", block));
    // A fingerprint of anything else is not there: the check can fail.
    expect(states.join("\n")).not.toContain(fragmentHash("developer", `${blocks[0]} `));
  });

  it("resumes a thread restored into a fresh dir as the original goes on: paths moved, no context sent again", async () => {
    const b = await start();
    const session = await b.create();
    expect((await (await session.prompt("List the files here")).settled).status).toBe("completed");
    await session.checkpoint();
    const fork = await b.t.brain.fork(session.id);
    const requests = b.sandbox.provider.requests;
    const next = async (s: Session) => {
      const before = requests.length;
      expect((await (await s.prompt("NOTOOL what now")).settled).status).toBe("completed");
      const [request] = agentRequests(requests.slice(before));
      const dir = b.t.store.paths(s.id).native;
      // The new message's id is minted per request; everything else is the conversation.
      const input = JSON.stringify(request!.body.input).split(dir).join("<native>");
      return input.replace(/msg_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<id>");
    };
    const original = await next(session);
    const restored = await next(fork);
    expect(restored).not.toContain(b.t.store.paths(session.id).native);
    expect(restored).toBe(original);
    expect(
      (await events(fork)).some(
        (e) => e.type === "harness.warning" && /moved here/.test(JSON.stringify(e.data)),
      ),
    ).toBe(true);
  });
});
