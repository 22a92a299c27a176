// `brain sessions events ID` on a log far larger than its heap: printed a page at a time, in order, whole.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { appendWarnings, echoSessionIn, root, useBrainCli } from "../testing/brain-cli.js";

const cli = useBrainCli("cli-events");
/** 24,000 warnings of 4 KiB: a 100 MB log, printed by a brain whose heap may hold 48 MB. */
const EVENTS = 24_000;
const TEXT = "x".repeat(4096);

let id: string;
beforeAll(async () => {
  id = await echoSessionIn(cli.home, (session) => appendWarnings(session, EVENTS, (n) => `${n} ${TEXT}`));
}, 120_000);

/** Runs `brain sessions events` with a small heap, counting its lines instead of keeping them. */
function printed(
  args: string[],
): Promise<{ code: number | null; lines: number; seqs: number[]; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--max-old-space-size=48", join(root, "bin/brain.js"), ...args], {
      env: { ...process.env, BRAIN_HOME: cli.home },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let lines = 0;
    let rest = "";
    const seqs: number[] = [];
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop()!;
      for (const line of parts) {
        lines++;
        // Only the seq: the lines themselves would fill this process as they filled brain's.
        seqs.push(Number(/"seq":(\d+)/.exec(line)?.[1]));
      }
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      err += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, lines, seqs, err }));
  });
}

const ascending = (seqs: number[]) => seqs.every((seq, i) => i === 0 || seq === seqs[i - 1]! + 1);

describe("brain sessions events", () => {
  it("prints a log larger than its heap whole and in order, a page at a time", async () => {
    const all = await printed(["sessions", "events", id]);
    expect(all.err).toBe("");
    expect(all.code).toBe(0);
    expect(all.lines).toBeGreaterThan(EVENTS);
    expect(all.seqs[0]).toBe(1);
    expect(ascending(all.seqs)).toBe(true);

    const after = await printed(["sessions", "events", id, "--after", "20000"]);
    expect(after.code, after.err).toBe(0);
    expect(after.seqs[0]).toBe(20_001);
    expect(after.seqs.at(-1)).toBe(all.seqs.at(-1));
    expect(ascending(after.seqs)).toBe(true);
  }, 120_000);
});
