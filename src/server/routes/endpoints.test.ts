// The daemon serves exactly the endpoint table the client calls: every /v1 endpoint is registered with its
// table entry's method and path, and /openapi.json (generated from the routes) lists them all.
import { describe, expect, it } from "vitest";
import { ENDPOINTS, endpointPath } from "../../protocol/endpoints.js";
import { raw } from "../../testing/http.js";
import { useTestDaemon } from "../../testing/use-daemon.js";

const t = useTestDaemon();

describe("the endpoint table", () => {
  it("is what the daemon serves and documents", async () => {
    const doc = (await raw(t.url, "GET", "/openapi.json", { token: t.tokens.admin })).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const served = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith("/v1/"))
      .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    const table = Object.values(ENDPOINTS)
      .map((e) => `${e.method} ${e.path}`)
      .sort();
    expect(served).toEqual(table);
  });

  it("documents 422 for a key sent with another request on every route that keeps its keys, 409 as well", async () => {
    const doc = (await raw(t.url, "GET", "/openapi.json", { token: t.tokens.admin })).body as {
      paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
    };
    const reusable = Object.entries(doc.paths)
      .flatMap(([path, methods]) =>
        Object.entries(methods).map(([m, op]) => [`${m.toUpperCase()} ${path}`, op.responses] as const),
      )
      .filter(([, responses]) => responses["422"]);
    // Every keyed route but a delete (no body) and a close (its key is checked, not kept).
    expect(reusable.map(([route]) => route).sort()).toEqual(
      [
        "POST /v1/sessions",
        ...[
          "fork",
          "handoff",
          "prompt",
          "steer",
          "interrupt",
          "checkpoints",
          "rebuild",
          "restore",
          "control",
        ].map((command) => `POST /v1/sessions/{id}/${command}`),
        "POST /v1/sessions/{id}/requests/{requestId}",
      ].sort(),
    );
    for (const [, responses] of reusable) {
      expect(responses["422"]!.description).toContain("idempotency_key_reused");
      expect(responses["409"]!.description).toContain("still running");
    }
  });

  it("fills path parameters, encoded, and names a missing one", () => {
    expect(endpointPath(ENDPOINTS.answer.path, { id: "a/b", requestId: "r 1" })).toBe(
      "/v1/sessions/a%2Fb/requests/r%201",
    );
    expect(() => endpointPath(ENDPOINTS.answer.path, { id: "a" })).toThrow("no value for {requestId}");
  });
});
