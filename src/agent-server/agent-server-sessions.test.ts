// The CLI agent server's sessions: one harness per agent session, however its requests arrive. Two runs that named a
// session not open yet both opened a harness on its one dir, and the first was never closed.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import type { RunContext } from "../../sdk/ts/nui/index.js";
import type { HarnessFactory } from "../core/harness.js";
import { quietHarness } from "../testing/brain.js";
import { CliAgentServer, MAX_RUN_SESSIONS } from "./agent-server.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A home removed after the test, and a run's context as the SDK gives it for session s1 (no HITL calls). */
function serverHome(): string {
  const home = mkdtempSync(join(tmpdir(), "brain-agent-test-"));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  return home;
}

function runContext(runId: string, emit: (event: unknown) => void = () => {}): RunContext {
  return {
    runId,
    params: { sessionId: "s1" },
    signal: new AbortController().signal,
    emit,
  } as unknown as RunContext;
}

it("opens one harness for two runs that name the same new session at once, and refuses the second run", async () => {
  let opened = () => {};
  const gate = new Promise<void>((resolve) => {
    opened = resolve;
  });
  const sessions: string[] = [];
  const factory: HarnessFactory = {
    name: "slow-open",
    supportsSteering: false,
    async open(options) {
      sessions.push(options.sessionId);
      await gate; // a CLI family's open reads its state files: the second run comes meanwhile
      return quietHarness();
    },
  };
  const server = new CliAgentServer(factory, serverHome());
  const runs = ["r1", "r2"].map((runId) => server.run("hi", runId, runContext(runId)).next());
  opened();
  const [first, second] = await Promise.allSettled(runs);
  expect(sessions).toEqual(["s1"]);
  expect(first?.status).toBe("fulfilled");
  expect(second).toMatchObject({ status: "rejected", reason: { message: /s1 already has a run working/ } });
});

// A session's harness (a CLI process, on a real image) stayed open for the life of the server, however long the
// session had been idle.
it("closes a session's harness once idle, and the next run opens it again on what it left, after its close", async () => {
  let closing = () => {};
  const closeStarted = new Promise<void>((resolve) => {
    closing = resolve;
  });
  let finish = () => {};
  const closeGate = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const opens: string[] = [];
  // Like a CLI, it keeps the conversation in memory and writes it to its dir as it closes.
  const factory: HarnessFactory = {
    name: "flushes-on-close",
    supportsSteering: false,
    async open(options) {
      const file = join(options.dir, "history");
      const history = existsSync(file) ? readFileSync(file, "utf8").split("\n") : [];
      opens.push(options.dir);
      return quietHarness({
        async prompt(text, ctx) {
          history.push(text);
          options.emit({ type: "assistant.message", turn: ctx.turn, data: { text: history.join(",") } });
          return { interrupted: false };
        },
        async close() {
          closing();
          await closeGate;
          writeFileSync(file, history.join("\n"));
        },
      });
    },
  };
  const home = serverHome();
  const server = new CliAgentServer(factory, home, undefined, 1);
  const said: unknown[] = [];
  const ctx = (runId: string) => runContext(runId, (event) => said.push(event));
  await server.run("one", "r1", ctx("r1")).next();
  await closeStarted;
  const second = server.run("two", "r2", ctx("r2")).next();
  finish();
  await second;
  expect(opens).toEqual([join(home, "s1"), join(home, "s1")]);
  expect(said).toEqual([
    { type: "text", content: "one" },
    { type: "text", content: "one,two" },
  ]);
  expect(server.getSessionId("r2")).toBe("s1");
  await server.onShutdown();
});

// getSessionId's map kept one entry per run for the life of the server.
it("keeps the session ids of the latest runs only", async () => {
  const factory: HarnessFactory = {
    name: "quiet",
    supportsSteering: false,
    open: async () => quietHarness(),
  };
  const server = new CliAgentServer(factory, serverHome(), undefined, 0);
  for (let i = 0; i <= MAX_RUN_SESSIONS; i++) await server.run("hi", `r${i}`, runContext(`r${i}`)).next();
  expect(server.getSessionId("r0")).toBeUndefined();
  expect(server.getSessionId(`r${MAX_RUN_SESSIONS}`)).toBe("s1");
  expect(server.getSessionId("r1")).toBe("s1");
  await server.onShutdown();
});
