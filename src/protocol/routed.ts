// Cluster mode: what one node sends another over NATS request-reply (src/server/nats-commands.ts): an HTTP request
// forwarded to a session's owner, and the owner's answer. Nodes of two versions meet here during a rolling upgrade,
// so a field a node does not know is ignored (z.object strips it), never an error; a message that is not this shape
// at all (not JSON, a field of the wrong type) is refused by the node that gets it, with an answer that says so.
import { z } from "zod";

/** An HTTP request as forwarded: the caller's own credentials go with it, the owner checks them again. */
export const RoutedRequest = z.object({
  method: z.string().min(1),
  /** Path and query string. */
  path: z.string().startsWith("/"),
  headers: z.record(z.string(), z.string()),
  body: z.string().optional(),
});
export type RoutedRequest = z.infer<typeof RoutedRequest>;

export const RoutedResponse = z.object({
  /** An HTTP status: a Response cannot be made with any other. */
  status: z.number().int().min(200).max(599),
  contentType: z.string().optional(),
  body: z.string(),
  /**
   * The node asked no longer owns the session and did not run the command (its lease ran out, or it is letting
   * the session go): the sender takes it as having no live owner.
   */
  notServed: z.boolean().optional(),
});
export type RoutedResponse = z.infer<typeof RoutedResponse>;
