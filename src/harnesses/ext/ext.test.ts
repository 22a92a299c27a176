// Extension harnesses end to end: nui extensions installed into a scratch $BRAIN_HOME, hosts on Brain's Python
// and TypeScript SDKs over stdio, TCP and HTTP, driven through real sessions.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NuiAgent, serveHttp } from "../../../sdk/ts/nui/index.js";
import type { Session } from "../../core/session.js";
import { events, textOf, waitForEvent } from "../../testing/brain.js";
import {
  asked,
  catalogFactories,
  fixtures,
  permissionAsked,
  root,
  tsAgent,
  useScratch,
  warnings,
  writeExtension,
} from "../../testing/nui.js";
import { installExtension } from "./install.js";

const { scratch, cleanups, brain: scratchBrain, closeBrain } = useScratch();

/** A Brain on a scratch home with `sources` installed as extensions; hosts get a scratch HOME too. */
async function brainWith(...sources: string[]) {
  const home = scratch("brain-ext-home-");
  const hostHome = scratch("brain-ext-hosthome-");
  for (const source of sources) await installExtension(source, join(home, "extensions"));
  const { factories, problems } = catalogFactories({ brainHome: home, hostHome });
  expect(problems).toEqual([]);
  const t = scratchBrain({ factories, home });
  return { brain: t.brain, store: t.store, home, hostHome };
}

const demoPy = join(fixtures, "extensions/demo-py");
const demoTcp = join(fixtures, "extensions/demo-tcp");

async function turnText(session: Session, prompt: string) {
  const turn = await session.prompt(prompt);
  const outcome = await turn.settled;
  return { outcome, text: textOf(await events(session), turn.turn), turn: turn.turn };
}

const pidOf = (text: string) => /pid=(\d+)/.exec(text)?.[1];

