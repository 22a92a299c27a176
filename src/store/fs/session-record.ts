// session.json: what a session is (harness, config, lineage) apart from its event log. The schema is the wire
// one in src/protocol/session.ts.
import type { z } from "zod";
import { SESSION_ID_PATTERN, SessionRecord } from "../../protocol/session.js";

/** Ids name directories: this pattern can never be `.`, `..` or hold a separator. */
export const SESSION_ID = SESSION_ID_PATTERN;
export { SessionRecord };

/** The first problem zod found, as `field "config.model": expected string, received number`. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid";
  const field = issue.path.length > 0 ? issue.path.join(".") : "(record)";
  const message = issue.message.endsWith("received undefined") ? "missing" : issue.message;
  return `field "${field}": ${message}`;
}
