// Who is calling: a bearer token (Authorization header, or ?access_token= for EventSource) names the tenant and
// the role; a request may lower its role to observer (X-Brain-Role or ?role=) and name its client
// (X-Brain-Client or ?client=) for the controller lease.
import { CLIENT_ID_PATTERN, CLIENT_ID_RULE } from "../../protocol/api.js";
import { ApiError } from "../errors.js";
import type { Caller } from "../sessions.js";
import { DEFAULT_TENANT, type TokenTable } from "./tokens.js";

/** `pathToken`: the token a route carries in its path (/nui/{token}/api/hitl/..., for nui's SDK). */
export function callerOf(
  request: Request,
  url: URL,
  tokens: TokenTable | undefined,
  pathToken?: string,
): Caller {
  const header = (name: string) => request.headers.get(name) ?? undefined;
  let caller: Caller;
  if (!tokens) {
    caller = { tenant: DEFAULT_TENANT, role: "controller" };
  } else {
    const auth = header("authorization");
    const bearer = auth && /^Bearer\s+(.+)$/i.exec(auth)?.[1]?.trim();
    const token = bearer || pathToken || url.searchParams.get("access_token") || undefined;
    if (!token) {
      throw new ApiError(
        "unauthorized",
        "missing bearer token: send `Authorization: Bearer TOKEN` (`brain token` prints the daemon's token)",
      );
    }
    const principal = tokens.find(token);
    if (!principal)
      throw new ApiError("unauthorized", "unknown bearer token (`brain token` prints a valid one)");
    caller = { ...principal };
  }
  const role = header("x-brain-role") ?? url.searchParams.get("role") ?? undefined;
  if (role !== undefined && role !== "observer" && role !== "controller") {
    // Cut as the Origin check does: a header may be 16 KiB, and the error repeats it to logs and clients.
    const shown = role.length > 200 ? `${role.slice(0, 200)}…" (${role.length} characters)` : `${role}"`;
    throw new ApiError("bad_request", `role must be "observer" or "controller", not "${shown}`, "role");
  }
  if (role === "observer") caller.role = "observer";
  const client = header("x-brain-client") ?? url.searchParams.get("client") ?? undefined;
  if (client !== undefined) {
    if (!CLIENT_ID_PATTERN.test(client)) throw new ApiError("bad_request", CLIENT_ID_RULE, "client");
    caller.client = client;
  }
  return caller;
}
