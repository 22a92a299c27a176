// How an RPC harness reaches its extension host: a child's stdio (one host per session) or a TCP connection
// (to a host shared by sessions). Both carry the same JSON-RPC peer.
import type { Backlog } from "../../core/backlog.js";
import type { RpcPeer } from "../../protocol/jsonrpc.js";
import type { WaitEnd } from "../read-gate.js";
import type { RpcPeerEvents } from "./rpc-peer.js";

export interface RpcTransport {
  readonly peer: RpcPeer;
  /**
   * The run id the host was given as its own (a stdio host's NUI_RUN_ID, which nui's SDK keeps putting in later
   * runs' HITL requests); none for a host told no run id (TCP), whose events name the run they are for.
   */
  readonly hostRunId?: string;
  isAlive(): boolean;
  /** Gives up on a host that will not stop a run: kills a stdio host, drops a TCP connection. */
  abandon(): void;
  /**
   * Calls `fire` once `ms` have passed with the host's output read throughout; returns what cancels it. For the
   * wait on a cancelled run (see ReadGate.afterRead): while the log is behind, the host's answer may wait unread.
   */
  afterRead(ms: number, fire: (end: WaitEnd) => void): () => void;
  /** Ends the conversation politely (a stdio host gets `harness.shutdown` and stops). */
  close(): Promise<void>;
}

export interface TransportEvents extends RpcPeerEvents {
  /** The host or the connection is gone; `message` says why, with the host's stderr when there is one. */
  onFatal(message: string): void;
  /** How far the session's log is behind: the host's output is not read while it is full (see ReadGate). */
  backlog?: Backlog | undefined;
}

export interface Timeouts {
  /** A new host must answer `harness.info` (stdio) or write its connection file (TCP, HTTP) within this. */
  openMs: number;
  /** How long an interrupted run may take to end after `harness.cancel` before Brain gives up on the host. */
  interruptGraceMs: number;
  /** `harness.shutdown` and `POST /shutdown`. */
  shutdownMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = { openMs: 30_000, interruptGraceMs: 5_000, shutdownMs: 2_000 };
