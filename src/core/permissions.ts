import type { PermissionDecision, PermissionPolicy } from "../protocol/permissions.js";

/** No answer in a minute: deny, so an unattended session never hangs. */
export const DEFAULT_ASK_TIMEOUT_MS = 60_000;

function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${body}$`);
}

export class PermissionRules {
  private readonly rules: [RegExp, PermissionDecision][];
  readonly askTimeoutMs: number;

  constructor(private readonly policy: PermissionPolicy = {}) {
    this.rules = Object.entries(policy.tools ?? {}).map(([glob, decision]) => [globToRegExp(glob), decision]);
    this.askTimeoutMs = policy.ask_timeout_ms ?? DEFAULT_ASK_TIMEOUT_MS;
  }

  /** `unlisted` applies when no rule names the tool and the policy sets no default. */
  decide(tool: string, unlisted: PermissionDecision = "allow"): PermissionDecision {
    for (const [pattern, decision] of this.rules) if (pattern.test(tool)) return decision;
    return this.policy.default ?? unlisted;
  }
}
