// nui's list of a tenant's HITL requests in cluster mode: each node holds those pending in the sessions it has
// open, so the list is gathered from every node and merged here.
import type { RoutedRequest, RoutedResponse } from "../routing.js";

/** nui's list of HITL requests, under /api/hitl or /nui/{token}/api/hitl. */
export const HITL_LIST = /^(?:\/nui\/[^/]+)?\/api\/hitl\/requests\/?$/;

/** Whether a request gathered from every node is nui's tenant-wide HITL list, the one read a node answers so. */
export function isTenantList(request: RoutedRequest): boolean {
  const url = new URL(request.path, "http://x");
  return request.method === "GET" && HITL_LIST.test(url.pathname) && !url.searchParams.get("sessionId");
}

/**
 * The nodes' lists as one, oldest first, each request once (a session moving between nodes may be in two). A node
 * whose answer is not a list (it refused the caller, or its list was too large for NATS) is left out; the header
 * says how many nodes' lists are in it, and the first refusal is the answer when no node listed.
 */
export function merged(answers: RoutedResponse[]): Response {
  const lists = answers.flatMap((a) => {
    if (a.status !== 200) return [];
    let list: unknown;
    try {
      list = JSON.parse(a.body);
    } catch {
      return [];
    }
    return Array.isArray(list)
      ? [list as { sessionId?: string; requestId?: string; createdAt?: string }[]]
      : [];
  });
  if (lists.length === 0) return responseOf(answers[0]!);
  const seen = new Set<string>();
  const all = lists.flat().filter((r) => {
    const key = JSON.stringify([r.sessionId, r.requestId]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  all.sort((x, y) => (x.createdAt ?? "").localeCompare(y.createdAt ?? ""));
  return new Response(JSON.stringify(all), {
    status: 200,
    headers: {
      "content-type": "application/json",
      "x-brain-nodes-listed": String(lists.length),
      ...(lists.length < answers.length
        ? { "x-brain-nodes-refused": String(answers.length - lists.length) }
        : {}),
    },
  });
}

/** A routed answer as this node's response. */
export function responseOf(answer: RoutedResponse): Response {
  return new Response(answer.body || null, {
    status: answer.status,
    headers: answer.contentType ? { "content-type": answer.contentType } : {},
  });
}
