// A Brain whose CLI harnesses run the real programs in a loopback-only network namespace, pointed at a fake
// provider that plays a coding agent's model (shellAgent). The provider's request log is read directly.
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect } from "vitest";
import type { BrainOptions } from "../core/brain.js";
import type { HarnessFactory, HarnessOptions } from "../core/harness.js";
import type { Session } from "../core/session.js";
import type { McpServers } from "../protocol/config.js";
import type { SessionEvent } from "../protocol/events.js";
import type { PermissionPolicy } from "../protocol/permissions.js";
import type { ProviderCredentials, SessionConfig } from "../protocol/runner.js";
import { mcpSessionTools } from "../tools/mcp/index.js";
import type { ToolService } from "../tools/tool-service.js";
import { events, makeBrain, type TestBrain, tempDir, waitForEvent } from "./brain.js";
import { type FakeProviderRequest, shellAgent } from "./fake-provider/index.js";
import { type SandboxedProvider, startSandboxedProvider } from "./netns/sandbox.js";

export const FAKE_KEY = "sk-fake-test-key";

export interface CliBed {
  sandbox: SandboxedProvider;
  t: TestBrain;
  /** A new Brain on the same home (the old one closed): what a host restart looks like. */
  restart(): Promise<TestBrain>;
  create(options?: {
    config?: SessionConfig;
    permissions?: PermissionPolicy;
    mcp_servers?: McpServers;
  }): Promise<Session>;
  close(): Promise<void>;
}

export interface SandboxBrain {
  sandbox: SandboxedProvider;
  home: string;
  t: TestBrain;
  /** A new Brain on the same home (the old one closed): what a host restart looks like. */
  restart(): Promise<TestBrain>;
  close(): Promise<void>;
}

/**
 * A Brain on a fresh home whose harnesses (`factories`, given the namespace's launcher) reach the fake provider,
 * playing a coding agent, at `provider.path` under its URL with the test key.
 */