describe("stdio: a Python extension on sdk/python", () => {
  it("starts the host once per session and keeps it for every run; done's sessionId comes back", async () => {
    const { brain } = await brainWith(demoPy);
    const a = await brain.create({ harness: "ext:demo-py/echo" });
    const first = await turnText(a, "hello");
    expect(first.outcome.status).toBe("completed");
    expect(first.text).toMatch(/^You said: hello \(pid=\d+ run=1 session=\)$/);
    const second = await turnText(a, "again");
    expect(second.text).toMatch(/run=2 session=demo-conv-1\)$/);
    expect(pidOf(second.text)).toBe(pidOf(first.text));
    const b = await brain.create({ harness: "ext:demo-py/echo" });
    expect(pidOf((await turnText(b, "other")).text)).not.toBe(pidOf(first.text));
  });

  it("serves each harness of a multiplexing host by its id", async () => {
    const { brain } = await brainWith(demoPy);
    const session = await brain.create({ harness: "ext:demo-py/reverse" });
    expect((await turnText(session, "abc")).text).toMatch(/^cba /);
  });

  it("sets nui's environment variables for the host, and none of Brain's secrets", async () => {
    process.env.BRAIN_TEST_SECRET = "must-not-leak";
    try {
      const { brain, home } = await brainWith(demoPy);
      const session = await brain.create({ harness: "ext:demo-py/echo" });
      const env = JSON.parse((await turnText(session, "env")).text) as Record<string, string>;
      expect(env).toMatchObject({
        NUI_SESSION_ID: session.id,
        NUI_RUN_ID: env.runId,
        NUI_EXTENSION_DIR: join(home, "extensions/demo-py"),
        NUI_EXTENSION_NAME: "demo-py",
        NUI_HARNESS_ID: "echo",
        NUI_CONNECTION_ID: "ext-demo-py-echo",
        secret: "",
      });
      // A secret path segment, which the session's log never shows.
      expect(env.NUI_API_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\[redacted:NUI_API_URL token\]$/);
    } finally {
      delete process.env.BRAIN_TEST_SECRET;
    }
  });

  it("logs the agent's own tool calls, tool results and images as Brain events", async () => {
    const { brain } = await brainWith(demoPy);
    const session = await brain.create({ harness: "ext:demo-py/echo" });
    const { outcome, turn } = await turnText(session, "tools");
    expect(outcome.status).toBe("completed");
    const all = (await events(session)).filter((e) => e.turn === turn);
    expect(all.find((e) => e.type === "tool.call")?.data).toEqual({
      id: "call-1",
      name: "search",
      arguments: { q: "brain" },
    });
    expect(all.find((e) => e.type === "tool.result")?.data).toEqual({
      id: "call-1",
      content: [{ type: "text", text: "3 results" }],
      is_error: false,
    });
    expect(all.find((e) => e.type === "image")?.data).toEqual({ mime_type: "image/png", data: "aGVsbG8=" });
    expect(all.find((e) => e.type === "assistant.message")?.data).toMatchObject({ text: "done with tools" });
  });

  it("turns what run() raised into a failed turn (provider_error) naming it and where; the host stays", async () => {
    const { brain } = await brainWith(demoPy);
    const session = await brain.create({ harness: "ext:demo-py/echo" });
    const failed = await turnText(session, "fail");
    expect(failed.outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
    expect(failed.outcome.error?.message).toMatch(
      /^ext:demo-py\/echo: RuntimeError: the model is unavailable\n.*harness_host\.py", line \d+, in run\n/s,
    );
    expect((await turnText(session, "after")).text).toMatch(/run=2/);
  });

  it("a host that crashes mid-run fails the turn with brain_error and its stderr; the next turn starts a new host", async () => {
    const { brain } = await brainWith(demoPy);
    const session = await brain.create({ harness: "ext:demo-py/echo" });
    const before = pidOf((await turnText(session, "hi")).text);
    const crashed = await turnText(session, "crash");
    expect(crashed.outcome).toMatchObject({ status: "failed", error: { code: "brain_error" } });
    expect(crashed.outcome.error?.message).toMatch(/exited with code 3.*crashing on purpose/s);
    expect(crashed.text).toBe("about to crash");
    const after = await turnText(session, "back");
    expect(after.outcome.status).toBe("completed");
    expect(pidOf(after.text)).not.toBe(before);
  });

  it("cancels mid-run: harness.cancel reaches the working run, the turn is interrupted, the host is kept", async () => {
    const { brain } = await brainWith(demoPy);
    const session = await brain.create({ harness: "ext:demo-py/echo" });
    const turn = await session.prompt("slow");
    await waitForEvent(session, (e) => e.type === "assistant.delta" && e.turn === turn.turn);
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    expect(textOf(await events(session), turn.turn)).toBe("working");
    expect((await turnText(session, "next")).text).toMatch(/run=2/);
  });

  it("ask_user() through NUI_API_URL becomes a Brain question; the client's answer goes back as nui's response", async () => {
    const { brain } = await brainWith(demoPy);
    const session = await brain.create({ harness: "ext:demo-py/echo" });
    const turn = await session.prompt("ask");
    const question = await asked(session);
    expect(question.data).toMatchObject({ question: "Pick one", options: ["Continue", "Stop"] });
    await session.answer({ type: "question.answered", data: { id: question.data.id, answer: "Continue" } });
    expect((await turn.settled).status).toBe("completed");
    expect(textOf(await events(session), turn.turn)).toBe('status=answered answers={"Pick one": "Continue"}');
  });

  it("request_approval() becomes a permission request; a denial reaches the extension as declined", async () => {
    const { brain } = await brainWith(demoPy);
    const session = await brain.create({ harness: "ext:demo-py/echo" });
    const turn = await session.prompt("approve");
    const permission = await permissionAsked(session);
    expect(permission.data).toMatchObject({
      tool: "deploy",
      arguments: { env: "prod" },
      reason: "Deploy: Deploy to prod?",
    });
    await session.answer({
      type: "permission.resolved",
      data: { id: permission.data.id, decision: "deny", reason: "not today" },
    });
    await turn.settled;
    expect(textOf(await events(session), turn.turn)).toBe("status=declined");
  });

  it("without NUI_API_URL the SDK asks over the protocol, and Brain answers with harness.hitl_response", async () => {
    const { brain } = await brainWith(demoPy);
    const session = await brain.create({
      harness: "ext:demo-py/echo",
      config: { options: { env: { NUI_API_URL: "" } } },
    });
    const turn = await session.prompt("ask");
    const question = await asked(session);
    await session.answer({ type: "question.answered", data: { id: question.data.id, answer: "Stop" } });
    await turn.settled;
    expect(textOf(await events(session), turn.turn)).toBe('status=answered answers={"Pick one": "Stop"}');
  });

  it("a host that does not read cancel while it works (as nui's own SDK) is stopped after the grace period", async () => {
    const dir = scratch("brain-ext-src-");
    const src = writeExtension(dir, "sequential", {
      command: ["python3", join(fixtures, "sequential_host.py")],
    });
    const home = scratch("brain-ext-home-");
    await installExtension(src, join(home, "extensions"));
    const { factories } = catalogFactories({
      brainHome: home,
      hostHome: scratch("h-"),
      extensionTimeouts: { interruptGraceMs: 300 },
    });
    const t = scratchBrain({ factories, home });
    const session = await t.brain.create({ harness: "ext:sequential/echo" });
    const turn = await session.prompt("slow");
    await waitForEvent(session, (e) => e.type === "assistant.delta");
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    expect(warnings(await events(session)).join()).toMatch(
      /did not end the cancelled run within 300 ms; gave up on its host/,
    );
    expect((await turnText(session, "next")).outcome.status).toBe("completed");
  });

  it("a host kept across runs that tags HITL requests with its first NUI_RUN_ID (as nui's SDK) asks in each run", async () => {
    const dir = scratch("brain-ext-src-");
    const command = ["python3", join(fixtures, "stale_run_host.py")];
    const { brain } = await brainWith(writeExtension(dir, "stale", { command }));
    const session = await brain.create({ harness: "ext:stale/echo" });
    for (const pick of ["one", "two"]) {
      const turn = await session.prompt(pick);
      const question = await waitForEvent(
        session,
        (e) => e.type === "question.requested" && e.turn === turn.turn,
      );
      await session.answer({
        type: "question.answered",
        data: { id: (question.data as { id: string }).id, answer: pick },
      });
      expect((await turn.settled).status).toBe("completed");
      expect(textOf(await events(session), turn.turn)).toBe(`answered {"answer": "${pick}"}`);
    }
    expect(warnings(await events(session))).toEqual([]);
  });
});

