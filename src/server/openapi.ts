// /openapi.json, generated from the route table and the zod schemas the routes validate with.
import { type ZodType, z } from "zod";
import { ApiErrorBody } from "../protocol/api.js";
import { IDEMPOTENCY_HEADER } from "./idempotency.js";
import type { RouteDef } from "./routes/route.js";

function jsonSchema(schema: ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    io,
    unrepresentable: "any",
  });
  return rest;
}

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/ApiError" } } },
});

export function openApiDocument(routes: RouteDef[], info: { version: string; auth: boolean }): object {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const params = [...route.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => ({
      name,
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const query = Object.entries(route.query ?? {}).map(([name, description]) => ({
      name,
      in: "query",
      required: false,
      description,
      schema: { type: "string" },
    }));
    const headers = Object.entries(route.headers ?? {}).map(([name, description]) => ({
      name,
      in: "header",
      required: false,
      description,
      schema: { type: "string" },
    }));
    const status = String(route.status ?? 200);
    const content = route.stream
      ? {
          "text/event-stream": {
            schema: { type: "string", description: "id: <seq>\\ndata: <SessionEvent JSON>" },
          },
        }
      : route.response
        ? { "application/json": { schema: jsonSchema(route.response, "output") } }
        : status === "204"
          ? undefined
          : { "application/json": { schema: {} } };
    const operation: Record<string, unknown> = {
      tags: [route.tag],
      summary: route.summary,
      operationId: `${route.method.toLowerCase()}${route.path
        .replace(/[{}]/g, "")
        .replace(/\/(\w)/g, (_, c: string) => c.toUpperCase())
        .replace(/[^A-Za-z0-9]/g, "")}`,
      parameters: [...params, ...query, ...headers],
      responses: {
        [status]: { description: "success", ...(content ? { content } : {}) },
        "400": errorResponse("bad input: the message names the field and the reason"),
        "401": errorResponse("no or unknown bearer token"),
        "403": errorResponse(
          route.method !== "GET"
            ? "an observer's token, a cross-site request (Origin, Sec-Fetch-Site), or without auth a Host that is not a loopback name"
            : "without auth, a Host that is not a loopback name",
        ),
        "404": errorResponse("no such session (or another tenant's)"),
        "409": errorResponse(
          keyed(route)
            ? "conflict: a turn is running, a request was answered already, another client controls; or the first request under the Idempotency-Key is still running (send the same request under it again later)"
            : "conflict: a turn is running, a request was answered already, another client controls",
        ),
        // draft-ietf-httpapi-idempotency-key-header, "Error Scenarios": a key reused with another payload is a 422.
        ...(keyReusable(route)
          ? {
              "422": errorResponse(
                "idempotency_key_reused: the Idempotency-Key was sent before with another request (another body or command); a retry sends the same request, a new request a new key",
              ),
            }
          : {}),
        ...(route.method !== "GET"
          ? { "413": errorResponse("a body over 8 MiB, or a prompt too large for one runner frame") }
          : {}),
        // Checked on every route: a declared type says what the client would send, body or not.
        "415": errorResponse("a body, or a Content-Type, that is not application/json"),
        ...(boundedPerTenant(route)
          ? {
              "429": errorResponse(
                "limit_reached: a bound is reached (the tenant's open or stored sessions, event streams, log pages or request bodies on their way, HITL waits; a turn's steers)",
              ),
            }
          : {}),
        "500": errorResponse("the daemon failed (brain_error): the message says what"),
        // Commands on a session go to its owner; a create runs where it arrives.
        ...(keyed(route) && route.path.startsWith("/v1/sessions/{id}")
          ? {
              "503": errorResponse(
                "cluster mode: the session's owner answers nothing while its lease stays alive; retry with the same Idempotency-Key",
              ),
            }
          : {}),
        ...(route.method !== "GET"
          ? {
              "507": errorResponse(
                "insufficient_storage: the host's disk is full; the request was not taken, nothing acknowledged before is lost: send it again once space is freed",
              ),
            }
          : {}),
      },
    };
    if (route.body) {
      operation.requestBody = {
        required: true,
        content: { "application/json": { schema: jsonSchema(route.body, "input") } },
      };
    }
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = operation;
  }
  // Served beside the routes, without a token.
  paths["/healthz"] = unauthenticated("getHealthz", "The daemon is up", {
    type: "object",
    properties: { ok: { const: true } },
    required: ["ok"],
  });
  paths["/openapi.json"] = unauthenticated("getOpenapi", "This document", { type: "object" });
  return {
    openapi: "3.1.0",
    info: {
      title: "Brain daemon",
      version: info.version,
      description:
        "Sessions on any harness: prompt, steer, interrupt, answer requests, checkpoint, fork, and watch every event as SSE replayed from the durable log.",
    },
    servers: [{ url: "/" }],
    ...(info.auth ? { security: [{ bearer: [] }] } : {}),
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: { ApiError: jsonSchema(ApiErrorBody, "output") },
    },
    paths,
  };
}

/** Whether the route takes an Idempotency-Key. */
function keyed(route: RouteDef): boolean {
  return route.headers !== undefined && IDEMPOTENCY_HEADER in route.headers;
}

/**
 * Whether the route can answer 422 for its key sent with another request: each keyed route that remembers what its
 * key ran, but a delete (its key names the delete of one session, with no body) and a close (its key is checked,
 * not kept: closing twice is no error).
 */
function keyReusable(route: RouteDef): boolean {
  return keyed(route) && route.method !== "DELETE" && !route.path.endsWith("/close");
}

/**
 * Whether the route can answer 429: every route that reads a body (the tenant's bodies on their way), and the GETs
 * that hold something of the tenant's until their client has read it (LogReads, Watchers, HITL waits).
 */
function boundedPerTenant(route: RouteDef): boolean {
  return route.method !== "GET" || /\/(?:events|log|wait)$/.test(route.path);
}

function unauthenticated(operationId: string, summary: string, schema: object): Record<string, unknown> {
  const content = { "application/json": { schema } };
  return {
    get: {
      tags: ["meta"],
      summary,
      operationId,
      security: [],
      responses: { "200": { description: "success", content } },
    },
  };
}
