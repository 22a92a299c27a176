// A real runner process on the built TypeScript runner SDK: a module that imports `serve` from dist and runs the
// test's runner code, written in a fresh directory, and (for the tests that speak the frames themselves) the child
// spawned with its stdout read as frames.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect } from "vitest";
import { decodeRunnerFrame } from "../../src/protocol/frames.js";
import { tempDir } from "../../src/testing/brain.js";
import { root } from "../../src/testing/nui.js";
import type { Frame } from "./harness.js";

/** Registers the removal of the directories after each test; returns what writes `code` as a runner module. */
export function useSdkRunnerFiles(): (prefix: string, code: string) => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return (prefix, code) => {
    const dir = tempDir(prefix);
    dirs.push(dir);
    const runner = join(dir, "runner.mjs");
    writeFileSync(
      runner,
      `import { serve } from ${JSON.stringify(join(root, "dist/sdk/ts/index.js"))};\n${code}`,
    );
    return runner;
  };
}

export interface SdkRunnerChild {
  child: ChildProcessWithoutNullStreams;
  /** Its exit code, once it has exited. */
  exited: Promise<number | null>;
  /** What it has written on stderr so far. */
  stderr(): string;
  /** The frames it has written so far, decoded with Brain's own decoder. */
  frames(): Frame[];
  /** The frame answering `id`, once written; fails (naming `what` and its stderr) if the runner exits first. */
  answer(id: string, what?: string): Promise<Frame>;
}

export function spawnSdkRunner(runner: string): SdkRunnerChild {
  const child = spawn(process.execPath, [runner], { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk;
  });
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk;
  });
  let exitedFirst = false;
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  void exited.then(() => {
    exitedFirst = true;
  });
  const frames = () =>
    stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => decodeRunnerFrame(line) as Frame);
  const answer = async (id: string, what = id) => {
    await expect
      .poll(() => exitedFirst || frames().some((frame) => frame.id === id), { timeout: 10_000 })
      .toBe(true);
    const found = frames().find((frame) => frame.id === id);
    if (!found) throw new Error(`the runner exited before answering ${what}; stderr: ${stderr}`);
    return found;
  };
  return { child, exited, stderr: () => stderr, frames, answer };
}

/** Runner code, before `serve`: what LEAK_OR_WAIT needs to know that the leak has been made. */
export const LEAK_MADE = `let made;
const leakMade = new Promise((resolve) => { made = resolve; });`;

/**
 * Runner code, in a prompt handler with `text`: "leak" leaks a rejection in a timer and never ends by itself; "wait"
 * goes on once that leak has been made and reported (the immediate after it).
 */
export const LEAK_OR_WAIT = `if (text === "leak") {
    setTimeout(() => { Promise.reject(new Error("leaked in a timer")); made(); }, 0);
    await new Promise(() => {});
  }
  if (text === "wait") {
    await leakMade;
    await new Promise((resolve) => setImmediate(resolve));
  }`;