describe("tcp: hosts found through their connection file", () => {
  it("starts the host from the manifest's command, shares it between sessions, and stops it when Brain closes", async () => {
    const { brain, hostHome } = await brainWith(demoTcp);
    const file = join(hostHome, ".nui/connections/ext-demo-tcp-echo.json");
    const a = await brain.create({ harness: "ext:demo-tcp/echo" });
    const b = await brain.create({ harness: "ext:demo-tcp/echo" });
    const first = await turnText(a, "one");
    expect(first.text).toMatch(/^tcp says: one \(pid=\d+ run=1\)$/);
    expect(existsSync(file)).toBe(true);
    expect(pidOf((await turnText(b, "two")).text)).toBe(pidOf(first.text));
    await closeBrain();
    expect(existsSync(file)).toBe(false); // the host removed it when it shut down
  });

  it("dials a host that already runs (no command), and reports a stale connection file instead of trusting it", async () => {
    const dir = scratch("brain-ext-src-");
    const src = writeExtension(dir, "running", { transport: "tcp" });
    const home = scratch("brain-ext-home-");
    const hostHome = scratch("brain-ext-hosthome-");
    await installExtension(src, join(home, "extensions"));
    const connections = join(hostHome, ".nui/connections");
    mkdirSync(connections, { recursive: true });
    // A connection file left by a host that is gone.
    const dead = spawn("true");
    await new Promise((resolve) => dead.once("exit", resolve));
    writeFileSync(
      join(connections, "ext-running-echo.json"),
      JSON.stringify({ host: "127.0.0.1", port: 9, session_id: "x", pid: dead.pid }),
    );
    const { factories } = catalogFactories({ brainHome: home, hostHome });
    const t = scratchBrain({ factories, home });
    const session = await t.brain.create({ harness: "ext:running/echo" });
    const stale = await turnText(session, "hi");
    expect(stale.outcome.error?.message).toMatch(
      new RegExp(`stale connection file .*ext-running-echo\\.json: its process ${dead.pid} is not running`),
    );
    const host = spawn("python3", [join(demoTcp, "tcp_host.py")], {
      env: {
        ...process.env,
        PYTHONPATH: join(root, "sdk/python"),
        HOME: hostHome,
        NUI_CONNECTION_ID: "ext-running-echo",
      },
      stdio: "ignore",
    });
    cleanups.push(() => void host.kill());
    await waitForFile(join(connections, "ext-running-echo.json"), host.pid);
    expect((await turnText(session, "hi")).text).toMatch(
      new RegExp(`^tcp says: hi \\(pid=${host.pid} run=1\\)$`),
    );
  });

  it("cancels mid-run over TCP, and restarts a host that crashed", async () => {
    const { brain } = await brainWith(demoTcp);
    const session = await brain.create({ harness: "ext:demo-tcp/echo" });
    const turn = await session.prompt("slow");
    await waitForEvent(session, (e) => e.type === "assistant.delta");
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    const before = pidOf((await turnText(session, "ok")).text);
    const crashed = await turnText(session, "crash");
    expect(crashed.outcome).toMatchObject({ status: "failed", error: { code: "brain_error" } });
    const after = await turnText(session, "back");
    expect(after.outcome.status).toBe("completed");
    expect(pidOf(after.text)).not.toBe(before);
  });
});

