// nui's human-in-the-loop envelopes (its REST API under NUI_API_URL, and `hitl_request` events). Brain maps a
// request onto its own question or permission request and the answer back onto nui's response envelope.
import { z } from "zod";

export const HITL_SCHEMA_VERSION = "1";

export const HitlKind = z.enum(["question", "approval", "freeform"]);
export type HitlKind = z.infer<typeof HitlKind>;

export const HitlStatus = z.enum(["pending", "delivered", "answered", "declined", "cancelled", "expired"]);
export type HitlStatus = z.infer<typeof HitlStatus>;

/**
 * The longest a HITL request may wait: a year. nui sets no bound, but its envelope carries `expiresAt` as an ISO
 * date, which a ttl past Date's range (about 8.64e12 s from now) cannot have.
 */
export const MAX_HITL_TTL_SECONDS = 31_536_000;

/** `POST /api/hitl/requests` body (nui_hitl.create_request). */
export const HitlCreateBody = z.object({
  kind: HitlKind.optional(),
  payload: z.record(z.string(), z.unknown()).optional(),
  sessionId: z.string().optional(),
  runId: z.string().optional(),
  routing: z.object({ channels: z.array(z.string()).optional() }).optional(),
  ttlSeconds: z
    .number()
    .int()
    .positive()
    .max(MAX_HITL_TTL_SECONDS, {
      message: `at most ${MAX_HITL_TTL_SECONDS} seconds (one year): send a shorter ttl`,
    })
    .optional(),
  requestId: z.string().min(1).optional(),
  correlationId: z.string().optional(),
  stepName: z.string().optional(),
});
export type HitlCreateBody = z.infer<typeof HitlCreateBody>;

/** `POST /api/hitl/requests/:id/respond` body. */
export const HitlRespondBody = z.object({
  status: HitlStatus.optional(),
  answers: z.record(z.string(), z.unknown()).optional(),
  respondedBy: z.object({ channel: z.string(), actor: z.string().optional() }).optional(),
});
export type HitlRespondBody = z.infer<typeof HitlRespondBody>;

/** A question inside a `question` payload: `options` are `{label, description?}` or bare strings. */
export const HitlQuestion = z.object({
  question: z.string().optional(),
  header: z.string().optional(),
  options: z
    .array(z.union([z.string(), z.object({ label: z.string(), description: z.string().optional() })]))
    .optional(),
  multiSelect: z.boolean().optional(),
});

export interface HitlRequestEnvelope {
  schemaVersion: string;
  requestId: string;
  correlationId?: string;
  sessionId?: string;
  runId?: string;
  stepName?: string;
  kind: HitlKind;
  routing?: { channels?: string[] };
  payload: Record<string, unknown>;
  ttlSeconds: number;
  status: HitlStatus;
  createdAt: string;
  expiresAt: string;
}

export interface HitlResponseEnvelope {
  schemaVersion: string;
  requestId: string;
  correlationId?: string;
  status: HitlStatus;
  answers?: Record<string, unknown>;
  respondedBy?: { channel: string; actor?: string };
  respondedAt: string;
}
