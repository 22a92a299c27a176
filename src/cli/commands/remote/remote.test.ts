// `brain run --server` and `brain attach` against a daemon over real HTTP: the CLI as a real process.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../protocol/events.js";
import { loadOrCreateTokens, newToken, tokensPath, writeTokens } from "../../../server/auth/tokens.js";
import { scripted } from "../../../testing/brain.js";
import { startTestDaemon } from "../../../testing/daemon.js";
import { collect, settled } from "../../../testing/http.js";
import { useTestDaemon } from "../../../testing/use-daemon.js";
import { UsageError } from "../../errors.js";
import { portOf } from "../serve.js";
import { serverToken } from "./connect.js";

const bin = join(import.meta.dirname, "../../../../bin/brain.js");
const t = useTestDaemon();

interface Run {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exit: Promise<number | null>;
}

function brain(args: string[], env: NodeJS.ProcessEnv = {}): Run {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, BRAIN_HOME: t.home, BRAIN_URL: "", BRAIN_TOKEN: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (c: Buffer) => {
    out += c;
  });
  child.stderr!.on("data", (c: Buffer) => {
    err += c;
  });
  return {
    child,
    out: () => out,
    err: () => err,
    exit: new Promise((resolve) => child.once("exit", resolve)),
  };
}

const remote = () => ["--server", t.url, "--token", t.tokens.admin];
const lines = (text: string) =>
  text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as SessionEvent);

