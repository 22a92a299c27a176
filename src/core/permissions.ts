import type { PermissionDecision, PermissionPolicy } from "../protocol/permissions.js";

/** No answer in a minute: deny, so an unattended session never hangs. */
export const DEFAULT_ASK_TIMEOUT_MS = 60_000;

/** How strict each decision is: a combination of policies takes the strictest. */
const STRICTNESS: Record<PermissionDecision, number> = { allow: 0, ask: 1, deny: 2 };

/**
 * Whether `name` matches `glob` (`*`: any run of characters, `?`: any one; everything else itself). Matched
 * here, not as a RegExp: a client's policy is a network caller's input, and `*?*?*?…!` as `^.*..*..*.…!$` tries
 * every way to split a name (C(51, 14) ways for the 51 characters of claude-code's `brain-unlisted-<uuid>`),
 * holding the daemon's loop for every session. This takes at most glob × name steps: on a mismatch after a `*`,
 * only that last `*` takes one more character.
 */
export function globMatches(glob: string, name: string): boolean {
  let g = 0;
  let n = 0;
  let star = -1;
  let resume = 0;
  while (n < name.length) {
    if (g < glob.length && glob[g] === "*") {
      star = g++;
      resume = n;
    } else if (g < glob.length && (glob[g] === "?" || glob[g] === name[n])) {
      g++;
      n++;
    } else if (star >= 0) {
      g = star + 1;
      n = ++resume;
    } else return false;
  }
  while (glob[g] === "*") g++;
  return g === glob.length;
}

/** One policy's rules: the first glob that matches decides, else its default, else the caller's `unlisted`. */
function policyRules(
  policy: PermissionPolicy,
): (tool: string, unlisted: PermissionDecision) => PermissionDecision {
  const rules = Object.entries(policy.tools ?? {});
  return (tool, unlisted) => {
    for (const [glob, decision] of rules) if (globMatches(glob, tool)) return decision;
    return policy.default ?? unlisted;
  };
}

/**
 * A session's permission policy: the operator's, and optionally a client's that may only tighten it (a network
 * caller's own choice). Each is evaluated whole, as it would be alone, and the stricter verdict wins
 * (deny > ask > allow), so no client policy, whatever its globs and default, can loosen the operator's verdict
 * on any tool. The two are not merged into one rule list: the intersection of two globs is not a glob.
 */
export class PermissionRules {
  private readonly layers: ((tool: string, unlisted: PermissionDecision) => PermissionDecision)[];
  /**
   * The operator's ask timeout (or the default), shortened by the client's if it sets a shorter one: an ask that
   * times out is denied, so a shorter wait is the stricter one, and a client cannot lengthen it.
   */
  readonly askTimeoutMs: number;

  constructor(operator: PermissionPolicy = {}, client?: PermissionPolicy) {
    this.layers = [policyRules(operator), ...(client ? [policyRules(client)] : [])];
    this.askTimeoutMs = Math.min(
      operator.ask_timeout_ms ?? DEFAULT_ASK_TIMEOUT_MS,
      client?.ask_timeout_ms ?? Number.POSITIVE_INFINITY,
    );
  }

  /** `unlisted` applies, in each policy, when no rule names the tool and that policy sets no default. */
  decide(tool: string, unlisted: PermissionDecision = "allow"): PermissionDecision {
    let verdict: PermissionDecision = "allow";
    for (const layer of this.layers) {
      const decision = layer(tool, unlisted);
      if (STRICTNESS[decision] > STRICTNESS[verdict]) verdict = decision;
    }
    return verdict;
  }
}
