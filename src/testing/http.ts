// Small helpers the daemon's tests share: raw HTTP calls with a status, and following an event stream until
// an event matches.

import { type ClientRequest, type RequestOptions, request } from "node:http";
import type { BrainClient } from "../client/client.js";
import type { SessionEvent } from "../protocol/events.js";
import type { TestDaemon } from "./daemon.js";

export interface Raw {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** One HTTP call, whatever the status; the JSON body parsed. */
export async function raw(
  url: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Raw> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined
      ? { body: typeof options.body === "string" ? options.body : JSON.stringify(options.body) }
      : {}),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = { text };
  }
  return { status: res.status, body, headers: res.headers };
}

/**
 * One request through node:http, which sends what fetch will not (a GET's body, dot segments as written, a body
 * that stops halfway); its status and text. `sent` is given the request to write and end, before its answer comes.
 */
export function nodeRequest(
  target: string | RequestOptions,
  options: RequestOptions = {},
  sent: (req: ClientRequest) => void = (req) => req.end(),
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = typeof target === "string" ? request(target, options) : request({ ...target, ...options });
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    sent(req);
  });
}

/** Creates a session on a test daemon (echo unless `body` says otherwise) as `token` (admin), and its id. */
export async function newSession(
  daemon: Pick<TestDaemon, "url" | "tokens">,
  body: Record<string, unknown> = { harness: "echo" },
  token = daemon.tokens.admin,
): Promise<string> {
  const res = await raw(daemon.url, "POST", "/v1/sessions", { token, body });
  if (res.status !== 201)
    throw new Error(`creating a session: expected 201, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

/** Follows the session's stream from `after` until `until` matches; every event seen, in order. */
export async function collect(
  client: BrainClient,
  id: string,
  until: (event: SessionEvent) => boolean,
  options: { after?: number; role?: "observer" } = {},
): Promise<SessionEvent[]> {
  const abort = new AbortController();
  const seen: SessionEvent[] = [];
  try {
    for await (const event of client.events(id, { ...options, signal: abort.signal, retryMs: 50 })) {
      seen.push(event);
      if (until(event)) break;
    }
  } finally {
    abort.abort();
  }
  return seen;
}

export const settled = (turn?: string) => (event: SessionEvent) =>
  event.type === "turn.settled" && (turn === undefined || event.turn === turn);

export function textOf(events: SessionEvent[]): string {
  return events
    .filter((e) => e.type === "assistant.delta")
    .map((e) => (e.data as { text: string }).text)
    .join("");
}

/** A nui question request's payload with every field the UI and the bridge show (title, header, descriptions). */
export const NUI_RELEASE_QUESTION = {
  title: "Release",
  message: "Pick how to ship the build.",
  questions: [
    {
      header: "Channel",
      question: "Where should it go?",
      options: [{ label: "beta", description: "testers only" }, { label: "stable" }],
    },
  ],
};
