// The connection file a TCP or HTTP extension host writes once it listens: `<dir>/<id>.json` (nui:
// `~/.nui/connections/`). The id is NUI_CONNECTION_ID, derived from `ext:<extension>/<harness-id>`.
import { z } from "zod";

export const ConnectionInfo = z.object({
  host: z.string().optional(),
  port: z.number().int().min(1).max(65535),
  session_id: z.string().optional(),
  pid: z.number().int().positive().optional(),
});
export type ConnectionInfo = z.infer<typeof ConnectionInfo>;

/** nui's SanitizeConnectionID: `ext:corp/echo` → `ext-corp-echo`; empty → `harness`. */
export function connectionId(ref: string): string {
  const id = ref.trim();
  return id ? id.replace(/[:/\\]/g, "-") : "harness";
}
