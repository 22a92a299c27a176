// A session/prompt or session/cancel on a session another client drives (the daemon's control lease,
// server/control.ts: the web UI, `brain attach`, another editor). The daemon refuses it (409, reason
// "controlled", naming the controller) in its REST words (take control with POST /v1/sessions/S/control ...): a
// route no editor user can send. Here they become an editor's: who drives, and what to do (wait for it to let
// go, or take control from the web UI). ACP defines no error code for it, so it is an internal error with `data.reason` "controlled" and
// the controller's id, for an editor to tell it from a failure, as busy.ts's "busy".
import { RequestError } from "@agentclientprotocol/sdk";
import { ClientError } from "../client/errors.js";
import { LEASE_MS } from "../server/control.js";

/** What the editor was doing when it was refused. */
export type ControlledAction = "prompt" | "cancel";

/** The daemon's refusal because another client drives the session, in ACP's terms; undefined for any other. */
export function controlRefusal(err: unknown, sessionId: string, action: ControlledAction) {
  // The refusal's structured reason (server/control.ts drive()), never its wording, which may change.
  if (!(err instanceof ClientError) || err.detail.reason !== "controlled") return undefined;
  const controller = err.detail.controller ?? "another client";
  const lapse = `its control lapses ${LEASE_MS / 1000} s after it last acts with no stream of the session open`;
  const what =
    action === "prompt"
      ? "your prompt was not sent"
      : "session/cancel could not stop its turn, which goes on";
  const message =
    `another client ("${controller}") is driving session ${sessionId}, so ${what}: wait for it to finish ` +
    `(${lapse}) and send it again, or take control from that client in the web UI (Take control) first`;
  return RequestError.internalError({ reason: "controlled", controller, message });
}

/** Whether `err` is a refusal controlRefusal made. */
export function isControlRefusal(err: unknown): boolean {
  return (
    err instanceof RequestError && (err.data as { reason?: unknown } | undefined)?.reason === "controlled"
  );
}
