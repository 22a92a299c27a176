// `brain acp --server URL` drives a daemon it did not start, maybe of another Brain version. One that lacks a route
// the front door calls fails mid-session, at the first prompt or list, with an answer (a 404, a query parameter
// refused) that names neither version nor a way out. The daemon's /openapi.json (served without a token,
// generated from its endpoint table) gives its version and every route and query parameter it serves: read once
// at start, so the editor's user is told plainly which side is older and what to do before any session begins.
import type { BrainClient } from "../client/client.js";
import { ClientError } from "../client/errors.js";
import { ENDPOINTS, type EndpointName } from "../protocol/endpoints.js";

/** The daemon's routes the front door calls (agent.ts, replay.ts, requests.ts), with the query parameters it sends. */
export const ACP_ROUTES: readonly { name: EndpointName; query?: readonly string[] }[] = [
  { name: "sessions", query: ["limit", "after", "order"] },
  { name: "create" },
  { name: "session" },
  { name: "close" },
  { name: "prompt" },
  { name: "interrupt" },
  { name: "answer" },
  { name: "log", query: ["after", "limit"] },
  { name: "events" },
];

interface ApiDocument {
  info?: { version?: unknown };
  paths?: Record<string, Record<string, { parameters?: { name?: unknown; in?: unknown }[] }>>;
}

/**
 * Why the daemon behind `client` cannot serve `brain acp` of `version`: undefined when it serves every route
 * ACP_ROUTES names. An unreachable daemon or a wrong token is left to the first call, which says so already.
 */
export async function daemonProblem(client: BrainClient, version: string): Promise<string | undefined> {
  let doc: ApiDocument;
  try {
    doc = (await client.request<ApiDocument>("GET", "/openapi.json")) ?? {};
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    // Not there at all: a daemon from before it served the document, which serves too little to tell.
    if (err.status !== 404) return undefined;
    doc = {};
  }
  const theirs =
    typeof doc.info?.version === "string" ? `Brain ${doc.info.version}` : "a Brain that names no version";
  const missing: string[] = [];
  for (const { name, query = [] } of ACP_ROUTES) {
    const { method, path } = ENDPOINTS[name];
    const operation = doc.paths?.[path]?.[method.toLowerCase()];
    if (!operation) {
      missing.push(`${method} ${path}`);
      continue;
    }
    const known = new Set((operation.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name));
    for (const q of query) if (!known.has(q)) missing.push(`${method} ${path}?${q}=`);
  }
  if (missing.length === 0) return undefined;
  return (
    `the daemon at ${client.url} is ${theirs} and this brain acp is ${version}: the daemon does not serve ` +
    `${missing.join(", ")}, which brain acp needs. Upgrade the daemon to Brain ${version} (or newer), or run ` +
    "brain acp without --server to use a daemon of its own"
  );
}
