// How long a runner has to answer an attachment's requests.

export interface AttachmentTimeouts {
  /** Seed A: the `open` request has 30 seconds. */
  openMs: number;
  /** How long an interrupted turn may take to settle before the runner is killed. */
  interruptGraceMs: number;
  /** How long checkpoint, steer and detach replies may take. */
  requestMs: number;
}

export const DEFAULT_TIMEOUTS: AttachmentTimeouts = {
  openMs: 30_000,
  interruptGraceMs: 5_000,
  requestMs: 30_000,
};
