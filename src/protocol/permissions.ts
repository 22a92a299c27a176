// Who may run which tool: the host decides, not the harness. Rules map tool-name globs (`*` and `?`) to a
// decision; the first matching rule wins, in the order written; tools no rule names get `default`.
import { z } from "zod";

export const PermissionDecision = z.enum(["allow", "ask", "deny"]);

export const PermissionPolicy = z.strictObject({
  /** For bound tools no rule names. Default: allow (binding a tool is already a decision). */
  default: PermissionDecision.optional(),
  /** Tool-name glob → decision, e.g. {"fs__write_*": "ask", "shell": "deny"}. */
  tools: z.record(z.string(), PermissionDecision).optional(),
  /** How long an `ask` waits for a client before it is denied (headless default). 0 denies at once. */
  ask_timeout_ms: z.number().int().nonnegative().optional(),
});

export type PermissionDecision = z.infer<typeof PermissionDecision>;
export type PermissionPolicy = z.infer<typeof PermissionPolicy>;
