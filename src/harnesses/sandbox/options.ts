// A session's sandbox settings, from `config.options` (an agent definition's `harness.sandbox`; operator-only,
// like every option a network client may not set). They are read here and taken out before the harness sees
// its options.
import { z } from "zod";
import { HarnessError, type HarnessOptions } from "../../core/harness.js";
import { describeIssues } from "../../protocol/frames.js";

const Options = z.looseObject({
  sandbox: z.enum(["none", "docker"]).default("none"),
  /** The image the sandbox runs (default: the base image scripts/docker-engine.sh builds). */
  sandbox_image: z.string().min(1).optional(),
  /** The CLI families' working directory, mounted into the container when it is outside the native dir. */
  cwd: z.string().optional(),
});
export type SandboxOptions = z.infer<typeof Options>;

const KEYS = ["sandbox", "sandbox_image"] as const;

export function sandboxOptions(
  options: Record<string, unknown> | undefined,
  harness: string,
): SandboxOptions {
  const parsed = Options.safeParse(options ?? {});
  if (!parsed.success) {
    throw new HarnessError(
      "brain_error",
      `harness "${harness}": config.options: ${describeIssues(parsed.error)}; sandbox is "none" or "docker" (an agent definition's harness.sandbox)`,
    );
  }
  return parsed.data;
}

export function withoutSandboxOptions(options: HarnessOptions): HarnessOptions {
  const own = options.config.options;
  if (!own || !KEYS.some((key) => key in own)) return options;
  const rest = Object.fromEntries(
    Object.entries(own).filter(([key]) => !(KEYS as readonly string[]).includes(key)),
  );
  return { ...options, config: { ...options.config, options: rest } };
}
