// `brain attach` on a terminal (util-linux's script gives it one), asking the person for a permission: a Ctrl-C at
// the question interrupts the turn, as a Ctrl-C anywhere else does.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { collect, settled } from "../../../testing/http.js";
import { useTestDaemon } from "../../../testing/use-daemon.js";

const bin = join(import.meta.dirname, "../../../../bin/brain.js");
const t = useTestDaemon();

it.runIf(existsSync("/usr/bin/script"))(
  "interrupts the turn on a Ctrl-C typed at a permission question",
  async () => {
    const client = t.client();
    const { id } = await client.create({
      harness: "echo",
      config: { tools: ["echo"] },
      // Long enough that only the Ctrl-C can end the wait for an answer.
      permissions: { tools: { echo: "ask" }, ask_timeout_ms: 15_000 },
    });
    const { turn } = await client.prompt(id, "echo: hi");
    const command = [process.execPath, bin, "attach", id, "--server", t.url, "--token", t.tokens.admin]
      .map((arg) => `'${arg}'`)
      .join(" ");
    const run = spawn("/usr/bin/script", ["-qec", command, "/dev/null"], {
      env: { ...process.env, BRAIN_HOME: t.home, BRAIN_URL: "", BRAIN_TOKEN: "" },
      stdio: ["pipe", "pipe", "ignore"],
    });
    try {
      let out = "";
      const asked = new Promise<void>((resolve) => {
        run.stdout.on("data", (chunk: Buffer) => {
          out += chunk;
          if (out.includes("[y/N]")) resolve();
        });
      });
      const done = collect(client, id, settled(turn));
      await asked;
      run.stdin.write("\x03");
      // It was read as a key: the question was dropped as answered elsewhere, and the turn ran on to its ask timeout.
      expect((await done).at(-1)).toMatchObject({ type: "turn.settled", data: { status: "interrupted" } });
    } finally {
      run.kill("SIGKILL");
    }
  },
);
