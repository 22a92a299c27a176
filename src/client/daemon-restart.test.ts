// One-shot requests to a daemon that went away (kill -9) and was started again on the same port and $BRAIN_HOME:
// a real `brain serve`, the CLI as a real process and the client. Nothing listening is "cannot reach", with what
// to do; a request the daemon had taken when it died says so, and whether it may have run; a read is asked again.
import { type ChildProcess, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { commandKey } from "../core/command-keys.js";
import { freePort } from "../core/free-port.js";
import { readTokens, tokensPath } from "../server/auth/tokens.js";
import { until } from "../testing/processes.js";
import { killed, serve } from "../testing/serve-process.js";
import { BrainClient, ClientError } from "./client.js";

vi.setConfig({ testTimeout: 120_000 });

const bin = join(import.meta.dirname, "../../bin/brain.js");
const homes: string[] = [];
const daemons: ChildProcess[] = [];
afterEach(async () => {
  for (const child of daemons.splice(0)) await killed(child, "SIGTERM");
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

/** A daemon on a fresh home and a fixed port (a restart takes the same one), and the admin token it made. */
async function daemon() {
  const home = mkdtempSync(join(tmpdir(), "brain-restart-"));
  homes.push(home);
  const port = await freePort();
  const child = await serve(home, port);
  daemons.push(child);
  const url = `http://127.0.0.1:${port}`;
  const token = readTokens(tokensPath(home)).tokens[0]!.token;
  return { home, port, url, child, client: new BrainClient({ url, token }) };
}

/** Whether a connection to `port` holds bytes its server has not read (a stopped daemon's accept queue). */
function unreadRequestAt(port: number): boolean {
  const text = readFileSync("/proc/net/tcp", "utf8");
  return text
    .split("\n")
    .slice(1)
    .some((line) => {
      const fields = line.trim().split(/\s+/);
      const local = fields[1] ?? "";
      const unread = Number.parseInt((fields[4] ?? ":0").split(":")[1]!, 16);
      const established = fields[3] === "01";
      return established && Number.parseInt(local.slice(local.indexOf(":") + 1), 16) === port && unread > 0;
    });
}

/** Stops the daemon (SIGSTOP), starts `request`, and kills the daemon (kill -9) once it holds the request. */
async function diesHolding<T>(d: Awaited<ReturnType<typeof daemon>>, request: () => Promise<T>) {
  d.child.kill("SIGSTOP");
  const answer = request().then(
    () => undefined,
    (err: unknown) => err,
  );
  await until(() => unreadRequestAt(d.port));
  await killed(d.child, "SIGKILL");
  return answer;
}

function brain(home: string, args: string[]) {
  const run = spawnSync(process.execPath, [bin, ...args], {
    env: { ...process.env, BRAIN_HOME: home, BRAIN_URL: "", BRAIN_TOKEN: "" },
    encoding: "utf8",
    input: "",
  });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

it("after kill -9, `brain run --server` says nothing answers there and to start it; after a restart it goes on", async () => {
  const d = await daemon();
  const first = brain(d.home, ["run", "--server", d.url, "hello"]);
  expect(first.code, first.err).toBe(0);
  const id = /session (\S+)\n/.exec(first.err)![1]!;
  // The CLI's prompt carries a key of its own, so that the client may ask again after a restart.
  const prompts = (await d.client.log(id)).events.filter((e) => e.type === "user.prompt");
  expect(prompts.map(commandKey)).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/)]);
  // So does its create: asked again after a restart, it makes no second session.
  expect((await d.client.session(id)).idempotency?.key).toMatch(/^[0-9a-f-]{36}$/);
  await killed(d.child, "SIGKILL");

  const down = brain(d.home, ["run", "--server", d.url, "--session", id, "again"]);
  expect(down.code).toBe(1);
  expect(down.err).toContain(
    `cannot reach the daemon at ${d.url} (ECONNREFUSED): is \`brain serve\` running?`,
  );
  expect(down.err).not.toMatch(/\n\s+at /); // no stack

  daemons.push(await serve(d.home, d.port));
  const again = brain(d.home, ["run", "--server", d.url, "--session", id, "again"]);
  expect(again.code, again.err).toBe(0);
  expect(again.out).toBe("echo #2: again\n");
});

it("a command the daemon held when it was killed: says it may have run, not that the daemon cannot be reached", async () => {
  const d = await daemon();
  const { id } = await d.client.create({ harness: "echo" });
  const err = await diesHolding(d, () => d.client.prompt(id, "held"));
  expect(err).toBeInstanceOf(ClientError);
  const message = (err as ClientError).message;
  expect(message).toContain(
    `the daemon at ${d.url} closed the connection before it answered POST /v1/sessions/${id}/prompt`,
  );
  expect(message).toContain("may have carried it out; look");
  expect(message).not.toContain("cannot reach");

  // The new daemon on the same port and home has the session; this prompt never reached the old one's log.
  daemons.push(await serve(d.home, d.port));
  const log = await d.client.log(id);
  expect(log.events.filter((e) => e.type === "user.prompt")).toEqual([]);
  expect((await d.client.prompt(id, "now")).turn).toEqual(expect.any(String));
});

it("a keyed prompt the daemon held when it was killed is asked again once the daemon is back, and runs once", async () => {
  const d = await daemon();
  const { id } = await d.client.create({ harness: "echo" });
  // Waits for the restart as long as the test may: a loaded machine starts a daemon slowly.
  const client = new BrainClient({ ...d.client.options, restartWaitMs: 100_000 });
  let answer: Promise<unknown> | undefined;
  await diesHolding(d, () => {
    answer = client.prompt(id, "held", undefined, { key: "held-1" });
    return Promise.resolve(); // diesHolding returns once it killed the daemon; the prompt is still being asked
  });
  daemons.push(await serve(d.home, d.port));
  const { turn } = (await answer) as { turn: string };
  // Asked yet again with its key: the first answer, not a second run.
  expect((await client.prompt(id, "held", undefined, { key: "held-1" })).turn).toBe(turn);
  const prompts = (await client.log(id)).events.filter((e) => e.type === "user.prompt");
  expect(prompts.map((e) => [e.data.text, commandKey(e)])).toEqual([["held", "held-1"]]);
});

it("a keyed create the daemon held when it was killed is asked again once the daemon is back, and makes one session", async () => {
  const d = await daemon();
  const client = new BrainClient({ ...d.client.options, restartWaitMs: 100_000 });
  let answer: Promise<unknown> | undefined;
  await diesHolding(d, () => {
    answer = client.create({ harness: "echo" }, { key: "made-1" });
    return Promise.resolve();
  });
  daemons.push(await serve(d.home, d.port));
  const { id } = (await answer) as { id: string };
  expect((await client.create({ harness: "echo" }, { key: "made-1" })).id).toBe(id);
  expect((await client.sessions()).map((s) => s.id)).toEqual([id]);
});

it("a keyed delete the daemon held when it was killed is asked again once the daemon is back, and its retry is a 204", async () => {
  const d = await daemon();
  const { id } = await d.client.create({ harness: "echo" });
  const client = new BrainClient({ ...d.client.options, restartWaitMs: 100_000 });
  let answer: Promise<unknown> | undefined;
  await diesHolding(d, () => {
    answer = client.delete(id, { key: "gone-2" });
    return Promise.resolve();
  });
  daemons.push(await serve(d.home, d.port));
  await answer;
  // Asked yet again with its key: the first answer, not "no session".
  await client.delete(id, { key: "gone-2" });
  expect(await client.sessions()).toEqual([]);
});

it("a keyed command held by a daemon that does not come back still says it may have run", async () => {
  const d = await daemon();
  const { id } = await d.client.create({ harness: "echo" });
  const client = new BrainClient({ ...d.client.options, restartWaitMs: 0 });
  const err = await diesHolding(d, () => client.interrupt(id, { key: "gone-1" }));
  expect((err as ClientError).message).toContain("may have carried it out; look");
  expect((err as ClientError).message).toContain("(ECONNRESET)");
});

it("a read the daemon held when it was killed is asked again, and says what is true now: nothing listens", async () => {
  const d = await daemon();
  const client = new BrainClient({ ...d.client.options, restartWaitMs: 0 });
  const err = await diesHolding(d, () => client.sessions());
  expect(err).toBeInstanceOf(ClientError);
  // Asked again, it found nothing listening: not the reset of the connection the killed daemon had taken.
  expect((err as ClientError).message).toContain(
    `cannot reach the daemon at ${d.url} (ECONNREFUSED): is \`brain serve\` running? Start it`,
  );
});

it("a daemon of another $BRAIN_HOME on the port after kill -9: says it is not this home's daemon", async () => {
  const d = await daemon();
  const first = brain(d.home, ["run", "--server", d.url, "hello"]);
  const id = /session (\S+)\n/.exec(first.err)![1]!;
  await killed(d.child, "SIGKILL");
  const other = mkdtempSync(join(tmpdir(), "brain-restart-other-"));
  homes.push(other);
  daemons.push(await serve(other, d.port));

  const run = brain(d.home, ["run", "--server", d.url, "--session", id, "again"]);
  expect(run.code).toBe(1);
  expect(run.err).toContain(`the daemon at ${d.url} does not know the admin token of ${tokensPath(d.home)}`);
  expect(run.err).toContain("it is not the daemon of this $BRAIN_HOME");
  const token = readTokens(tokensPath(d.home)).tokens[0]!.token;
  expect(run.err).not.toContain(token);
});
