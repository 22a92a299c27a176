// Who may run which tool: the host decides, not the harness. Rules map tool-name globs (`*` and `?`) to a
// decision; the first matching rule wins, in the order written; tools no rule names get `default`.
import { z } from "zod";

export const PermissionDecision = z.enum(["allow", "ask", "deny"]);

/** The longest delay a Node timer holds (2^31 - 1 ms, about 24.8 days): a longer one fires at once (1 ms). */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * The longest an `ask` may wait: the longest a timer holds. A longer one would fire at once and deny the request
 * unanswered; an ask pending for weeks is already past any human's answer, so a longer wait is refused rather
 * than built from chained timers.
 */
export const MAX_ASK_TIMEOUT_MS = MAX_TIMER_MS;

export const PermissionPolicy = z.strictObject({
  /** For bound tools no rule names. Default: allow (binding a tool is already a decision). */
  default: PermissionDecision.optional(),
  /** Tool-name glob → decision, e.g. {"fs__write_*": "ask", "shell": "deny"}. */
  tools: z.record(z.string(), PermissionDecision).optional(),
  /**
   * How long an `ask` waits for a client before it is denied (headless default 60000). 0 denies at once; at most
   * 2147483647 (about 24.8 days).
   */
  ask_timeout_ms: z
    .number()
    .int()
    .nonnegative()
    .max(MAX_ASK_TIMEOUT_MS, {
      message: `at most ${MAX_ASK_TIMEOUT_MS} ms (about 24.8 days, the longest a timer can wait); leave it out for the default of 60000`,
    })
    .optional(),
});

export type PermissionDecision = z.infer<typeof PermissionDecision>;
export type PermissionPolicy = z.infer<typeof PermissionPolicy>;
