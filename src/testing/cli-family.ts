// The checks every CLI family passes on its real program, written once. A family's test file describes its
// program and the few things that differ (its shell tool's name, how a tool result looks in a resumed history,
// which files a checkpoint carries), calls describeCliFamily for the shared tests, and keeps only its own.
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { HarnessFactory } from "../core/harness.js";
import type { Session } from "../core/session.js";
import { locateCli } from "../harnesses/cli/locate.js";
import type { NativeFile, ProviderCredentials, SessionConfig } from "../protocol/runner.js";
import { events, makeBrain, tempDir, textOf, waitForEvent } from "./brain.js";
import { agentRequests, answerNextPermission, type CliBed, cliBed, historyOf } from "./cli.js";

const BAD_CWD = /options.cwd must be an absolute path, got "relative\/dir"/;
const NUL_MODEL =
  /: the session's model \(config.model\) holds a NUL character, which no command-line argument/;
const NUL_FLAG = /bad session options: .*args.*holds a NUL character/;

export type SharedCheck =
  | "turn"
  | "refused"
  | "interrupt"
  | "approvals"
  | "restart"
  | "fork"
  | "garbage"
  | "bound";

export interface CliFamilyCase {
  harness: string;
  program: string;
  npmPackage: string;
  factory(options: { launcher?: string[]; bin?: string }): HarnessFactory;
  /** The fake provider's base URL path, the model sessions name, and the api, as the family needs them. */
  provider?: BedOptions["provider"];
  /** The first turn's tool call, as the CLI names it (its command is always `ls -1`). */
  shellCall: Record<string, unknown>;
  /** The turn's text is exactly "Let me look.done" (some CLIs add to it). Default true. */
  exactText?: boolean;
  /** The last assistant.message of a shell turn, beyond `text: "done"`. */
  lastMessage: Record<string, unknown>;
  /** The header that carries the key to the provider, and its value. */
  keyHeader?: [string, string];
  /** How a tool result shows in the history a resumed CLI sends. */
  resumedToolResult: string;
  /** Checks the files of a checkpoint taken after two turns. */
  checkpointFiles(files: NativeFile[]): void;
  /** A checkpoint before the second turn as well: its files are append-only, so the second may only append. */
  appendOnly?: boolean;
  /** The CLI's name for its shell tool, for the approval checks. */
  shellTool?: string;
  /**
   * `bound` tool mode: the name the model calls Brain's `echo` by, and the shell call the model makes anyway
   * (the CLI's own name and arguments; it must not run). Absent: the family has no bound mode.
   */
  bound?: {
    echo: string;
    shell: { name: string; arguments: Record<string, unknown> };
    /**
     * The CLI checks a call's arguments against the endpoint's schema before calling it (gemini-cli): the bad
     * call does not reach Brain, and the model sees the CLI's error, which this matches.
     */
    agentChecksArguments?: RegExp;
  };
  /** Settings the family refuses before anything starts, with the words that say why. */
  refusals?: {
    name: string;
    provider?: Partial<ProviderCredentials>;
    config?: SessionConfig;
    message: RegExp;
  }[];
  /** Shared checks this family covers elsewhere, or cannot pass. */
  skip?: SharedCheck[];
}

export interface BedOptions {
  /** The program, instead of the installed one. */
  bin?: string;
  /** The fake provider's base URL path, the model sessions name, and the api. */
  provider?: { api?: string; path?: string; model?: string };
}

export interface CliFamilyTests {
  /** The program's path, when installed: the real-CLI tests run only then. */
  found: string | undefined;
  /** A bed for this family's own tests (closed after each test); `provider` replaces the family's. */
  start(options?: BedOptions): Promise<CliBed>;
}