async function until(run: Run, match: (out: string) => boolean): Promise<void> {
  while (!match(run.out())) {
    if (run.child.exitCode !== null) throw new Error(`exited early: ${run.err()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("brain run --server", () => {
  it("creates a session on the daemon, streams the reply and prints the session id", async () => {
    const run = brain(["run", ...remote(), "hello", "daemon"]);
    expect(await run.exit, run.err()).toBe(0);
    expect(run.out()).toBe("echo #1: hello daemon\n");
    const id = /session (\S+)\n/.exec(run.err())?.[1];
    expect((await t.client().session(id!)).harness).toBe("echo");
  });

  it("continues a session with --session, as JSON events", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    await brain(["run", ...remote(), "--session", id, "one"]).exit;
    const run = brain(["run", ...remote(), "--session", id, "--json", "two"]);
    expect(await run.exit, run.err()).toBe(0);
    const events = lines(run.out());
    expect(events[0]?.type).toBe("user.prompt");
    expect(events.at(-1)).toMatchObject({ type: "turn.settled", data: { status: "completed" } });
  });

  it("answers a permission request from --allow", async () => {
    const { id } = await t
      .client()
      .create({ harness: "echo", config: { tools: ["echo"] }, permissions: { tools: { echo: "ask" } } });
    const run = brain(["run", ...remote(), "--session", id, "--allow", "echo", "echo: allowed"]);
    expect(await run.exit, run.err()).toBe(0);
    expect(run.out()).toContain("echo returned: allowed");
    const events = await collect(t.client(), id, settled());
    expect(events.find((e) => e.type === "permission.resolved")?.data).toMatchObject({
      decision: "allow",
      reason: "--allow on the command line",
    });
  });

  it("says what is wrong: daemon unreachable, a bad URL, a bad token, an unknown harness", async () => {
    const down = brain(["run", "--server", "http://127.0.0.1:1", "--token", "x".repeat(20), "hi"]);
    expect(await down.exit).toBe(1);
    expect(down.err()).toContain("cannot reach the daemon at http://127.0.0.1:1");
    const bad = brain(["run", "--server", "ftp:/x", "hi"]);
    expect(await bad.exit).toBe(2);
    expect(bad.err()).toContain("--server takes the daemon's URL");
    const token = brain(["run", "--server", t.url, "--token", "y".repeat(30), "hi"]);
    expect(await token.exit).toBe(1);
    expect(token.err()).toContain("unknown bearer token");
    const harness = brain(["run", ...remote(), "--harness", "nope", "hi"]);
    expect(await harness.exit).toBe(1);
    expect(harness.err()).toContain('unknown harness "nope"');
  });

  it("refuses a token no header can carry without printing it, and takes one with a trailing newline", async () => {
    const pasted = `${t.tokens.admin}\n${"q".repeat(30)}`;
    for (const [args, env, from] of [
      [["--token", pasted], {}, "--token"],
      [[], { BRAIN_TOKEN: pasted }, "$BRAIN_TOKEN"],
    ] as const) {
      const run = brain(["run", "--server", t.url, ...args, "hi"], env);
      expect(await run.exit).toBe(2);
      expect(run.err()).toContain(`the token from ${from} cannot be sent: its character`);
      expect(run.err()).toContain("is a line break");
      expect(run.err()).not.toContain("cannot reach");
      expect(run.err() + run.out()).not.toContain("q".repeat(30));
      expect(run.err() + run.out()).not.toContain(t.tokens.admin);
    }
    const trailing = brain(["run", "--server", t.url, "hi"], { BRAIN_TOKEN: `${t.tokens.admin}\n` });
    expect(await trailing.exit, trailing.err()).toBe(0);
  });
});

describe("brain attach", () => {
  it("replays the session and follows the running turn until it settles", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo", config: { options: { delay_ms: 40 } } });
    const { turn } = await client.prompt(id, Array.from({ length: 250 }, (_, i) => `w${i}`).join(" "));
    await collect(client, id, (e) => e.type === "assistant.delta");
    const run = brain(["attach", id, ...remote(), "--until-settled", "--json"]);
    expect(await run.exit, run.err()).toBe(0);
    const events = lines(run.out());
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)).toMatchObject({ type: "turn.settled", turn, data: { status: "completed" } });
  });

  it("interrupts the turn on Ctrl-C (and exits with its status), detaches on a second", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo", config: { options: { delay_ms: 40 } } });
    const { turn } = await client.prompt(id, Array.from({ length: 300 }, (_, i) => `w${i}`).join(" "));
    const run = brain(["attach", id, ...remote(), "--until-settled"]);
    await until(run, (out) => out.includes("w2"));
    run.child.kill("SIGINT");
    expect(await run.exit).toBe(130);
    expect(run.err()).toContain("[interrupting the turn");
    const events = await collect(client, id, settled(turn));
    expect(events.at(-1)?.data).toEqual({ status: "interrupted" });

    const idle = brain(["attach", id, ...remote()]);
    await until(idle, (out) => out.includes("w2"));
    idle.child.kill("SIGINT");
    expect(await idle.exit).toBe(0);
    expect(idle.err()).toContain(`[detached; the session goes on: brain attach ${id}]`);
  });

  it("answers a request that is pending when it attaches, from --deny", async () => {
    const client = t.client();
    const { id } = await client.create({
      harness: "echo",
      config: { tools: ["echo"] },
      permissions: { tools: { echo: "ask" } },
    });
    const { turn } = await client.prompt(id, "echo: nope");
    await collect(client, id, (e) => e.type === "permission.requested");
    const run = brain(["attach", id, ...remote(), "--deny", "echo", "--until-settled"]);
    expect(await run.exit, run.err()).toBe(0);
    const events = await collect(client, id, settled(turn));
    expect(events.find((e) => e.type === "permission.resolved")?.data).toMatchObject({ decision: "deny" });
  });

  it("prints a compacted session's replies, each once", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    for (const text of ["one", "two"]) {
      const { turn } = await client.prompt(id, text);
      await collect(client, id, settled(turn));
    }
    await client.close(id);
    // Retention folds each completed turn's deltas into its message: the log keeps only the message's text.
    expect((await t.brain.compactIdle(0)).map((c) => c.id)).toContain(id);
    const run = brain(["attach", id, ...remote()]);
    await until(run, (out) => out.includes("echo #2: two"));
    run.child.kill("SIGINT");
    expect(await run.exit).toBe(0);
    expect(run.out()).toBe("echo #1: one\necho #2: two\n");
  });

  it("writes a tool name's control characters as escapes in its own lines on stderr", async () => {
    // The model chooses the name of a tool a CLI agent runs: an OSC 52 in it set the terminal's clipboard.
    const tool = "rm\x1b]52;c;ZWNobyBwd25lZA==\x07";
    const asking = scripted(async (options, turn) => {
      await options.permit(turn, { tool }, new AbortController().signal, { unlisted: "ask" });
    });
    const daemon = await startTestDaemon({ factories: [asking] });
    try {
      const client = daemon.client();
      const { id } = await client.create({ harness: "scripted" });
      await client.prompt(id, "go");
      const run = brain([
        "attach",
        id,
        "--server",
        daemon.url,
        "--token",
        daemon.tokens.admin,
        "--until-settled",
      ]);
      // Answered once the tail has said what it waits for: an ask timeout raced the CLI's start on a loaded
      // machine, and a tail that came after the turn settled waited for the next one.
      while (!run.err().includes("--allow")) {
        if (run.child.exitCode !== null) throw new Error(`exited early: ${run.err()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const [request] = (await client.session(id)).pending ?? [];
      await client.answer(id, request!.id, { decision: "deny" });
      expect(await run.exit, run.err()).toBe(0);
      expect(run.err()).toContain("(or run with --allow rm\\u001b]52;c;ZWNobyBwd25lZA==\\u0007)");
      expect(run.err()).not.toMatch(/[\x07\x1b]/);
    } finally {
      await daemon.cleanup();
    }
  });

  it("refuses a missing or unknown session id", async () => {
    const none = brain(["attach", ...remote()]);
    expect(await none.exit).toBe(2);
    expect(none.err()).toContain("attach needs a session ID");
    const ghost = brain(["attach", "ghost", ...remote()]);
    expect(await ghost.exit).toBe(1);
    expect(ghost.err()).toContain('no session "ghost"');
  });

  it("takes --after as a whole number only, refused before the daemon is asked", async () => {
    for (const sloppy of ["0x10", "1e3", "", "-1", "2.5"]) {
      const run = brain(["attach", "ghost", ...remote(), `--after=${sloppy}`]);
      expect(await run.exit).toBe(2);
      expect(run.err()).toContain(
        `--after takes the event seq to print events after (a whole number, 0 or more), not "${sloppy}"`,
      );
    }
  });
});

