// `brain attach` while its daemon is down (kill -9) and after it is started again on the same port and home: a real
// `brain serve` and the CLI as real processes. It keeps retrying, and says so once, not on every try.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { freePort } from "../../../core/free-port.js";
import { until } from "../../../testing/processes.js";
import { killed, serve } from "../../../testing/serve-process.js";

vi.setConfig({ testTimeout: 120_000 });

const bin = join(import.meta.dirname, "../../../../bin/brain.js");
const homes: string[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) await killed(child, "SIGKILL");
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function brain(home: string, args: string[]) {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, BRAIN_HOME: home, BRAIN_URL: "", BRAIN_TOKEN: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    out += chunk;
  });
  child.stderr!.on("data", (chunk: Buffer) => {
    err += chunk;
  });
  const exit = new Promise<number | null>((done) => child.once("exit", done));
  return { child, out: () => out, err: () => err, exit };
}

const lines = (text: string) => text.split("\n").filter((line) => line.trim() !== "");

it("`brain attach` says once that it lost the daemon and retries, says when it is back, and follows on", async () => {
  const home = mkdtempSync(join(tmpdir(), "brain-daemon-lost-"));
  homes.push(home);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let daemon = await serve(home, port);
  children.push(daemon);
  const first = brain(home, ["run", "--server", url, "hello"]);
  expect(await first.exit, first.err()).toBe(0);
  const id = /session (\S+)\n/.exec(first.err())![1]!;

  const attach = brain(home, ["attach", id, "--server", url]);
  await until(() => attach.out().includes("echo #1: hello"));
  const attached = lines(attach.err()).length;
  await killed(daemon, "SIGKILL");
  await until(() => lines(attach.err()).length > attached);
  // Down for a while: each try used to print a line of its own (one a second, or faster).
  await new Promise((resolve) => setTimeout(resolve, 8000));
  const down = lines(attach.err()).slice(attached);
  // The first try after the drop may fail otherwise than the drop did (refused, not broken): said once more.
  expect(down.length, down.join("\n")).toBeLessThanOrEqual(2);
  expect(down[0]).toMatch(
    new RegExp(`^\\[lost the daemon at ${url} \\(.+\\); retrying until it is back \\(Ctrl-C to stop\\)\\]$`),
  );
  expect(down.slice(1)).toEqual(down.slice(1).map(() => expect.stringMatching(/^\[still retrying: .+\]$/)));

  daemon = await serve(home, port);
  children.push(daemon);
  await until(() => attach.err().includes("[reconnected"));
  expect(lines(attach.err()).slice(attached + down.length)).toEqual([
    expect.stringMatching(
      new RegExp(`^\\[reconnected to the daemon at ${url}; following from event \\d+\\]$`),
    ),
  ]);
  // It follows the session on the new daemon.
  const again = brain(home, ["run", "--server", url, "--session", id, "again"]);
  expect(await again.exit, again.err()).toBe(0);
  await until(() => attach.out().includes("echo #2: again"));
  expect(attach.child.exitCode).toBeNull();
});