export function describeCliFamily(f: CliFamilyCase): CliFamilyTests {
  const found = locateCli(f.program);
  let bed: CliBed | undefined;
  const start = async ({ bin, provider = f.provider }: BedOptions = {}) => {
    bed = await cliBed((launcher) => f.factory({ launcher, ...(bin ? { bin } : {}) }), provider);
    return bed;
  };
  afterEach(async () => {
    await bed?.close();
    bed = undefined;
  });
  // A check the family skips is not registered at all, rather than reported as skipped.
  // `needs` is what a check needs of the family (f.bound, f.shellTool): a family without it never runs that
  // check (a default parameter would have turned an undefined argument into true).
  const shared = (name: SharedCheck, title: string, fn: () => Promise<void>, ...needs: unknown[]) => {
    if (needs.every(Boolean) && !f.skip?.includes(name)) it(title, fn);
  };

  describe.runIf(found)(`${f.harness} on the real CLI`, () => {
    shared("turn", "runs a turn with a shell tool call and its result, then text", async () => {
      const b = await start();
      await shellTurn(b, await b.create(), f);
    });

    shared(
      "refused",
      "fails a turn the provider refuses with provider_error, and the next turn works",
      async () => {
        const b = await start();
        const session = await b.create();
        b.sandbox.provider.script([{ error: { status: 400, message: "the fake provider refuses this" } }]);
        const failed = await (await session.prompt("NOTOOL refused")).settled;
        expect(failed.status).toBe("failed");
        expect(failed.error?.code).toBe("provider_error");
        expect(failed.error?.message).toContain("the fake provider refuses this");
        const next = await session.prompt("NOTOOL again");
        expect((await next.settled).status).toBe("completed");
      },
    );

    shared("interrupt", "interrupts mid-stream, and the next turn works", async () => {
      const session = await (await start()).create();
      await interruptsMidStream(session);
      const next = await session.prompt("NOTOOL say hello");
      expect((await next.settled).status).toBe("completed");
      expect(textOf(await events(session), next.turn)).toBe("hello from fake");
    });

    shared(
      "approvals",
      "asks Brain's policy for approvals: one allowed, one denied",
      async () => {
        const b = await start();
        const session = await b.create({ permissions: { tools: { [f.shellTool!]: "ask" } } });
        const work = join(b.t.store.paths(session.id).native, "work");
        const allowed = await session.prompt("Create a file CMD[touch allowed.txt]");
        expect(await answerNextPermission(session, "allow")).toBe(f.shellTool);
        expect((await allowed.settled).status).toBe("completed");
        expect(existsSync(join(work, "allowed.txt"))).toBe(true);
        await deniesOne(session, work);
        const resolved = (await events(session)).filter((e) => e.type === "permission.resolved");
        expect(resolved.map((e) => (e.data as { decision: string }).decision)).toEqual(["allow", "deny"]);
      },
      f.shellTool,
    );

    shared(
      "bound",
      "in bound mode offers only Brain's tools: echo is logged and checked by Brain, the shell does not run",
      async () => boundMode(await start(), f),
      f.bound,
    );

    shared("restart", "resumes the conversation in a new process after a host restart", async () => {
      const b = await start();
      const session = await b.create();
      await (await session.prompt("List the files here")).settled;
      await resumesAfterRestart(b, session, f);
    });

    shared(
      "fork",
      "restores a checkpoint into a fresh dir: full history, tools run in the new dir",
      async () => {
        const b = await start();
        await forkRestores(b, await b.create(), f);
      },
    );
  });

  describe(`${f.harness} failures are brain_errors that name the CLI; the session stays usable`, () => {
    it("a CLI that is not installed", async () => {
      const outcome = await refusal(f.factory({ bin: `/nonexistent/${f.program}` }), f.harness);
      expect(outcome.error?.code).toBe("brain_error");
      const npm = f.npmPackage.replace(/[/.]/g, "\\$&");
      expect(outcome.error?.message).toMatch(
        new RegExp(`${f.harness}: the "/nonexistent/${f.program}" program was not found.*npm install ${npm}`),
      );
    });

    shared(
      "garbage",
      "a CLI that prints garbage, then one that exits: each fails its turn with the stderr tail",
      async () => {
        const dir = tempDir(`brain-fake-${f.program}-`);
        const script = join(dir, f.program);
        // Misbehaves on its first two runs, then is the real CLI.
        writeFileSync(
          script,
          `#!/bin/sh
n=$(cat "${dir}/runs" 2>/dev/null || echo 0); echo $((n+1)) > "${dir}/runs"
if [ "$n" = 0 ]; then echo "this is not json"; echo "oops on stderr" >&2; sleep 5; fi
if [ "$n" = 1 ]; then echo "fatal: gave up" >&2; exit 3; fi
exec "${found}" "$@"
`,
        );
        chmodSync(script, 0o755);
        const session = await (await start({ bin: script })).create();
        const garbage = await (await session.prompt("NOTOOL one")).settled;
        expect(garbage.status).toBe("failed");
        expect(garbage.error?.code).toBe("brain_error");
        expect(garbage.error?.message).toMatch(
          `${f.harness}: ${f.program} wrote a line that is not JSON on stdout: this is not json`,
        );
        const exited = await (await session.prompt("NOTOOL two")).settled;
        expect(exited.error?.message).toMatch(
          `${f.harness}: ${f.program} exited with code 3; its stderr ended with: fatal: gave up`,
        );
        const fine = await session.prompt("NOTOOL three");
        expect((await fine.settled).status).toBe("completed");
        expect(textOf(await events(session), fine.turn)).toBe("hello from fake");
      },
      found,
    );

    // Every family reads the same session options, so each refuses a relative cwd alike.
    const refusals = [
      { name: "bad session options", config: { options: { cwd: "relative/dir" } }, message: BAD_CWD },
      { name: "a model with a NUL character", config: { model: "fake\0model" }, message: NUL_MODEL },
      { name: "a flag with a NUL character", config: { options: { args: ["a\0b"] } }, message: NUL_FLAG },
      ...(f.refusals ?? []),
    ];
    it.runIf(found).each(refusals)("refuses $name", async ({ provider, config, message }) => {
      const outcome = await refusal(f.factory({}), f.harness, provider, config);
      expect(outcome.error?.code).toBe("brain_error");
      expect(outcome.error?.message).toMatch(message);
    });
  });

  return { found, start };
}

