// `brain` run as a real process (bin/brain.js of the built tree) on a throwaway $BRAIN_HOME and working directory,
// both removed after the calling test file; for the tests of the command line itself.
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll } from "vitest";
import type { Session } from "../core/session.js";
import { makeBrain, tempDir } from "./brain.js";

export const root = join(import.meta.dirname, "../..");

export interface BrainCli {
  home: string;
  work: string;
  /**
   * Runs `brain <args>` to the end with no input, in `cwd` (the working directory unless given), with `env` added
   * to this process's environment.
   */
  run(
    args: string[],
    cwd?: string,
    env?: Record<string, string>,
  ): { code: number | null; out: string; err: string };
}

export function useBrainCli(name: string): BrainCli {
  const home = tempDir(`brain-${name}-`);
  const work = tempDir(`brain-${name}-work-`);
  afterAll(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });
  return {
    home,
    work,
    run(args, cwd = work, env = {}) {
      const result = spawnSync(process.execPath, [join(root, "bin/brain.js"), ...args], {
        cwd,
        env: { ...process.env, ...env, BRAIN_HOME: home },
        encoding: "utf8",
        input: "",
      });
      return { code: result.status, out: result.stdout, err: result.stderr };
    },
  };
}

/** The id `brain run` names on stderr ("session <id>"). */
export function sessionIdFrom(stderr: string): string {
  const id = /session (\S+)\n/.exec(stderr)?.[1];
  if (!id) throw new Error(`no session id in: ${stderr}`);
  return id;
}

/**
 * Makes an echo session in `home` (closed again before it returns its id), `fill` writing its log: the set-up of
 * the tests that read a long log through the command line.
 */
export async function echoSessionIn(
  home: string,
  fill: (session: Session) => Promise<void>,
): Promise<string> {
  const host = makeBrain({ home });
  try {
    const session = await host.brain.create({ harness: "echo" });
    await fill(session);
    return session.id;
  } finally {
    await host.cleanup();
  }
}

/** Appends `count` harness warnings to `session`'s log, a thousand at a time; `message(n)` is the n-th's, from 1. */
export async function appendWarnings(session: Session, count: number, message: (n: number) => string) {
  for (let written = 0; written < count; written += 1000) {
    const batch = Array.from({ length: Math.min(1000, count - written) }, (_, i) => ({
      type: "harness.warning" as const,
      data: { message: message(written + i + 1) },
    }));
    await session.log.append(batch);
  }
}
