// `brain` run as a real process (bin/brain.js of the built tree) on a throwaway $BRAIN_HOME and working directory,
// both removed after the calling test file; for the tests of the command line itself.
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll } from "vitest";
import { tempDir } from "./brain.js";

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
