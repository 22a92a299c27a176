// A session's record (session.json): what it runs and how it was configured. Never holds a credential.
import { z } from "zod";
import { McpServers, ProviderChoice } from "./config.js";
import { IDEMPOTENCY_KEY, Seeded } from "./events.js";
import { PermissionPolicy } from "./permissions.js";
import { SessionConfig } from "./runner.js";

/** The tenant of a session whose record names none, and of the tokens that name none. */
export const DEFAULT_TENANT = "default";

/** Ids name directories: this pattern can never be `.`, `..` or hold a separator. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const SessionId = z
  .string()
  .regex(SESSION_ID_PATTERN, "a session id is 1 to 64 letters, digits, '_' or '-'");

/**
 * A record as this version writes it (a create, an update) and shows it: strict, so a misspelt field is an error
 * here, not a field stored for every node to carry. What a node reads is StoredSessionRecord below.
 */
export const SessionRecord = z.strictObject({
  id: SessionId,
  harness: z.string().min(1),
  config: SessionConfig,
  /** A configured provider's name, or (sessions the operator made) inline settings. */
  provider: ProviderChoice.optional(),
  /** The operator's permission policy: the agent's, the config's defaults', or the operator's own choice. */
  permissions: PermissionPolicy.optional(),
  /**
   * The policy the client that created the session over the network asked for. It only tightens `permissions`:
   * each tool gets the stricter of the two verdicts (deny > ask > allow), and an ask waits the shorter of the two
   * timeouts. A client's `allow` never lifts the operator's `ask` or `deny`.
   */
  client_permissions: PermissionPolicy.optional(),
  created_at: z.string(),
  status: z.enum(["open", "closed"]),
  forked_from: z.strictObject({ session: z.string(), checkpoint: z.string() }).optional(),
  /** The session this one continues on another harness (`brain handoff`): its conversation up to `seq`. */
  handoff_from: z.strictObject({ session: z.string(), seq: z.number().int().nonnegative() }).optional(),
  /** How the native state was seeded from Brain's log (a handoff or rebuild). */
  seeded: Seeded.optional(),
  /** Whose session this is when a daemon serves several tenants; absent means DEFAULT_TENANT. */
  tenant: z.string().optional(),
  /**
   * Cluster mode: the session's harness keeps state that cannot move to another node (a local path, a runner
   * whose state is not in its checkpoints), so it runs only on `node`, the one that first ran it.
   */
  pinned: z.strictObject({ node: z.string(), reason: z.string() }).optional(),
  /** The session's own MCP servers; their tools are bound to it as `server__tool`. */
  mcp_servers: McpServers.optional(),
  /**
   * The working directory the editor gave at ACP session/new, kept so session/list and session/load know it after
   * `brain acp` restarts. The editor's, on its machine: no agent runs there (a working dir is the operator's).
   */
  editor_cwd: z.string().optional(),
  /**
   * The Idempotency-Key of the create, fork or handoff that made this session, and a digest of the body it was
   * sent with: a retry under the key finds this record (its id comes from the tenant and the key) and gets it
   * back; the key with another body is refused. It lives as long as the session does.
   */
  idempotency: z.strictObject({ key: z.string().regex(IDEMPOTENCY_KEY), sent: z.string() }).optional(),
  /**
   * The newest keyed restores (POST .../restore) of the session, oldest first: each one's Idempotency-Key, a digest
   * of its body and the checkpoint it wrote. A restore writes nothing to the log, so its retry finds its answer
   * here, on any node and after a restart, where it would find the directory the first filled (refused: not empty).
   */
  restores: z
    .array(
      z.strictObject({ key: z.string().regex(IDEMPOTENCY_KEY), sent: z.string(), checkpoint: z.string() }),
    )
    .optional(),
  /**
   * Cluster mode: a delete of the session is under way on `node` since `at` (src/core/deleting-marks.ts). A fork
   * or handoff of it made on another node meanwhile waits for the delete to end, and goes if the session does.
   */
  deleting: z.strictObject({ node: z.string(), at: z.string() }).optional(),
});

export type SessionRecord = z.infer<typeof SessionRecord>;

/**
 * A stored record as a node reads it, written by any node of the cluster, perhaps of a newer version during a
 * rolling upgrade. Per field, what a reader does with what it does not know:
 * - top level and the lineage objects (forked_from, handoff_from, seeded, pinned, idempotency, deleting):
 *   ignored. They tell where the session came from (or that a delete is under way: an older node's fork does not
 *   wait for it); a node that does not know one runs the session as well without it. An update keeps
 *   them: it writes the stored value back with only its patch changed (src/store/fs/session-record.ts
 *   rewrittenRecord), so an older node never drops a newer node's field by rewriting the record.
 * - config, provider, permissions, client_permissions, mcp_servers: refused (a damaged record, naming the field).
 *   They say how the session runs: run without a setting it does not know, a node would run it otherwise than
 *   asked, and a policy field it ignored could allow what the policy denies.
 */
export const StoredSessionRecord = z.object({
  ...SessionRecord.shape,
  forked_from: z.object({ session: z.string(), checkpoint: z.string() }).optional(),
  handoff_from: z.object({ session: z.string(), seq: z.number().int().nonnegative() }).optional(),
  seeded: z.object(Seeded.shape).optional(),
  pinned: z.object({ node: z.string(), reason: z.string() }).optional(),
  idempotency: z.object({ key: z.string().regex(IDEMPOTENCY_KEY), sent: z.string() }).optional(),
  deleting: z.object({ node: z.string(), at: z.string() }).optional(),
});
