// What every CLI family accepts: from the host's config (which program, a launcher, extra environment) and from
// a session's `config.options` (its working directory and extra command-line flags).
import { existsSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { z } from "zod";
import { type ContainerUser, HarnessError } from "../../core/harness.js";
import { describeIssues } from "../../protocol/frames.js";
import type { SessionConfig } from "../../protocol/runner.js";
import { makeAgentDirSync } from "../agent-files.js";

/** Host-side settings of one CLI family (brain.config.json `cli.<family>`, or the factory's constructor). */
export interface CliFactoryOptions {
  /** The program: a path, or a name looked up in node_modules/.bin and PATH. Default: the family's CLI. */
  bin?: string;
  /**
   * Words run in front of the CLI, e.g. a sandbox such as `["unshare", "-n", …]`. The CLI's own command line
   * follows them.
   */
  launcher?: string[];
  /** Added to the CLI's environment. Provider keys belong in the provider settings, not here. */
  env?: Record<string, string>;
  /**
   * False: the CLI holds the provider's key itself, not a token of Brain's credential proxy (./credential-proxy.ts);
   * for a launcher that cuts the CLI off from this host's 127.0.0.1, or a setup that needs the key. Default true.
   */
  credentialProxy?: boolean;
}

/** No command line can carry one: the spawn would fail with "args[6] must be a string without null bytes". */
const NUL_ARG = "holds a NUL character, which no command-line argument can carry";

/** Session options the CLI families understand; other keys are left for other harnesses. */
export const CliSessionOptions = z.looseObject({
  /** The directory the agent works in (absolute, existing). Default: `<native dir>/work`, created empty. */
  cwd: z.string().min(1).optional(),
  /** Extra command-line flags, appended to the ones the harness passes. */
  args: z.array(z.string().refine((arg) => !arg.includes("\0"), NUL_ARG)).optional(),
});
export type CliSessionOptions = z.infer<typeof CliSessionOptions>;

export function sessionOptions(label: string, config: SessionConfig): CliSessionOptions {
  // The model goes on some CLIs' command lines (pi, claude): refused here for all, as no model's name has one.
  if (config.model?.includes("\0")) {
    throw new HarnessError("brain_error", `${label}: the session's model (config.model) ${NUL_ARG}`);
  }
  const parsed = CliSessionOptions.safeParse(config.options ?? {});
  if (!parsed.success) {
    throw new HarnessError("brain_error", `${label}: bad session options: ${describeIssues(parsed.error)}`);
  }
  return parsed.data;
}

/** The agent's working directory: `options.cwd`, checked, or `<native>/work`, created. */
export function workingDir(
  label: string,
  nativeDir: string,
  options: CliSessionOptions,
  owner?: ContainerUser,
): string {
  if (options.cwd === undefined) {
    // Not a link an agent swapped in: the CLI, on the host, would work (and write) wherever it leads. Made, it is
    // the user's the CLI runs as.
    makeAgentDirSync(nativeDir, "work", owner);
    return join(nativeDir, "work");
  }
  if (!isAbsolute(options.cwd)) {
    throw new HarnessError(
      "brain_error",
      `${label}: options.cwd must be an absolute path, got "${options.cwd}"`,
    );
  }
  if (!existsSync(options.cwd) || !statSync(options.cwd).isDirectory()) {
    throw new HarnessError(
      "brain_error",
      `${label}: options.cwd "${options.cwd}" is not an existing directory; create it or fix the path`,
    );
  }
  return options.cwd;
}