/** The first prompt's outcome in a Brain whose only factory is `factory`. */
async function refusal(
  factory: HarnessFactory,
  harness: string,
  provider?: Partial<ProviderCredentials>,
  config?: SessionConfig,
) {
  // A provider on this host's loopback (nothing listens there; each refusal comes before any request) and a model
  // for it: a sandbox refuses a CLI with no way to any provider before the family's own checks, the point here.
  const t = makeBrain({ factories: [factory], provider: provider ?? { base_url: "http://127.0.0.1:9/v1" } });
  try {
    const model = provider ? {} : { model: "fake-model" };
    const session = await t.brain.create({ harness, config: { ...model, ...config } });
    return await (await session.prompt("hi")).settled;
  } finally {
    await t.cleanup();
  }
}

/** One turn that runs `ls -1` through the CLI's shell tool, with everything the events should say about it. */
export async function shellTurn(b: CliBed, session: Session, f: CliFamilyCase): Promise<void> {
  await session.start();
  writeFileSync(join(b.t.store.paths(session.id).native, "work", "marker.txt"), "x");
  const turn = await session.prompt("List the files here");
  expect(await turn.settled).toEqual({ turn: turn.turn, status: "completed" });
  const all = await events(session);
  const call = all.find((e) => e.type === "tool.call");
  expect(call?.data).toMatchObject(f.shellCall);
  expect(JSON.stringify(call?.data)).toContain("ls -1");
  const result = all.find((e) => e.type === "tool.result");
  expect(result?.data).toMatchObject({ id: (call?.data as { id: string } | undefined)?.id, is_error: false });
  expect(JSON.stringify(result?.data)).toContain("marker.txt");
  if (f.exactText === false) expect(textOf(all, turn.turn)).toContain("done");
  else expect(textOf(all, turn.turn)).toBe("Let me look.done");
  const last = all.filter((e) => e.type === "assistant.message").at(-1);
  expect(last?.data).toMatchObject({ text: "done", ...f.lastMessage });
  if (f.keyHeader) {
    const [name, value] = f.keyHeader;
    expect(agentRequests(b.sandbox.provider.requests)[0]?.headers[name]).toBe(value);
  }
}

export async function interruptsMidStream(session: Session): Promise<void> {
  const slow = await session.prompt("Talk SLOW please");
  await waitForEvent(session, (e) => e.type === "assistant.delta" && e.turn === slow.turn);
  await session.interrupt();
  expect((await slow.settled).status).toBe("interrupted");
}

/** A prompt whose shell command the policy's client denies: the command does not run, its result is an error. */
export async function deniesOne(session: Session, work: string): Promise<void> {
  const denied = await session.prompt("Create a file CMD[touch denied.txt]");
  await answerNextPermission(session, "deny");
  expect((await denied.settled).status).toBe("completed");
  expect(existsSync(join(work, "denied.txt"))).toBe(false);
  const results = (await events(session)).filter((e) => e.type === "tool.result" && e.turn === denied.turn);
  expect(results[0]?.data).toMatchObject({ is_error: true });
}

