// `brain attach --json` with its stdout on a terminal (util-linux's script gives it one): JSON lines only.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { useTestDaemon } from "../../../testing/use-daemon.js";

const bin = join(import.meta.dirname, "../../../../bin/brain.js");
const t = useTestDaemon();
const remote = () => ["--server", t.url, "--token", t.tokens.admin];

it.runIf(existsSync("/usr/bin/script"))("writes only JSON lines with --json, on a terminal too", async () => {
  const client = t.client();
  const { id } = await client.create({ harness: "echo", config: { options: { delay_ms: 40 } } });
  await client.prompt(id, Array.from({ length: 20 }, (_, i) => `w${i}`).join(" "));
  // util-linux's script gives the CLI a terminal for stdout; stderr goes elsewhere.
  const command = [process.execPath, bin, "attach", id, ...remote(), "--until-settled", "--json"]
    .map((arg) => `'${arg}'`)
    .join(" ");
  const run = spawn("/usr/bin/script", ["-qec", `${command} 2>/dev/null`, "/dev/null"], {
    env: { ...process.env, BRAIN_HOME: t.home, BRAIN_URL: "", BRAIN_TOKEN: "" },
    stdio: ["ignore", "pipe", "ignore"],
  });
  let out = "";
  run.stdout.on("data", (c: Buffer) => {
    out += c;
  });
  expect(await new Promise((resolve) => run.once("exit", resolve))).toBe(0);
  const printed = out.split("\r\n").filter((line) => line !== "");
  expect(printed.length).toBeGreaterThan(3);
  for (const line of printed) expect(() => JSON.parse(line), JSON.stringify(line)).not.toThrow();
});
