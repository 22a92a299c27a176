// Where Brain keeps its state, apart from harness-setup.ts so `brain run`'s first step (early-runner.ts) finds
// it without loading the harness catalog.
import { homedir } from "node:os";
import { join, resolve } from "node:path";

export function brainHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.BRAIN_HOME ? resolve(env.BRAIN_HOME) : join(homedir(), ".brain");
}
