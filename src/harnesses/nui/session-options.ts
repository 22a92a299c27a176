// What a nui-family harness reads from a session's `config.options` (harness-specific settings passed through
// untouched by the core): where the agent works and extra environment for the processes Brain starts.
import { z } from "zod";
import { HarnessError } from "../../core/harness.js";
import { describeIssues } from "../../protocol/frames.js";

const Options = z.object({
  /** The agent's working directory (`workingDir` in nui's run params). */
  working_dir: z.string().min(1).optional(),
  /** Variables for the processes Brain starts for this session (ADL `env` and `harness.env`). */
  env: z.record(z.string(), z.string()).optional(),
});

export interface NuiSessionOptions {
  workingDir?: string;
  env: Record<string, string>;
}

/** Reads the options every nui family shares; a wrong type is the caller's mistake, named with its fix. */
export function nuiSessionOptions(
  options: Record<string, unknown> | undefined,
  harness: string,
): NuiSessionOptions {
  const parsed = Options.safeParse(options ?? {});
  if (!parsed.success) {
    throw new HarnessError(
      "brain_error",
      `harness "${harness}": bad config.options: ${describeIssues(parsed.error)} (working_dir is a path, env maps names to strings)`,
    );
  }
  return {
    ...(parsed.data.working_dir ? { workingDir: parsed.data.working_dir } : {}),
    env: parsed.data.env ?? {},
  };
}
