// The wire shapes of nui's harness protocol, as extension authors see them (docs/protocol.md#nuis-harness-protocols).
// The params are Brain's protocol types (src/protocol/nui), not a copy.
import type { z } from "zod";
import type { NuiHarnessEvent } from "../../../src/protocol/nui/harness-event.js";
import type {
  HitlQuestion as HitlQuestionSchema,
  HitlResponseEnvelope,
} from "../../../src/protocol/nui/hitl.js";
import type { HarnessRunParams } from "../../../src/protocol/nui/jsonrpc.js";

/**
 * A harness event: `text`, `tool_call`, `tool_result`, `hitl_request`, `image`, `error`, `done` as Brain decodes
 * them, or any other event nui adds later (passed through as it is).
 */
export type HarnessEvent = NuiHarnessEvent | { type: string; [field: string]: unknown };

/** What `run()` yields: a string is a `text` event, an object is sent as it is. */
export type Chunk = string | HarnessEvent;

/** `harness.run` params (and POST /run's body); fields nui adds later come through too. */
export type RunParams = HarnessRunParams & { [field: string]: unknown };

/** nui's HITL response envelope: `status` is answered, declined, expired or cancelled. */
export type HitlResponse = Pick<HitlResponseEnvelope, "requestId" | "status"> &
  Partial<Omit<HitlResponseEnvelope, "requestId" | "status">>;

/** A question to ask: the protocol's question shape, with its text required. */
export type HitlQuestion = z.infer<typeof HitlQuestionSchema> & { question: string };

export interface AskUserOptions {
  questions?: HitlQuestion[];
  title?: string;
  message?: string;
}

export interface ApprovalOptions {
  title?: string;
  message?: string;
  toolName?: string;
  toolInput?: Record<string, unknown>;
  description?: string;
}

export interface RunContext {
  runId: string;
  /** All of `harness.run`'s params (sessionId, workingDir, systemPrompt, model, harnessId, …). */
  params: RunParams;
  /** Aborted when the run is cancelled (harness.cancel, POST /cancel, or the client went away). */
  signal: AbortSignal;
  /** Sends an event now (from a callback, a timer, …). */
  emit(event: HarnessEvent): void;
  /** Asks the person at the other end; resolves with nui's response envelope. */
  askUser(options: AskUserOptions): Promise<HitlResponse>;
  /** Asks for approval; `status` is "answered" (approved) or "declined". */
  requestApproval(options: ApprovalOptions): Promise<HitlResponse>;
}
