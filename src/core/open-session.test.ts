// An error that leaves opening a session, or starting its harness, is printed by callers that know only the
// host's secrets (the brain CLI, the daemon's routes without a session id): the session's own are kept out of it.
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { FsSessionStore } from "../store/fs/index.js";
import { echoFactory, tempDir } from "../testing/brain.js";
import { ToolRouter } from "../tools/router.js";
import { Brain, type BrainOptions } from "./brain.js";
import type { HarnessFactory } from "./harness.js";
import { HarnessRegistry } from "./registry.js";

const HEADER = "Bearer mcp-literal-9f3c1e77";
const TOKEN = "agent-env-token-5d2b8a41";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A Brain whose one harness fails to start with an error quoting everything it was given, cause included. */
function failingBrain(sessionTools: BrainOptions["sessionTools"] = () => undefined) {
  const home = tempDir();
  const echo = echoFactory({ spares: 0 });
  const factory = {
    name: "echo",
    supportsSteering: false,
    async open(options) {
      const given = JSON.stringify({ mcp: options.mcpServers, config: options.config });
      throw new Error(`runner refused to start with ${given}`, { cause: new Error(`it said: ${given}`) });
    },
    close: () => echo.close(),
  } as HarnessFactory;
  const brain = new Brain({
    store: new FsSessionStore(home),
    harnesses: new HarnessRegistry([factory]),
    tools: new ToolRouter([]),
    // The session's MCP servers are the harness's own to run here: the host makes no services of them.
    sessionTools,
  });
  cleanups.push(async () => {
    await brain.close();
    rmSync(home, { recursive: true, force: true });
  });
  return brain;
}

const printed = (err: unknown) => {
  const e = err as Error;
  return `${e.message}\n${e.stack}\n${(e.cause as Error | undefined)?.message}`;
};

describe("an error starting a session's harness", () => {
  it("quotes neither its record's literal MCP header nor its agent's env token", async () => {
    const brain = failingBrain();
    const session = await brain.create({
      harness: "echo",
      config: { options: { env: { AGENT_TOKEN: TOKEN } } },
      mcp_servers: { docs: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: HEADER } } },
    });
    const err = await session.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    const shown = printed(err);
    expect(shown).toContain("runner refused to start");
    expect(shown).not.toContain("mcp-literal-9f3c1e77");
    expect(shown).not.toContain(TOKEN);

    // A turn's outcome, which `brain run` prints when its turn.settled was not logged, says the same.
    const outcome = await (await session.prompt("hello")).settled;
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.message).toContain("runner refused to start");
    expect(outcome.error?.message).not.toContain("mcp-literal-9f3c1e77");
    expect(outcome.error?.message).not.toContain(TOKEN);
  });
});

describe("an error opening a session", () => {
  it("quotes none of its record's secrets when what the session is made of fails to start", async () => {
    const brain = failingBrain((record) => {
      throw new Error(`cannot make the services of ${JSON.stringify(record.mcp_servers)}`);
    });
    const err = await brain
      .create({
        harness: "echo",
        mcp_servers: { docs: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: HEADER } } },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    const shown = printed(err);
    expect(shown).toContain("cannot make the services");
    expect(shown).not.toContain("mcp-literal-9f3c1e77");
  });
});
