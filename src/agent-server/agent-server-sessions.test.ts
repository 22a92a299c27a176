// The CLI agent server's sessions: one harness per agent session, however its requests arrive. Two runs that named a
// session not open yet both opened a harness on its one dir, and the first was never closed.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import type { RunContext } from "../../sdk/ts/nui/index.js";
import type { HarnessFactory } from "../core/harness.js";
import { quietHarness } from "../testing/brain.js";
import { CliAgentServer } from "./agent-server.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

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
  const home = mkdtempSync(join(tmpdir(), "brain-agent-test-"));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  const server = new CliAgentServer(factory, home);
  // The run's context as the SDK gives it, but for the HITL calls these runs never make.
  const ctx = (runId: string) =>
    ({
      runId,
      params: { sessionId: "s1" },
      signal: new AbortController().signal,
      emit: () => {},
    }) as unknown as RunContext;
  const runs = ["r1", "r2"].map((runId) => server.run("hi", runId, ctx(runId)).next());
  opened();
  const [first, second] = await Promise.allSettled(runs);
  expect(sessions).toEqual(["s1"]);
  expect(first?.status).toBe("fulfilled");
  expect(second).toMatchObject({ status: "rejected", reason: { message: /s1 already has a run working/ } });
});