describe("the token the CLI sends", () => {
  /** A home whose tokens.json holds `admin` as the admin token. */
  const homeWith = (admin: string) => {
    const home = mkdtempSync(join(tmpdir(), "brain-connect-"));
    const { file } = loadOrCreateTokens(home);
    writeTokens(tokensPath(home), { ...file, tokens: [{ ...file.tokens[0]!, token: admin }] });
    return home;
  };
  // This machine's own non-loopback address: a listener a test can run that stands for a daemon elsewhere.
  const outside = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === "IPv4" && !a.internal)?.address;

  it("takes the admin token of tokens.json only for a loopback URL; elsewhere --token or $BRAIN_TOKEN", () => {
    const admin = newToken();
    const home = homeWith(admin);
    try {
      const env = { BRAIN_HOME: home };
      for (const url of [
        "http://127.0.0.1:7777",
        "http://127.4.5.6:1",
        "http://[::1]:7777",
        "http://localhost",
      ]) {
        expect(serverToken(undefined, url, env)).toBe(admin);
      }
      for (const url of ["http://192.0.2.2:7777", "https://brain.example", "http://[fd00::2]:7777"]) {
        expect(() => serverToken(undefined, url, env)).toThrow(UsageError);
        expect(() => serverToken(undefined, url, env)).toThrow("give it with --token or $BRAIN_TOKEN");
        expect(serverToken("given", url, env)).toBe("given");
        expect(serverToken(undefined, url, { ...env, BRAIN_TOKEN: "from-env" })).toBe("from-env");
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("sends the admin token of tokens.json to a daemon on loopback", async () => {
    const home = homeWith(t.tokens.admin);
    try {
      const run = brain(["run", "--server", t.url, "hello", "loopback"], { BRAIN_HOME: home });
      expect(await run.exit, run.err()).toBe(0);
      expect(run.out()).toBe("echo #1: hello loopback\n");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it.skipIf(!outside)(
    "never sends it to a daemon elsewhere: run, attach and acp ask for --token",
    async () => {
      const home = homeWith(newToken());
      const seen: (string | undefined)[] = [];
      const capture = createServer((req, res) => {
        seen.push(req.headers.authorization);
        res.writeHead(401, { "content-type": "application/json" });
        res.end('{"error":{"code":"unauthorized","message":"not this token"}}');
      });
      await new Promise<void>((resolve) => capture.listen(0, outside, resolve));
      const url = `http://${outside}:${(capture.address() as AddressInfo).port}`;
      try {
        for (const args of [["run", "hello"], ["attach", "some-session"], ["acp"]]) {
          const run = brain([...args, "--server", url], { BRAIN_HOME: home });
          expect(await run.exit, run.err()).toBe(2);
          expect(run.err()).toContain(
            `the daemon at ${url} needs its token: give it with --token or $BRAIN_TOKEN`,
          );
        }
        expect(seen).toEqual([]);
        const given = brain(["run", "hello", "--server", url, "--token", "its-own"], { BRAIN_HOME: home });
        expect(await given.exit).toBe(1);
        expect(seen).toEqual(["Bearer its-own"]);
      } finally {
        capture.close();
        rmSync(home, { recursive: true, force: true });
      }
    },
  );
});

describe("brain serve", () => {
  it("prints the web UI link with the token and how to get it again, serves, and stops on SIGTERM", async () => {
    const home = mkdtempSync(join(tmpdir(), "brain-serve-"));
    try {
      const run = brain(["serve", "--port", "0"], { BRAIN_HOME: home });
      await until(run, (out) => out.includes("stop with Ctrl-C"));
      const url = /brain daemon on (http:\/\/127\.0\.0\.1:\d+)/.exec(run.out())?.[1];
      const file = JSON.parse(readFileSync(join(home, "tokens.json"), "utf8")) as {
        tokens: { token: string }[];
      };
      const token = file.tokens[0]!.token;
      expect(run.out()).toContain(`web UI: ${url}/#token=${token}`);
      expect(run.out()).toContain("`brain token` prints it");
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      const who = await fetch(`${url}/v1/whoami`, { headers: { authorization: `Bearer ${token}` } });
      expect(await who.json()).toEqual({ tenant: "default", role: "controller", auth: true });
      run.child.kill("SIGTERM");
      expect(await run.exit).toBe(0);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("refuses --no-auth off loopback, and a bad port", async () => {
    const open = brain(["serve", "--no-auth", "--host", "0.0.0.0", "--port", "0"]);
    expect(await open.exit).toBe(1);
    expect(open.err()).toContain("--no-auth is only allowed on a loopback address");
    const port = brain(["serve", "--port", "http"]);
    expect(await port.exit).toBe(2);
    expect(port.err()).toContain(
      '--port takes a port from 0 to 65535 (a whole number, 0 or more), not "http"',
    );
    // Number() took these: " " as port 0 (any free port), the others as 16, 1000 and 7.
    for (const sloppy of [" ", "0x10", "1e3", "7.0", "-0"]) expect(() => portOf(sloppy)).toThrow(UsageError);
    expect(() => portOf("65536")).toThrow('--port takes a port from 0 to 65535, not "65536"');
    expect([portOf("0"), portOf("8080"), portOf(undefined)]).toEqual([0, 8080, 7777]);
  });
});

describe("brain token", () => {
  it("creates the token file (mode 0600) at first use, prints the admin token, adds tenant tokens", async () => {
    const home = mkdtempSync(join(tmpdir(), "brain-token-"));
    try {
      const first = brain(["token"], { BRAIN_HOME: home });
      expect(await first.exit).toBe(0);
      const admin = first.out().trim();
      expect(admin).toMatch(/^brain_[A-Za-z0-9_-]{43}$/);
      expect(statSync(join(home, "tokens.json")).mode & 0o777).toBe(0o600);
      const again = brain(["token"], { BRAIN_HOME: home });
      await again.exit;
      expect(again.out().trim()).toBe(admin);
      const added = brain(["token", "add", "--tenant", "acme", "--observer"], { BRAIN_HOME: home });
      expect(await added.exit).toBe(0);
      const file = JSON.parse(readFileSync(join(home, "tokens.json"), "utf8")) as { tokens: unknown[] };
      expect(file.tokens[1]).toEqual({ token: added.out().trim(), tenant: "acme", role: "observer" });
      const bad = brain(["token", "add", "--tenant", "no spaces"], { BRAIN_HOME: home });
      expect(await bad.exit).toBe(2);
      expect(bad.err()).toContain("--tenant takes 1 to 64 letters");
      writeFileSync(join(home, "tokens.json"), '{"tokens": []}');
      const broken = brain(["token"], { BRAIN_HOME: home });
      expect(await broken.exit).toBe(1);
      expect(broken.err()).toContain("tokens: needs at least one token");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
