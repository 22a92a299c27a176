import { MCP_TOOL_NAME_CHARS, MCP_TOOL_NAME_MAX, MCP_TOOL_SEPARATOR } from "../protocol/config.js";
import type { PermissionDecision, PermissionPolicy } from "../protocol/permissions.js";
import { SessionError } from "./errors.js";

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

/** A glob character no MCP tool's session name can hold (the glob's own `*` and `?` aside). */
const NOT_IN_MCP_NAME = new RegExp(`[^${MCP_TOOL_NAME_CHARS}*?]`, "g");

/**
 * Refuses a rule in an MCP server's namespace (`server__…`) that no tool's session name can match: one written
 * with the server's own tool name (`fx__write.file`, whose tool the session calls `fx__write_file`), or longer
 * than a session name can be. Rules are matched against session names only, so such a rule, a deny above all,
 * would silently never apply and the tool would fall to the default. Refused rather than also matched against
 * the server's names: the session name is what every family, tool.call event and client sees, and one rule
 * matched against two names could allow a tool the operator only meant to name another way. `field`: where the
 * policy came from (`permissions`, `client_permissions`).
 */
export function refuseUnmatchableRules(
  policy: PermissionPolicy | undefined,
  servers: readonly string[],
  field: string,
): void {
  for (const glob of Object.keys(policy?.tools ?? {})) {
    const server = servers.find((s) => glob.startsWith(`${s}${MCP_TOOL_SEPARATOR}`));
    if (server === undefined) continue;
    const prefix = `${server}${MCP_TOOL_SEPARATOR}`;
    const renamed = prefix + glob.slice(prefix.length).replace(NOT_IN_MCP_NAME, "_");
    const tooLong = !glob.includes("*") && glob.length > MCP_TOOL_NAME_MAX;
    if (renamed === glob && !tooLong) continue;
    const fixed = tooLong ? renamed.slice(0, MCP_TOOL_NAME_MAX) : renamed;
    const why =
      renamed !== glob
        ? `names MCP server "${server}"'s tool by the server's own name, but the session's name for it has only letters, digits, '_' and '-' (others become '_')`
        : `is longer than the ${MCP_TOOL_NAME_MAX} characters a session's tool name has`;
    throw new SessionError(
      "bad_request",
      `${field}.tools rule "${glob}" can never match: it ${why}; write it as "${fixed}"`,
      `${field}.tools`,
    );
  }
}
