// The brain command end to end: a real process on a throwaway $BRAIN_HOME.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { Brain } from "../core/brain.js";
import { processStart } from "../core/process-identity.js";
import { HarnessRegistry } from "../core/registry.js";
import { FsSessionStore, type LogIO, nodeLogIO, readEventsFile } from "../store/fs/index.js";
import { echoFactory, tempDir } from "../testing/brain.js";
import { root, sessionIdFrom, useBrainCli } from "../testing/brain-cli.js";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, raw, settled } from "../testing/http.js";
import { BuiltinTools } from "../tools/builtin.js";
import { ToolRouter } from "../tools/router.js";
import { newSessionLayers, runPrompt } from "./run.js";

const cli = useBrainCli("cli");
const { home, work } = cli;
const brain = cli.run;

describe("brain run", () => {
  it("streams the reply, prints the session id and exits 0", () => {
    const { code, out, err } = brain(["run", "hello", "world"]);
    expect(code).toBe(0);
    expect(out).toBe("echo #1: hello world\n");
    expect(sessionIdFrom(err)).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("continues an existing session with --session, and prints one JSON event per line with --json", () => {
    const id = sessionIdFrom(brain(["run", "first"]).err);
    const { code, out } = brain(["run", "--session", id, "--json", "second"]);
    expect(code).toBe(0);
    const events = out
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(events.map((e) => e.type)).toContain("assistant.delta");
    expect(events.at(-1)).toMatchObject({ type: "turn.settled", session: id, data: { status: "completed" } });
    expect(
      events
        .filter((e) => e.type === "assistant.delta")
        .map((e) => e.data.text)
        .join(""),
    ).toBe("echo #2: second");
  });

  it("shows tool calls on stderr", () => {
    const { code, out, err } = brain(["run", "--tool", "echo", "echo: ping"]);
    expect(code).toBe(0);
    expect(err).toContain('[tool echo {"value":"ping"}]');
    expect(err).toContain("[tool result: ping]");
    expect(out).toContain("echo returned: ping");
  });

  it("denies an `ask` when no one can answer, saying how to allow it, and allows it with --allow", () => {
    const dir = join(work, "ask");
    mkdirSync(dir);
    const config = { defaults: { tools: ["echo"], permissions: { tools: { echo: "ask" } } } };
    writeFileSync(join(dir, "brain.config.json"), JSON.stringify(config));
    const denied = brain(["run", "echo: secret"], dir);
    expect(denied.code).toBe(0);
    expect(denied.err).toMatch(/permission to run tool "echo" was denied: no one to ask.*--allow echo/);
    const allowed = brain(["run", "--allow", "echo", "echo: fine"], dir);
    expect(allowed.err).toContain("[tool result: fine]");
  });
});

describe("sessions, checkpoints, restore and fork", () => {
  it("lists, shows and prints a session's events; checkpoints, restores and forks it", () => {
    const id = sessionIdFrom(brain(["run", "remember me"]).err);
    expect(brain(["sessions", "ls"]).out).toContain(id);
    const shown = JSON.parse(brain(["sessions", "show", id]).out);
    expect(shown).toMatchObject({ id, harness: "echo", pending: [], checkpoints: [] });
    expect(shown.events.at(-1).seq).toBe(shown.last_seq);
    expect(shown.events).toContainEqual(
      expect.objectContaining({ type: "turn.settled", data: { status: "completed" } }),
    );
    const events = brain(["sessions", "events", id, "--after", "2"])
      .out.trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events[0].seq).toBe(3);

    const checkpoint = brain(["checkpoint", id]);
    expect(checkpoint.code).toBe(0);
    expect(checkpoint.out).toMatch(/checkpoint 000001 .*\n {2}echo\.jsonl {2}\d+ bytes {2}\(append-only\)/);

    const into = join(work, "restored");
    expect(brain(["restore", id, "--into", into]).code).toBe(0);
    const native = join(home, "sessions", id, "native", "echo.jsonl");
    expect(readFileSync(join(into, "echo.jsonl"))).toEqual(readFileSync(native));

    const fork = brain(["fork", id]);
    expect(fork.code).toBe(0);
    const forkId = fork.out.trim();
    expect(brain(["run", "--session", forkId, "and now?"]).out).toBe("echo #2: and now?\n");
  });

  it("compacts a closed session: deltas of completed turns go, checkpoints, forks and the session carry on", () => {
    const id = sessionIdFrom(brain(["run", "one two three"]).err);
    expect(brain(["checkpoint", id]).code).toBe(0);
    const all = () =>
      brain(["sessions", "events", id])
        .out.trim()
        .split("\n")
        .map((l) => JSON.parse(l));
    const before = all();
    const compacted = brain(["sessions", "compact", id, "--json"]);
    expect(compacted.code).toBe(0);
    expect(JSON.parse(compacted.out)).toMatchObject({ eventsBefore: before.length, turns: 1 });
    const after = all();
    expect(after).toEqual(before.filter((e) => e.type !== "assistant.delta"));
    // A cursor inside the dropped deltas reads on from the next event kept.
    const firstDelta = before.find((e) => e.type === "assistant.delta").seq;
    const next = after.find((e) => e.seq > firstDelta);
    expect(
      JSON.parse(brain(["sessions", "events", id, "--after", String(firstDelta)]).out.split("\n")[0]!),
    ).toEqual(next);
    expect(brain(["run", "--session", id, "again"]).out).toBe("echo #2: again\n");
    const fork = brain(["fork", id]);
    expect(fork.code).toBe(0);
    expect(brain(["run", "--session", fork.out.trim(), "forked"]).out).toBe("echo #2: forked\n");
  }, 90_000); // ten CLI processes

  it("refuses to restore into a directory that is not empty", () => {
    const id = sessionIdFrom(brain(["run", "x"]).err);
    brain(["checkpoint", id]);
    const into = join(work, "full");
    mkdirSync(into);
    writeFileSync(join(into, "keep.txt"), "mine");
    const { code, err } = brain(["restore", id, "--into", into]);
    expect(code).toBe(1);
    expect(err).toMatch(/not empty/);
    expect(readFileSync(join(into, "keep.txt"), "utf8")).toBe("mine");
  });
});

describe("one writer per session", () => {
  it("refuses `brain run` on a session the daemon has open, saying to go through it; the log stays valid", async () => {
    const d = await startTestDaemon();
    try {
      const client = d.client();
      const { id } = await client.create({ harness: "echo" });
      await collect(client, id, settled((await client.prompt(id, "from the daemon")).turn));
      // Not spawnSync: the daemon in this process keeps serving while the CLI runs.
      const cli = spawn(process.execPath, [join(root, "bin/brain.js"), "run", "--session", id, "from cli"], {
        cwd: work,
        env: { ...process.env, BRAIN_HOME: d.home },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let err = "";
      cli.stderr.on("data", (chunk) => {
        err += chunk;
      });
      const code = await new Promise((resolve) => cli.once("exit", resolve));
      expect(code).toBe(1);
      expect(err).toContain(`session ${id} is open in the Brain daemon at ${d.url} (pid ${process.pid})`);
      expect(err).toContain(`brain run --server ${d.url} --session ${id}`);
      await collect(client, id, settled((await client.prompt(id, "again")).turn));
      const events = await readEventsFile(join(d.home, "sessions", id, "events.jsonl"));
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events.some((e) => e.type === "user.prompt" && e.data.text === "from cli")).toBe(false);
      expect(events.filter((e) => e.type === "turn.settled")).toHaveLength(2);
    } finally {
      await d.cleanup();
    }
  });
});

describe("a session a `brain run` has open", () => {
  it("is refused by the daemon with 409 naming the owner, not a 500", async () => {
    const d = await startTestDaemon();
    const holder = spawn(process.execPath, ["-e", "setInterval(() => {}, 1 << 30)"], { stdio: "ignore" });
    try {
      await new Promise((resolve) => holder.once("spawn", resolve));
      const client = d.client();
      const { id } = await client.create({ harness: "echo" });
      await client.close(id);
      const lock = {
        kind: "cli",
        pid: holder.pid,
        host: hostname(),
        start: processStart(holder.pid!),
        nonce: "x",
      };
      writeFileSync(join(d.home, "sessions", id, "events.jsonl.lock"), JSON.stringify(lock));
      const prompt = await raw(d.url, "POST", `/v1/sessions/${id}/prompt`, {
        token: d.tokens.admin,
        body: { text: "hi" },
      });
      expect(prompt.status).toBe(409);
      expect(JSON.stringify(prompt.body)).toContain(`open in another \`brain\` command (pid ${holder.pid})`);
    } finally {
      holder.kill("SIGKILL");
      await d.cleanup();
    }
  });
});

describe("a full disk", () => {
  it("makes `brain run` exit non-zero with the disk's error, not 0 with no output", async () => {
    const dir = tempDir("brain-cli-full-");
    let full = false;
    // The prompt fits; the reply and turn.settled do not (a disk that fills during the turn). It fills once the
    // prompt is durable (delivered), not at the write that holds it: with the store's journal on, a commit is
    // written twice (the log's file, then the journal's record), and the journal's write is the durable one.
    const io: LogIO = {
      ...nodeLogIO,
      write(fd, buffer, offset, length, position) {
        if (full) return Promise.reject(new Error("ENOSPC: no space left on device, write"));
        return nodeLogIO.write(fd, buffer, offset, length, position);
      },
    };
    const brain = new Brain({
      store: new FsSessionStore(dir, io),
      harnesses: new HarnessRegistry([echoFactory()]),
      tools: new ToolRouter([new BuiltinTools()]),
    });
    const written: string[] = [];
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    const stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    try {
      const options = { prompt: "hello", defaults: {}, json: false };
      const session = await brain.create(brain.resolveInput(newSessionLayers(options)));
      session.log.subscribe((events) => {
        if (events.some((e) => e.type === "turn.started")) full = true;
      });
      const code = await runPrompt(brain, { ...options, session: session.id });
      expect(code).toBe(1);
      expect(written.join("")).toMatch(/turn failed: brain_error: could not write the event log: .*ENOSPC/);
    } finally {
      stderr.mockRestore();
      stdout.mockRestore();
      await brain.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("bad input gets a clear error", () => {
  const withConfig = (text: string) => {
    const dir = tempDir("brain-cli-config-");
    writeFileSync(join(dir, "brain.config.json"), text);
    return dir;
  };

  it("names the config file when it is not JSON", () => {
    const { code, err } = brain(["run", "x"], withConfig("{ nope"));
    expect(code).toBe(2);
    expect(err).toMatch(/brain\.config\.json: not valid JSON/);
  });

  it("names the field and what is wrong", () => {
    const { code, err } = brain(
      ["run", "x"],
      withConfig(JSON.stringify({ harnesses: { pi: { command: 7 } } })),
    );
    expect(code).toBe(2);
    expect(err).toMatch(/brain\.config\.json: field "harnesses\.pi\.command"/);
    const unknown = brain(["run", "x"], withConfig(JSON.stringify({ harneses: {} })));
    expect(unknown.err).toMatch(/unknown field "harneses": the fields here are .*harnesses/);
    // A field of several types says which; a byte-order mark before the JSON is no error.
    expect(err).toMatch(/field "harnesses\.pi\.command": expected string or array/);
    const bom = brain(["run", "--harness", "echo", "x"], withConfig(`\uFEFF${JSON.stringify({})}`));
    expect(bom.code).toBe(0);
  });

  it("refuses a provider base_url with a user name or password, without quoting it", () => {
    const url = "http://alice:pw-0123456789@127.0.0.1:9/v1";
    for (const config of [
      { providers: { p: { api: "openai-chat", base_url: url } } },
      { defaults: { provider: { api: "openai-chat", base_url: url } } },
    ]) {
      const { code, err } = brain(["run", "x"], withConfig(JSON.stringify(config)));
      expect(code).toBe(2);
      expect(err).toMatch(
        /field "(providers\.p|defaults\.provider)\.base_url": holds a user name or password/,
      );
      expect(err).not.toContain("pw-0123456789");
    }
  });

  it("lists the known harnesses for an unknown one", () => {
    const { code, err } = brain(["run", "--harness", "nope", "x"]);
    expect(code).toBe(1);
    expect(err).toMatch(/unknown harness "nope"; known harnesses: .*echo/);
  });

  it("says a runner binary is missing", () => {
    const dir = withConfig(
      JSON.stringify({ harnesses: { ghost: { command: "no-such-runner-xyz --flag" } } }),
    );
    const { code, err } = brain(["run", "--harness", "ghost", "x"], dir);
    expect(code).toBe(1);
    expect(err).toMatch(/harness "ghost": runner program "no-such-runner-xyz" is not on PATH/);
  });

  it("names an unknown tool and lists the known ones", () => {
    const { code, err } = brain(["run", "--tool", "rm", "x"]);
    expect(code).toBe(1);
    expect(err).toMatch(/unknown tool "rm" in config\.tools; known tools: echo/);
  });

  it("answers an unknown command or a bad flag with usage and exit 2", () => {
    expect(brain(["frobnicate"])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/unknown command "frobnicate"[\s\S]*usage/),
    });
    expect(brain(["run", "--bogus", "x"]).code).toBe(2);
    expect(brain(["sessions", "show", "../../etc"]).err).toMatch(/bad session id/);
  });

  it("refuses a --config file that does not exist", () => {
    const { code, err } = brain(["run", "--config", "missing.json", "x"]);
    expect(code).toBe(2);
    expect(err).toMatch(/missing\.json: no such config file/);
    const dir = brain(["run", "--config", tempDir("brain-cli-config-"), "x"]);
    expect(dir.code).toBe(2);
    expect(dir.err).toMatch(/brain-cli-config-\w+: cannot be read \(EISDIR.*\): give --config a JSON file/);
  });
});

describe("brain conformance", () => {
  it("exits 0 for a conforming runner and 1 for a broken one, with a table", () => {
    const ok = brain(["conformance", "--", process.execPath, join(root, "dist/runners/echo/main.js")]);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/PASS {2}checkpoint fidelity/);
    const broken = brain([
      "conformance",
      "--",
      process.execPath,
      join(root, "dist/src/testing/fixtures/scripted-runner.js"),
      "--mode",
      "garbage",
    ]);
    expect(broken.code).toBe(1);
    expect(broken.out).toMatch(/FAIL {2}prompt/);
    expect(existsSync(join(root, "dist/src/testing/fixtures/scripted-runner.js"))).toBe(true);
  });
});

describe("named providers", () => {
  it("refuses a defaults.provider that names no configured provider, naming the field", () => {
    const dir = tempDir("brain-cli-providers-");
    writeFileSync(
      join(dir, "brain.config.json"),
      JSON.stringify({ providers: { a: { api_key_env: "A_KEY" } }, defaults: { provider: "b" } }),
    );
    const { code, err } = brain(["run", "hi"], dir);
    expect(code).not.toBe(0);
    expect(err).toContain(
      'field "defaults.provider": names provider "b", which is not in "providers" (configured: a)',
    );
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs on a configured provider by name (--provider), and refuses an unknown one listing the known", () => {
    const dir = tempDir("brain-cli-providers-");
    writeFileSync(
      join(dir, "brain.config.json"),
      JSON.stringify({ providers: { local: { api: "openai" } } }),
    );
    expect(brain(["run", "--provider", "local", "hi"], dir).code).toBe(0);
    const unknown = brain(["run", "--provider", "PATH", "hi"], dir);
    expect(unknown.code).not.toBe(0);
    expect(unknown.err).toContain('unknown provider "PATH" (configured: local)');
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("secrets the config sets literally", () => {
  it("are the secret-named variables of runner, CLI and extension env blocks", async () => {
    const { literalSecrets } = await import("./setup.js");
    const loaded = {
      dir: work,
      config: {
        harnesses: { r: { command: "x", env: { MY_TOKEN: "token-value-123", DEBUG: "verbose-mode" } } },
        cli: { codex: { env: { OPENAI_API_KEY: "sk-literal-456" } } },
      },
    };
    expect(literalSecrets(loaded, tempDir("brain-cli-home-"))).toEqual([
      { name: "MY_TOKEN", value: "token-value-123" },
      { name: "OPENAI_API_KEY", value: "sk-literal-456" },
    ]);
  });
});