async function waitForFile(path: string, pid: number | undefined) {
  for (let i = 0; i < 400; i++) {
    try {
      const info = JSON.parse((await import("node:fs")).readFileSync(path, "utf8")) as { pid?: number };
      if (info.pid === pid) return;
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${path} never named pid ${pid}`);
}

describe("a TypeScript extension on sdk/ts", () => {
  async function tsBrain(transport: "stdio" | "tcp" | "http") {
    const dir = scratch("brain-ext-src-");
    const command = ["node", tsAgent, transport, ...(transport === "http" ? ["0"] : [])];
    return brainWith(writeExtension(dir, `ts-${transport}`, { transport, command }));
  }

  it.each(["stdio", "tcp", "http"] as const)(
    "runs over %s, resumes its session, and cancels mid-run",
    async (transport) => {
      const { brain } = await tsBrain(transport);
      const session = await brain.create({ harness: `ext:ts-${transport}/echo` });
      const first = await turnText(session, "one");
      expect(first.text).toMatch(/^ts says: one \(pid=\d+ run=1 session=\)$/);
      expect((await turnText(session, "two")).text).toMatch(/run=2 session=ts-conv-1\)$/);
      const turn = await session.prompt("slow");
      await waitForEvent(session, (e) => e.type === "assistant.delta" && e.turn === turn.turn);
      await session.interrupt();
      expect((await turn.settled).status).toBe("interrupted");
      expect(textOf(await events(session), turn.turn)).toBe("working");
      expect((await turnText(session, "after")).outcome.status).toBe("completed");
    },
  );

  it("fails the next turn loudly when the id of the host's conversation was lost (verified resume)", async () => {
    const { brain, store } = await tsBrain("stdio");
    const session = await brain.create({ harness: "ext:ts-stdio/echo" });
    expect((await turnText(session, "one")).outcome.status).toBe("completed");
    await brain.closeSession(session.id);
    rmSync(join(store.paths(session.id).native, "nui-session.json"));
    const lost = await turnText(await brain.session(session.id), "two");
    expect(lost.outcome).toMatchObject({ status: "failed", error: { code: "brain_error" } });
    expect(lost.outcome.error?.message).toMatch(
      /the conversation id of .* \(nui-session\.json\) is missing.*last prompt "one".*brain sessions rebuild/s,
    );
  });

  it.each([
    ["through NUI_API_URL", {}],
    ["over the protocol", { NUI_API_URL: "" }],
  ])("asks a person %s", async (_how, env) => {
    const { brain } = await tsBrain("stdio");
    const session = await brain.create({ harness: "ext:ts-stdio/echo", config: { options: { env } } });
    const turn = await session.prompt("ask");
    const question = await asked(session);
    expect(question.data.question).toBe("Your name?");
    await session.answer({ type: "question.answered", data: { id: question.data.id, answer: "Ada" } });
    await turn.settled;
    expect(textOf(await events(session), turn.turn)).toBe('status=answered answers={"Your name?":"Ada"}');
  });

  it("serveHttp has no authentication, so it listens on loopback unless told otherwise", async () => {
    class Echo extends NuiAgent {
      override name = "echo";
      async *run(message: string) {
        yield message;
      }
    }
    const local = await serveHttp(new Echo(), { port: 0, connectionFile: false });
    cleanups.push(() => local.close());
    const open = await serveHttp(new Echo(), { port: 0, host: "0.0.0.0", connectionFile: false });
    cleanups.push(() => open.close());
    expect((await fetch(`http://127.0.0.1:${local.port}/info`)).status).toBe(200);
    // Linux routes all of 127/8 to loopback: a server on every interface answers at 127.0.0.2, one on 127.0.0.1 not.
    expect((await fetch(`http://127.0.0.2:${open.port}/info`)).status).toBe(200);
    await expect(fetch(`http://127.0.0.2:${local.port}/info`)).rejects.toThrow();
  });

  it("a crashing TypeScript host is a brain_error with its stderr, and the session carries on", async () => {
    const { brain } = await tsBrain("stdio");
    const session = await brain.create({ harness: "ext:ts-stdio/echo" });
    const crashed = await turnText(session, "crash");
    expect(crashed.outcome).toMatchObject({ status: "failed", error: { code: "brain_error" } });
    expect(crashed.outcome.error?.message).toMatch(/exited with code 5.*crashing on purpose/s);
    expect((await turnText(session, "fine")).outcome.status).toBe("completed");
  });
});
