// `brain attach` on a terminal (util-linux's script gives it one), asking the person for a permission: a Ctrl-C at
// the question interrupts the turn, as a Ctrl-C anywhere else does; a question withdrawn says why.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { collect, settled } from "../../../testing/http.js";
import { useTestDaemon } from "../../../testing/use-daemon.js";

const bin = join(import.meta.dirname, "../../../../bin/brain.js");
const t = useTestDaemon();

/** `brain attach` on a terminal to a session whose echo tool it is asked about, once its question shows. */
async function askedOnTerminal(askTimeoutMs: number) {
  const client = t.client();
  const { id } = await client.create({
    harness: "echo",
    config: { tools: ["echo"] },
    permissions: { tools: { echo: "ask" }, ask_timeout_ms: askTimeoutMs },
  });
  const { turn } = await client.prompt(id, "echo: hi");
  const command = [process.execPath, bin, "attach", id, "--server", t.url, "--token", t.tokens.admin]
    .map((arg) => `'${arg}'`)
    .join(" ");
  const run: ChildProcess = spawn("/usr/bin/script", ["-qec", command, "/dev/null"], {
    env: { ...process.env, BRAIN_HOME: t.home, BRAIN_URL: "", BRAIN_TOKEN: "" },
    stdio: ["pipe", "pipe", "ignore"],
  });
  let out = "";
  const waiters: { text: string; resolve: () => void }[] = [];
  run.stdout!.on("data", (chunk: Buffer) => {
    out += chunk;
    for (const waiter of waiters) if (out.includes(waiter.text)) waiter.resolve();
  });
  const printed = (text: string) =>
    new Promise<void>((resolve) => {
      waiters.push({ text, resolve });
      if (out.includes(text)) resolve();
    });
  const done = collect(client, id, settled(turn));
  await printed("[y/N]");
  return { run, done, printed, out: () => out };
}

describe.runIf(existsSync("/usr/bin/script"))("brain attach asking at a terminal", () => {
  it("interrupts the turn on a Ctrl-C typed at a permission question", async () => {
    // Long enough that only the Ctrl-C can end the wait for an answer.
    const { run, done } = await askedOnTerminal(15_000);
    try {
      run.stdin!.write("\x03");
      // It was read as a key: the question was dropped as answered elsewhere, and the turn ran on to its ask timeout.
      expect((await done).at(-1)).toMatchObject({ type: "turn.settled", data: { status: "interrupted" } });
    } finally {
      run.kill("SIGKILL");
    }
  });

  it("says why a question is no longer asked: here, no client answered in time", async () => {
    const { run, done, printed, out } = await askedOnTerminal(1000);
    try {
      await Promise.race([printed("[no longer asked"), printed("[answered by another client]")]);
      // No other client answered: the ask timeout did.
      expect(out()).toContain("[no longer asked: no client answered within 1 s]");
      await done;
    } finally {
      run.kill("SIGKILL");
    }
  });
});
