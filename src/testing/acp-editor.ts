// An editor for tests of `brain acp`: the command started as a real process, the ACP SDK's client connected to it
// on its stdio and initialized, recording the session/updates it is sent and answering permission requests.
import { type ChildProcess, spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import {
  type ClientCapabilities,
  type ClientContext,
  client,
  methods,
  ndJsonStream,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from "@agentclientprotocol/sdk";

const bin = join(import.meta.dirname, "../../bin/brain.js");

export interface TestEditor {
  child: ChildProcess;
  /** The exit code of `brain acp`, once it has exited. */
  exited: Promise<number | null>;
  ctx: ClientContext;
  updates: SessionNotification[];
  permissions: RequestPermissionRequest[];
}

export async function connectEditor(
  args: string[],
  options: {
    env?: NodeJS.ProcessEnv;
    capabilities?: ClientCapabilities;
    /** What the person picks when asked; cancelled when not given. */
    pick?: (request: RequestPermissionRequest) => RequestPermissionResponse["outcome"];
  } = {},
): Promise<TestEditor> {
  const child = spawn(process.execPath, [bin, "acp", ...args], {
    env: { ...process.env, BRAIN_URL: "", BRAIN_TOKEN: "", ...options.env },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const updates: SessionNotification[] = [];
  const permissions: RequestPermissionRequest[] = [];
  const connection = client({ name: "test-editor" })
    .onNotification(methods.client.session.update, async ({ params }) => {
      updates.push(params);
    })
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      permissions.push(params);
      return { outcome: options.pick?.(params) ?? { outcome: "cancelled" } };
    })
    .connect(
      ndJsonStream(
        Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
        Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
      ),
    );
  const ctx = connection.agent;
  await ctx.request(methods.agent.initialize, {
    protocolVersion: 1,
    clientCapabilities: options.capabilities ?? {},
  });
  return { child, exited, ctx, updates, permissions };
}

/** session/new of an echo session that answers a word every 40 ms: a turn long enough to cancel or close. */
export async function newSlowEchoSession(editor: TestEditor): Promise<string> {
  const { sessionId } = await editor.ctx.request(methods.agent.session.new, {
    cwd: tmpdir(),
    mcpServers: [],
    _meta: { brain: { harness: "echo", config: { options: { delay_ms: 40 } } } },
  });
  return sessionId;
}

/** session/prompt of `text`: its stopReason, or "refused: <the error>" when it was answered with an error. */
export function promptStopReason(editor: TestEditor, sessionId: string, text: string): Promise<string> {
  return editor.ctx
    .request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
    .then(
      (r) => r.stopReason,
      (err: unknown) => `refused: ${JSON.stringify(err)}`,
    );
}

/** How a session/prompt was answered: its stopReason, or the JSON-RPC error it was refused with. */
export type PromptAnswer = { answered: string } | { code: number; data?: Record<string, unknown> };

/** session/prompt of `text`, answered either way (promptStopReason's answer, with the error's code and data kept). */
export function promptAnswer(editor: TestEditor, sessionId: string, text: string): Promise<PromptAnswer> {
  return editor.ctx
    .request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
    .then(
      (r) => ({ answered: r.stopReason }),
      (err: { code: number; data?: Record<string, unknown> }) => ({ code: err.code, data: err.data }),
    );
}
