// The conversation of an HTTP agent that keeps its state in the session's native dir (Brain's CLI agent server in
// a `docker` container with the native dir mounted, agent-server.ts): which of its files a checkpoint takes, and
// whether they hold what Brain's log says they should, are asked of the agent (POST /checkpoint, POST /verify),
// since it runs the CLI family that knows. What it lists is checked here before Brain reads a byte of it: paths
// relative and inside the native dir, never Brain's own resume file (the checkpoint store then refuses links,
// directories and sizes that do not match the disk).

import { pathProblem } from "../../core/checkpoints/paths.js";
import { type ExpectedHistory, HarnessError } from "../../core/harness.js";
import { describeIssues } from "../../protocol/frames.js";
import { NativeFile } from "../../protocol/runner.js";
import { RESUME_FILE } from "../nui/resume-state.js";
import type { HttpAgentClient } from "./client.js";

/** What /info must list for the agent to be asked. */
export const STATE_CAPABILITIES = ["checkpoint", "verify"] as const;

const CALL_MS = 60_000;

export class AgentState {
  constructor(private readonly client: HttpAgentClient) {}

  /**
   * Whether an agent that answered /info with `capabilities` keeps its state in the native dir: a list naming
   * both (nui's HTTP agents may send an object, which names no such thing).
   */
  static offered(capabilities: unknown): boolean {
    return Array.isArray(capabilities) && STATE_CAPABILITIES.every((c) => capabilities.includes(c));
  }

  /**
   * `settings`: the run's (sessionId, workingDir, model, systemPrompt; the working dir decides where some CLIs file
   * a transcript), so the agent opens its session as a run would.
   */
  async files(settings: Record<string, unknown>): Promise<NativeFile[]> {
    const answer = await this.client.call("/checkpoint", settings, CALL_MS);
    const parsed = NativeFile.array().safeParse(answer.files);
    if (!parsed.success) {
      throw new HarnessError(
        "brain_error",
        `${this.client.name}: POST /checkpoint must answer {files: [{path, size, append_only}]}: ${describeIssues(parsed.error)}`,
      );
    }
    const seen = new Set<string>();
    return parsed.data.filter((file) => {
      const problem = file.path === RESUME_FILE ? "it is Brain's own resume file" : pathProblem(file.path);
      if (problem) {
        throw new HarnessError(
          "brain_error",
          `${this.client.name}: POST /checkpoint listed ${JSON.stringify(file.path)}, which Brain refuses: ${problem}`,
        );
      }
      if (seen.has(file.path)) return false;
      seen.add(file.path);
      return true;
    });
  }

  async missing(settings: Record<string, unknown>, expected: ExpectedHistory): Promise<string | undefined> {
    const answer = await this.client.call("/verify", { ...settings, expected }, CALL_MS);
    if (answer.missing === null || answer.missing === undefined) return undefined;
    return `${this.client.name}: ${String(answer.missing)}`;
  }
}