/** After a turn that ran "List the files here": a new Brain on the same home resumes the CLI's history. */
export async function resumesAfterRestart(b: CliBed, session: Session, f: CliFamilyCase): Promise<void> {
  const t = await b.restart();
  const again = await t.brain.session(session.id);
  const before = b.sandbox.provider.requests.length;
  const next = await again.prompt("NOTOOL what did we do before?");
  expect((await next.settled).status).toBe("completed");
  expect(textOf(await events(again), next.turn)).toBe("hello from fake");
  const history = historyOf(agentRequests(b.sandbox.provider.requests.slice(before))[0]!);
  expect(history).toContain("List the files here");
  expect(history).toContain(f.resumedToolResult);
}

/** Two turns, a checkpoint, a fork: the fork's first request carries both, and its shell runs in its own dir. */
export async function forkRestores(b: CliBed, session: Session, f: CliFamilyCase): Promise<void> {
  await (await session.prompt("List the files here")).settled;
  if (f.appendOnly) await session.checkpoint();
  await (await session.prompt("NOTOOL second turn")).settled;
  // With appendOnly, this second checkpoint stores only what the CLI appended: it fails if the CLI rewrote an
  // earlier byte.
  f.checkpointFiles((await session.checkpoint()).files);
  const fork = await b.t.brain.fork(session.id);
  const before = b.sandbox.provider.requests.length;
  const turn = await fork.prompt("Where are we CMD[pwd]");
  expect((await turn.settled).status).toBe("completed");
  const history = historyOf(agentRequests(b.sandbox.provider.requests.slice(before))[0]!);
  expect(history).toContain("List the files here");
  expect(history).toContain("second turn");
  const pwd = (await events(fork)).find((e) => e.type === "tool.result");
  expect(JSON.stringify(pwd?.data)).toContain(join(b.t.store.paths(fork.id).native, "work"));
}

/**
 * `tool_mode: "bound"`: the model sees only the endpoint's tools; its echo call (good and bad arguments) is
 * Brain's logged `tool.call`, its call of the CLI's shell runs nothing and asks no one.
 */
export async function boundMode(b: CliBed, f: CliFamilyCase): Promise<void> {
  const bound = f.bound!;
  const session = await b.create({ config: { tool_mode: "bound", tools: ["echo"] } });
  const echo = await session.prompt(`Echo it CALL ${bound.echo} {"value":"bound hi"}`);
  expect((await echo.settled).status).toBe("completed");
  const offered = agentRequests(b.sandbox.provider.requests).map((r) => JSON.stringify(r.body.tools));
  expect(offered.length).toBeGreaterThan(0);
  for (const tools of offered) expect(tools).toContain("echo");
  for (const tools of offered) expect(tools).not.toContain(`"${bound.shell.name}"`);
  let all = await events(session);
  const warnings = all.filter((e) => e.type === "harness.warning").map((e) => JSON.stringify(e.data));
  expect(warnings.filter((w) => w.includes("tool endpoint"))).toEqual([]);
  const calls = all.filter((e) => e.type === "tool.call");
  expect(calls.map((e) => e.data)).toMatchObject([{ name: "echo", arguments: { value: "bound hi" } }]);
  const result = all.find((e) => e.type === "tool.result");
  expect(result?.data).toEqual({
    id: (calls[0]!.data as { id: string }).id,
    content: [{ type: "text", text: "bound hi" }],
    is_error: false,
  });
  const bad = await session.prompt(`Echo badly CALL ${bound.echo} {"wrong":1}`);
  expect((await bad.settled).status).toBe("completed");
  all = await events(session);
  const badResult = all.find((e) => e.type === "tool.result" && e.turn === bad.turn);
  if (bound.agentChecksArguments) {
    // The call never reached the endpoint: the model got the agent's own refusal, and Brain logged no call.
    expect(badResult).toBeUndefined();
    const history = historyOf(agentRequests(b.sandbox.provider.requests).at(-1)!);
    expect(history).toMatch(bound.agentChecksArguments);
  } else expect(JSON.stringify(badResult?.data)).toContain("invalid arguments for tool");
  const work = join(b.t.store.paths(session.id).native, "work");
  const shell = await session.prompt(
    `Run it CALL ${bound.shell.name} ${JSON.stringify(bound.shell.arguments)}`,
  );
  expect((await shell.settled).status).toBe("completed");
  expect(existsSync(join(work, "shell.txt"))).toBe(false);
  all = await events(session);
  expect(all.some((e) => e.type === "permission.requested")).toBe(false);
  const shellCalls = all.filter((e) => e.type === "tool.call" && e.turn === shell.turn);
  expect(shellCalls.map((e) => (e.data as { name: string }).name)).not.toContain("echo");
}
