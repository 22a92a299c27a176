// Permissions on the api harness, end to end: the host decides. ask → allow, ask → deny, ask with nobody to
// answer → the headless deny, and a host killed while a request is pending → its turn failed after the restart,
// and the request denied with it (no answer can reach it any more).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../protocol/events.js";
import type { PermissionPolicy } from "../../protocol/permissions.js";
import { decodeLogText } from "../../store/fs/log-format.js";
import { answerPermissionOnce, events, tempDir } from "../../testing/brain.js";
import { apiTestBed } from "./testing/bed.js";
import { credentialsFor, FAKE_KEY } from "./testing/provider.js";

const bed = apiTestBed();

function apiBrain(home?: string) {
  return bed.brain(home ? { home } : {});
}

async function askSession(permissions: PermissionPolicy) {
  const session = await apiBrain().brain.create({
    harness: "api",
    config: { model: "anthropic:fake-model", tools: ["echo"] },
    permissions,
  });
  bed.fake.script([{ toolCalls: [{ name: "echo", arguments: { value: "may I?" } }] }, { text: "ok" }]);
  return session;
}

const dataOf = (all: SessionEvent[], type: string) =>
  all.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);

/** What the model was told about the tool call, in the request after it. */
function toolResultSent(): { content: string; is_error?: boolean } {
  return bed.fake.requests[1]!.body.messages[2].content[0];
}

describe("ask", () => {
  it("→ allow: the tool runs once the client allows it; a second answer is refused", async () => {
    const session = await askSession({ tools: { echo: "ask" } });
    const turn = await session.prompt("echo, please");
    const request = await answerPermissionOnce(session, "allow");
    expect(request).toMatchObject({ tool: "echo", arguments: { value: "may I?" } });
    expect((await turn.settled).status).toBe("completed");
    const all = await events(session);
    expect(dataOf(all, "tool.result")[0]).toMatchObject({ is_error: false, content: [{ text: "may I?" }] });
    expect(dataOf(all, "permission.resolved")).toEqual([{ id: request.id, decision: "allow" }]);
    expect(toolResultSent()).toMatchObject({ content: "may I?" });
  });

  it("→ deny: the model gets the denial as a failed tool result and the turn goes on", async () => {
    const session = await askSession({ tools: { "ec*": "ask" } });
    const turn = await session.prompt("echo, please");
    await answerPermissionOnce(session, "deny", "not today");
    expect((await turn.settled).status).toBe("completed");
    const [result] = dataOf(await events(session), "tool.result");
    expect(result).toMatchObject({
      is_error: true,
      content: [{ text: expect.stringMatching(/denied: not today/) }],
    });
    expect(toolResultSent()).toMatchObject({ is_error: true, content: expect.stringMatching(/not today/) });
  });

  it("with nobody to answer → denied when the ask timeout passes, never hanging", async () => {
    const session = await askSession({ default: "ask", ask_timeout_ms: 50 });
    expect((await (await session.prompt("echo, please")).settled).status).toBe("completed");
    const all = await events(session);
    expect(dataOf(all, "permission.resolved")[0]).toMatchObject({
      decision: "deny",
      reason: expect.stringMatching(/no client answered within 0.05 s/),
    });
    expect(dataOf(all, "tool.result")[0]).toMatchObject({ is_error: true });
  });
});

describe("a host killed while a permission request is pending", () => {
  it("denies it with its failed turn after the restart, and takes no answer", async () => {
    const home = tempDir();
    bed.fake.script([{ toolCalls: [{ name: "echo", arguments: { value: "before the crash" } }] }]);
    const fixture = join(import.meta.dirname, "../../../dist/src/harnesses/api/testing/hold-permission.js");
    const host = spawn(
      process.execPath,
      [fixture, home, credentialsFor("anthropic", bed.fake).base_url!, FAKE_KEY],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    const exited = new Promise((resolve) => host.once("exit", resolve));
    const sessionId = await new Promise<string>((resolve, reject) => {
      host.stdout.once("data", (chunk: Buffer) => resolve(JSON.parse(chunk.toString()).session));
      host.once("exit", (code) => reject(new Error(`the host exited (${code}) before starting the turn`)));
    });
    const eventsFile = join(home, "sessions", sessionId, "events.jsonl");
    const logged = () => decodeLogText(readFileSync(eventsFile, "utf8")).events;
    await expect
      .poll(() => logged().some((e) => e.type === "permission.requested"), { timeout: 20_000 })
      .toBe(true);
    host.kill("SIGKILL");
    await exited;

    const restarted = apiBrain(home);
    const session = await restarted.brain.session(sessionId);
    expect(session.pendingRequests()).toEqual([]);
    const all = await events(session);
    const [requested] = all.filter((e) => e.type === "permission.requested");
    expect(requested?.data).toMatchObject({ tool: "echo" });
    const id = (requested!.data as { id: string }).id;
    await expect(
      session.answer({ type: "permission.resolved", data: { id, decision: "allow" } }),
    ).rejects.toThrow(/answered already/);
    // The turn the host died in was closed out as failed; its tool call got a result and its request a deny.
    expect(
      all
        .filter((e) => e.turn === requested!.turn)
        .map((e) => e.type)
        .slice(-3),
    ).toEqual(["tool.result", "permission.resolved", "turn.settled"]);
    expect(dataOf(all, "permission.resolved")).toEqual([
      {
        id,
        decision: "deny",
        reason: "the host stopped while the request was pending; its turn has ended",
        unanswered: "cancelled",
      },
    ]);
    expect(all.filter((e) => e.type === "turn.settled").map((e) => e.data)).toEqual([
      {
        status: "failed",
        error: { code: "brain_error", message: "the host stopped while this turn was running" },
      },
    ]);
    expect(dataOf(all, "tool.result")[0]).toMatchObject({ is_error: true });

    // A second restart: answered, so still not pending.
    await restarted.brain.close();
    const again = apiBrain(home);
    expect((await again.brain.session(sessionId)).pendingRequests()).toEqual([]);
  });
});