export async function sandboxBrain(options: {
  home: string;
  factories: (launcher: string[]) => HarnessFactory[];
  provider?: { api?: string; path?: string };
  sessionTools?: (home: string) => BrainOptions["sessionTools"];
  tools?: ToolService[];
}): Promise<SandboxBrain> {
  const { provider = {} } = options;
  const sandbox = await startSandboxedProvider();
  sandbox.provider.setFallback(shellAgent({ slowDelayMs: 100 }));
  const home = tempDir(options.home);
  const credentials = {
    base_url: `${sandbox.provider.url}${provider.path ?? ""}`,
    api_key: FAKE_KEY,
    ...(provider.api ? { api: provider.api } : {}),
  };
  const sessionTools = options.sessionTools?.(home);
  const build = () =>
    makeBrain({
      home,
      factories: options.factories(sandbox.launcher),
      provider: credentials,
      ...(sessionTools ? { sessionTools } : {}),
      ...(options.tools ? { tools: options.tools } : {}),
    });
  const bed: SandboxBrain = {
    sandbox,
    home,
    t: build(),
    async restart() {
      await bed.t.brain.close();
      bed.t = build();
      return bed.t;
    },
    async close() {
      await bed.t.cleanup();
      await sandbox.close();
      rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
  return bed;
}

export async function cliBed(
  makeFactory: (launcher: string[]) => HarnessFactory,
  provider: { api?: string; path?: string; model?: string } = {},
  brain: { sessionTools?: BrainOptions["sessionTools"]; tools?: ToolService[] } = {},
): Promise<CliBed> {
  const base = await sandboxBrain({
    home: "brain-cli-",
    factories: (launcher) => [makeFactory(launcher)],
    provider,
    // Session MCP servers run in Brain's process, outside the namespace, as on a real host.
    sessionTools: (home) => brain.sessionTools ?? mcpSessionTools({ baseDir: home, env: {} }),
    ...(brain.tools ? { tools: brain.tools } : {}),
  });
  const bed: CliBed = {
    sandbox: base.sandbox,
    get t() {
      return base.t;
    },
    restart: () => base.restart(),
    async create(options = {}) {
      const harness = makeFactory(base.sandbox.launcher).name;
      const model = provider.model ? { model: provider.model } : {};
      return base.t.brain.create({ harness, ...options, config: { ...model, ...options.config } });
    },
    close: () => base.close(),
  };
  return bed;
}

/** Everything the model was sent in a request, as one string: to look for earlier turns in it. */
export function historyOf(req: FakeProviderRequest): string {
  return JSON.stringify(req.body?.messages ?? req.body?.input ?? req.body);
}

/** The model requests that carried tools (the agent's own), leaving out side requests such as titles. */
export function agentRequests(requests: FakeProviderRequest[]): FakeProviderRequest[] {
  return requests.filter((r) => Array.isArray(r.body?.tools) && r.body.tools.length > 0);
}

/** Waits for the next permission request of a session and answers it. */
export async function answerNextPermission(session: Session, decision: "allow" | "deny"): Promise<string> {
  const pending = (id: string) => session.pendingRequests().some((r) => r.id === id);
  const asked = await waitForEvent(
    session,
    (e) => e.type === "permission.requested" && pending((e.data as { id: string }).id),
  );
  const id = (asked.data as { id: string }).id;
  await session.answer({
    type: "permission.resolved",
    data: { id, decision, reason: `test says ${decision}` },
  });
  return (asked.data as { tool: string }).tool;
}

/**
 * A family whose steer cannot reach the running generation queues it: a steer sent while a permission request
 * (for `tool`) holds the CLI's turn open is logged as `user.steer` with `queued: true` and reaches the model as a
 * follow-up inside the same turn. The turn's events and id are returned for the family's check of its text.
 */
export async function checkQueuedSteer(
  b: CliBed,
  tool: string,
): Promise<{ all: SessionEvent[]; turn: string }> {
  const session = await b.create({ permissions: { tools: { [tool]: "ask" } } });
  const turn = await session.prompt("Create a file CMD[touch steered.txt]");
  await waitForEvent(session, (e) => e.type === "permission.requested");
  await session.steer("NOTOOL and then this");
  await answerNextPermission(session, "allow");
  expect((await turn.settled).status).toBe("completed");
  const all = await events(session);
  expect(all.find((e) => e.type === "user.steer")?.data).toEqual({
    text: "NOTOOL and then this",
    queued: true,
  });
  const last = agentRequests(b.sandbox.provider.requests).at(-1)!;
  expect(historyOf(last)).toContain("NOTOOL and then this");
  return { all, turn: turn.turn };
}

/**
 * Claude Code runs its read-only tools in its cwd without asking (no can_use_tool, no request_permission), so a
 * family on it must give the policy to the CLI up front. Under a policy that denies Read, the model's Read of a
 * file in the cwd does not run; under one that asks (a rule, or the default), it is asked first: denied here,
 * as no client answers. Either way the file's content never reaches the model.
 */
export async function checkReadGated(b: CliBed): Promise<void> {
  const cwd = tempDir("brain-read-gated-");
  try {
    const file = join(cwd, "secret.txt");
    writeFileSync(file, "DENIED-READ-CONTENT\n");
    const policies: [PermissionPolicy, boolean][] = [
      [{ tools: { Read: "deny" } }, false],
      [{ tools: { Read: "ask" }, ask_timeout_ms: 0 }, true],
      [{ default: "ask", ask_timeout_ms: 0 }, true],
    ];
    for (const [permissions, asks] of policies) {
      const session = await b.create({ config: { options: { cwd } }, permissions });
      const turn = await session.prompt(`Read it CALL Read ${JSON.stringify({ file_path: file })}`);
      expect((await turn.settled).status).toBe("completed");
      const asked = (await events(session)).filter((e) => e.type === "permission.requested");
      expect(asked.map((e) => (e.data as { tool: string }).tool)).toEqual(asks ? ["Read"] : []);
    }
    const sent = JSON.stringify(b.sandbox.provider.requests.map((r) => r.body));
    expect(sent).toContain("CALL Read");
    expect(sent).not.toContain("DENIED-READ-CONTENT");
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

/**
 * A CLI killed mid-append (a full disk) leaves its transcript ending in a torn line: the session resumed on it,
 * then by a new CLI, must keep both turns' history. `transcript` finds the file in the session's native dir,
 * `torn` is the half line appended to it.
 */
export async function checkTornLineResume(
  b: CliBed,
  transcript: (native: string) => string,
  torn: string,
): Promise<void> {
  const session = await b.create();
  expect((await (await session.prompt("NOTOOL first")).settled).status).toBe("completed");
  const t = await b.restart();
  appendFileSync(transcript(t.store.paths(session.id).native), torn);
  const again = await t.brain.session(session.id);
  expect((await (await again.prompt("NOTOOL second")).settled).status).toBe("completed");
  // Read back by a new CLI: what the last one appended after the torn line must still be there.
  const u = await b.restart();
  const third = await (await u.brain.session(session.id)).prompt("NOTOOL third");
  expect((await third.settled).status).toBe("completed");
  const last = agentRequests(b.sandbox.provider.requests).at(-1);
  expect(historyOf(last!)).toContain("NOTOOL first");
  expect(historyOf(last!)).toContain("NOTOOL second");
}

/** A scratch directory holding `script` as the program `name` (a stand-in CLI) and an empty native dir. */
export function standInProgram(
  prefix: string,
  name: string,
  script: string,
): { dir: string; bin: string; native: string } {
  const dir = tempDir(prefix);
  const bin = join(dir, name);
  writeFileSync(bin, script, { mode: 0o755 });
  const native = join(dir, "native");
  mkdirSync(native);
  return { dir, bin, native };
}

/**
 * The stand-in programs of one test file (standInProgram's), removed after each test, and the pids a test adds
 * to `pids` (what the programs started) killed.
 */
export function useStandIns(): { make: typeof standInProgram; pids: number[] } {
  const dirs: string[] = [];
  const pids: number[] = [];
  afterEach(() => {
    for (const pid of pids.splice(0)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const make: typeof standInProgram = (...args) => {
    const made = standInProgram(...args);
    dirs.push(made.dir);
    return made;
  };
  return { make, pids };
}

/**
 * The source of a stand-in CLI that speaks NDJSON on stdio: `prelude` runs first; `each` runs for each line read,
 * with the message as `m` (`send(m)` writes one); it exits at the end of its input, and not before.
 */
export function ndjsonProgram(each: string, prelude = ""): string {
  return `#!/usr/bin/env node
${prelude}
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
let buf = "";
process.stdin.on("data", (d) => {
  buf += d;
  for (let i; (i = buf.indexOf("\\n")) >= 0; buf = buf.slice(i + 1)) {
    const m = JSON.parse(buf.slice(0, i));
${each}
  }
});
process.stdin.on("end", () => process.exit(0));
setInterval(() => {}, 1000);
`;
}

/**
 * What a CLI harness opened directly (no Brain around it) is given: a session with no tools, every permission
 * denied and no answers, for tests of the program's start and end with a stand-in for the CLI.
 */
export function bareHarnessOptions(
  dir: string,
  more: { config?: SessionConfig; provider?: ProviderCredentials } = {},
): HarnessOptions {
  return {
    sessionId: "bare",
    dir,
    config: more.config ?? {},
    tools: [],
    provider: more.provider ?? {},
    emit: () => {},
    call: async () => ({ content: [], is_error: false }),
    permit: async () => ({ decision: "deny" }),
    ask: async () => "",
  };
}
