// How every model request is made: pi-ai's streamSimple with the open frame's credentials, explicit retries and
// timeout, the conversation's id as the provider's cache key, and a child abort signal per request.
import type { AgentTool, StreamFn } from "@mariozechner/pi-agent-core";
import {
  type Api,
  type Model,
  type SimpleStreamOptions,
  streamSimple,
  type TSchema,
} from "@mariozechner/pi-ai";
import type { ToolSchema } from "../../src/protocol/runner.js";
import type { PiSettings } from "./settings.js";

/** Options for every request to the provider (the agent's turns and compaction summaries alike). */
export function requestOptions(settings: PiSettings, conversationId: string): SimpleStreamOptions {
  return {
    ...settings.request,
    // The vendor SDKs refuse to start without a key. For endpoints that take none (a local server), give them a
    // stand-in and remove the header it would go in, so no made-up credential is ever sent.
    apiKey: settings.apiKey ?? "none",
    ...(settings.apiKey ? {} : { headers: noAuthHeaders(settings.model.api) }),
    sessionId: conversationId,
  };
}

function noAuthHeaders(api: Api): Record<string, string> {
  // null removes a default header in both vendor SDKs; pi-ai merges these over its defaults.
  const header = api === "anthropic-messages" ? "x-api-key" : "Authorization";
  return { [header]: null } as unknown as Record<string, string>;
}

/**
 * The agent's stream function. Each request gets its own AbortController tied to the run's signal: a shared
 * signal would collect one listener per request (a MaxListenersExceededWarning on long tool loops). The agent's
 * tools accept any arguments (tools.ts); each request offers the model the bound schemas instead.
 */
export function streamFn(
  base: SimpleStreamOptions,
  tools: ToolSchema[] = [],
  unbound?: (name: string) => AgentTool,
): StreamFn {
  const byName = new Map(tools.map((t) => [t.name, t.input_schema as unknown as TSchema]));
  return (model, agentContext, options) => {
    const context = {
      ...agentContext,
      ...(agentContext.tools && {
        // Only bound tools are offered; one added for an unbound call (below) is not.
        tools: agentContext.tools.flatMap((tool) => {
          const parameters = byName.get(tool.name);
          return parameters ? [{ ...tool, parameters }] : [];
        }),
      }),
    };
    const parent = options?.signal;
    const child = new AbortController();
    const forward = () => child.abort(parent?.reason);
    if (parent?.aborted) child.abort(parent.reason);
    else parent?.addEventListener("abort", forward, { once: true });
    const stream = streamSimple(model, context, { ...options, ...base, signal: child.signal });
    // The run's own tool list (pi looks each call up in it once the reply is done; this runs first, as the
    // reply settles): a call of a name not in it gets a tool that asks Brain, never offered to the model.
    const offered = agentContext.tools;
    if (unbound && offered)
      void stream.result().then(
        (reply) => {
          for (const part of reply.content ?? [])
            if (part.type === "toolCall" && !offered.some((t) => t.name === part.name))
              offered.push(unbound(part.name));
        },
        () => {},
      );
    void stream
      .result()
      .catch(() => {})
      .finally(() => parent?.removeEventListener("abort", forward));
    return stream;
  };
}

/**
 * pi-ai sends Anthropic only `{type, properties, required}` of each tool's schema; this puts the host's whole
 * schema back (nested definitions, additionalProperties, descriptions), so the model sees the tool as bound.
 */
export function restoreToolSchemas(tools: ToolSchema[]) {
  const byName = new Map(tools.map((t) => [t.name, t.input_schema]));
  return (payload: unknown, model: Model<Api>): unknown => {
    if (model.api !== "anthropic-messages" || !payload || typeof payload !== "object") return undefined;
    const body = payload as { tools?: { name: string; input_schema?: unknown }[] };
    for (const tool of body.tools ?? []) {
      const schema = byName.get(tool.name);
      if (schema?.type !== "object") continue;
      const { $schema: _dialect, ...rest } = schema;
      tool.input_schema = rest;
    }
    return payload;
  };
}
