// The connection file a TCP or HTTP extension host writes once it listens: `<dir>/<id>.json` (nui:
// `~/.nui/connections/`). The id is NUI_CONNECTION_ID, derived from `ext:<extension>/<harness-id>`.
import { z } from "zod";

export const ConnectionInfo = z.object({
  host: z.string().optional(),
  port: z.number().int().min(1).max(65535),
  session_id: z.string().optional(),
  pid: z.number().int().positive().optional(),
  /**
   * Brain's addition: the secret a host requires before it serves a connection (its port answers every local
   * process). A TCP host gets it in `harness.authenticate {token}`, the first request on each connection; an HTTP
   * host as `Authorization: Bearer <token>`. Brain's SDKs write it, in a file only its owner may read; a host
   * that writes none (nui's own) is served as before.
   */
  token: z.string().min(1).optional(),
});
export type ConnectionInfo = z.infer<typeof ConnectionInfo>;

/** nui's SanitizeConnectionID: `ext:corp/echo` → `ext-corp-echo`; empty → `harness`. */
export function connectionId(ref: string): string {
  const id = ref.trim();
  return id ? id.replace(/[:/\\]/g, "-") : "harness";
}
