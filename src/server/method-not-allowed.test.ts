// A method a path does not take (RFC 9110 §15.5.6): 405 with an Allow header naming the methods it does take and
// the API's error body, read from the routes the app registered. Authentication still comes first on the API's
// paths, and a path no route has stays a 404.
import { describe, expect, it } from "vitest";
import { raw } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const admin = () => t.tokens.admin;

describe("a method the path does not take", () => {
  it("is a 405 naming the method, the path and the methods it takes, in the body and the Allow header", async () => {
    const res = await raw(t.url, "DELETE", "/v1/sessions", { token: admin() });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, POST");
    expect(res.body).toEqual({
      error: {
        code: "method_not_allowed",
        message: "method DELETE is not allowed on /v1/sessions: it takes GET, HEAD, POST",
      },
    });
    expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
  });

  it("lists every method of a path with parameters, and HEAD only where GET is", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    const session = await raw(t.url, "PUT", `/v1/sessions/${id}`, { token: admin() });
    expect(session.status).toBe(405);
    expect(session.headers.get("allow")).toBe("DELETE, GET, HEAD");
    const prompt = await raw(t.url, "GET", `/v1/sessions/${id}/prompt`, { token: admin() });
    expect(prompt.status).toBe(405);
    expect(prompt.headers.get("allow")).toBe("POST");
    expect(prompt.body.error).toMatchObject({
      message: `method GET is not allowed on /v1/sessions/${id}/prompt: it takes POST`,
    });
    // Hono answers HEAD as GET, so a HEAD where no GET is refused too, without a body.
    const head = await fetch(`${t.url}/v1/sessions/${id}/prompt`, {
      method: "HEAD",
      headers: { authorization: `Bearer ${admin()}` },
    });
    expect(head.status).toBe(405);
    expect(head.headers.get("allow")).toBe("POST");
    expect(await head.text()).toBe("");
    // Nothing answers OPTIONS (no CORS): it is a method like any other the paths do not take.
    const options = await raw(t.url, "OPTIONS", "/v1/sessions", { token: admin() });
    expect(options.status).toBe(405);
    expect(options.headers.get("allow")).toBe("GET, HEAD, POST");
  });

  it("is told only to an authenticated caller on the API's paths: 401 before it, as for the right method", async () => {
    for (const token of [undefined, "x".repeat(43)]) {
      const res = await raw(t.url, "DELETE", "/v1/sessions", token ? { token } : {});
      expect(res.status).toBe(401);
      expect(res.headers.get("allow")).toBeNull();
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
      expect(res.body.error).toMatchObject({ code: "unauthorized" });
    }
  });

  it("takes nui's token from the path, and names the path with it redacted", async () => {
    const path = (token: string) => `/nui/${token}/api/hitl/requests`;
    const wrong = await raw(t.url, "DELETE", path("x".repeat(43)));
    expect(wrong.status).toBe(401);
    const res = await raw(t.url, "DELETE", path(admin()));
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, POST");
    expect(res.body.error).toMatchObject({
      code: "method_not_allowed",
      message:
        "method DELETE is not allowed on /nui/[redacted:token]/api/hitl/requests: it takes GET, HEAD, POST",
    });
  });

  it("is a 405 without a token on the paths served without one", async () => {
    for (const path of ["/healthz", "/openapi.json", "/", "/ui/app.js"]) {
      const res = await raw(t.url, "POST", path);
      expect(res.status, path).toBe(405);
      expect(res.headers.get("allow"), path).toBe("GET, HEAD");
    }
  });
});

describe("what stays as it was", () => {
  it("a path no route has is a 404 whatever the method, with a token or without", async () => {
    for (const [method, token] of [
      ["DELETE", admin()],
      ["GET", admin()],
      ["POST", undefined],
    ] as const) {
      const res = await raw(t.url, method, "/v1/nothing", token ? { token } : {});
      expect(res.status, method).toBe(404);
      expect(res.headers.get("allow")).toBeNull();
      expect(res.body.error).toMatchObject({
        code: "not_found",
        message: `no route ${method} /v1/nothing`,
      });
    }
  });

  it("a path's own 404 for the right method (a web file that is not there), and HEAD where GET is", async () => {
    const missing = await raw(t.url, "GET", "/ui/nothing.js");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("allow")).toBeNull();
    expect((await fetch(`${t.url}/healthz`, { method: "HEAD" })).status).toBe(200);
  });

  it("/openapi.json lists method_not_allowed among the error codes", async () => {
    const doc = (await raw(t.url, "GET", "/openapi.json")).body as {
      components: {
        schemas: { ApiError: { properties: { error: { properties: { code: { enum: string[] } } } } } };
      };
    };
    expect(doc.components.schemas.ApiError.properties.error.properties.code.enum).toContain(
      "method_not_allowed",
    );
  });
});
