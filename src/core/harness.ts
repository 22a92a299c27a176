// The harness contract: every harness family (runner processes, the API loop, the CLI agents, HTTP agents,
// extensions) is one adapter behind these two interfaces. This is the TypeScript form of seed A's
// Factory/Runner.
//
// Invariants every adapter must keep (`brain conformance --harness NAME` checks them for any configured harness):
//
// - Passive open: `open()` on a native dir that already holds a conversation loads it and does nothing else:
//   no model request, no tool call, no timer or background cache warmer, until the next `prompt()`.
// - Settled return: `prompt()` resolves only when the turn has finished (including every tool call and
//   follow-up generation) or has been interrupted. It rejects with a HarnessError when the turn failed.
// - Clean checkpoints: `checkpoint()` is called only between turns. It lists the files (relative to the native
//   dir) that restore the conversation, with their exact sizes; `append_only` files only ever grow. No file may
//   hold a provider credential.
// - Isolation: the model may call only the tools in `options.tools`, each through `options.call`. No built-in
//   shell or editor tools, no ambient plugins. (The CLI agents keep this only in `bound` tool mode, through the
//   session's tool endpoint, src/tools/endpoint; in `native` mode they run their own tools under the policy.)

import type { McpServers } from "../protocol/config.js";
import type { ErrorInfo, NewEvent, PromptImage, Question, Unanswered } from "../protocol/events.js";
import type {
  NativeFile,
  ProviderCredentials,
  RunnerErrorCode,
  SessionConfig,
  ToolCallParams,
  ToolResult,
  ToolSchema,
} from "../protocol/runner.js";
import type { Backlog } from "./backlog.js";
import type { ExpectedHistory } from "./native-check.js";
import type { Secret } from "./redact.js";

/**
 * Events a harness reports during a turn; the session stamps them with seq, ts and session. `tool.call` and
 * `tool.result` are for harnesses that run their own tools (the CLI agents, nui's hosts): they report what ran, by
 * the agent's own tool names; bound tools go through `call` instead. A harness reports a `tool.result` only for a
 * call of its turn that it reported and has not answered: it knows which calls are its own and how to report an
 * agent's stray results (the CLI families drop them silently, as opencode's late "aborted" marks: isTurnEvent;
 * nui's warn within a per-run bound: RunTranslator). The session does not check it again.
 */
export type HarnessEvent = Extract<
  NewEvent,
  {
    type:
      | "assistant.delta"
      | "assistant.message"
      | "image"
      | "harness.warning"
      | "tool.call"
      | "tool.result"
      | "context.compacted";
  }
>;

export interface HarnessOptions {
  sessionId: string;
  /** The session's native dir: the harness keeps all its own state here, nowhere else. */
  dir: string;
  config: SessionConfig;
  /** The schemas of the tools bound to this session: the only tools the model may call. */
  tools: ToolSchema[];
  /**
   * The session's MCP servers as configured (`mcp_servers`), for harnesses whose agent starts MCP servers itself
   * (the ACP family hands them to the agent in session/new).
   */
  mcpServers?: McpServers;
  provider: ProviderCredentials;
  /** The session's configured provider's `reasoning` (brain.config.json): the api harness's default for it. */
  providerReasoning?: boolean;
  /**
   * The usual provider variables (OPENAI_API_KEY, OLLAMA_HOST, …) a harness may take a key and endpoint from: given
   * only for a session that names no provider, on a host run by the operator for themselves (`brain run`, `brain
   * acp`). Absent otherwise, and then the key and endpoint are `provider`'s alone: nothing a client sends (a model
   * name, say) may pick one of the host's keys or send one elsewhere.
   */
  providerEnv?: NodeJS.ProcessEnv;
  /**
   * Aborted when the session closes (or is deleted) while the harness is still opening, which the close waits for:
   * a harness whose open can take minutes (a dev container's `devcontainer up`, pulling or building its image and
   * running its lifecycle commands) stops it, removes what it started and rejects. Optional, so hosts and tests need
   * not provide it.
   */
  signal?: AbortSignal;
  emit(event: HarnessEvent): void;
  /**
   * How far the session's log is behind what `emit` took: a harness that reads its agent's output stops reading
   * while it is full (see Backlog). Absent for a log that holds no appends in memory while they wait.
   */
  backlog?: Backlog;
  /**
   * Tells the session a secret the harness gave its agent (the token in an extension host's NUI_API_URL): from now
   * on the session's log, what its clients are shown and its checkpoints keep it out. Optional, so hosts and tests
   * need not provide it.
   */
  secret?(secret: Secret): void;
  /**
   * `value` with every secret the session's log keeps out redacted (the provider key, the host's secret-named
   * variables, MCP `${VAR}` values): for a harness that writes its own native state, which a checkpoint holding
   * one refuses. Optional, so hosts and tests need not provide it.
   */
  redact?<T>(value: T): T;
  /**
   * Runs a bound tool. Never rejects for a tool's own failure: that is a result with `is_error: true`. `answer`,
   * when given, is called with the tool's result as soon as there is one, just before its `tool.result` is logged
   * in the same tick: it hands the result on (a write to a runner, whose reaction is read later) and emits nothing
   * itself, which would be logged ahead of the result. The promise still settles after, with the result or with
   * the refusal or error that took its place, so a harness answering from both answers once.
   */
  call(
    turn: string,
    call: ToolCallParams,
    signal: AbortSignal,
    answer?: (result: ToolResult) => void,
  ): Promise<ToolResult>;
  /**
   * For harnesses that run tools themselves (the CLI agents): asks the session's permission policy, and through
   * it a client when the policy says ask. Denied when no client answers in time.
   */
  permit(
    turn: string,
    use: ToolUse,
    signal: AbortSignal,
    options?: { id?: string; unlisted?: "allow" | "ask" | "deny"; waitMs?: number; expiresAt?: string },
  ): Promise<PermissionVerdict>;
  /**
   * What the session's permission policy says about a tool, without asking anyone: for harnesses that can only
   * gate tools up front (pi's `--tools` allowlist). Optional, so hosts and tests need not provide it.
   */
  policy?(tool: string): "allow" | "ask" | "deny";
  /**
   * Asks the session's clients a question (human in the loop); "" when no one answers in time. `options.id`
   * names the request with the harness's own id (nui's HITL requestId), so clients answer it by that id;
   * `options.waitMs` waits at most that long for an answer (nui's HITL ttl), never past the session's ask timeout,
   * and `options.expiresAt` says when that ends (nui's expiresAt; logged with the question);
   * `options.together`: the ids of all the questions of one request (the first its own), answered as one.
   */
  ask(
    turn: string,
    question: Question,
    signal: AbortSignal,
    options?: {
      id?: string;
      waitMs?: number;
      expiresAt?: string;
      together?: readonly string[];
      /** Told, when the answer is "", whether a person declined the question or why no one answered. */
      told?: (ending: AskEnding) => void;
    },
  ): Promise<string>;
  /**
   * Whether a permission request or question with this id is pending in the session: `permit` and `ask` refuse
   * such an id, and a harness that lets its agent choose ids (nui's HITL requestId) can refuse it up front.
   * Optional, so hosts and tests need not provide it.
   */
  asking?(id: string): boolean;
  /**
   * The session's ask timeout (ms): the longest `permit` and `ask` wait for a client. nui's HITL envelopes promise
   * no later expiry than this. Optional, so hosts and tests need not provide it (nui's default ttl then).
   */
  askTimeoutMs?: number;
  /**
   * Set when the harness's program runs in a container Brain started for the session (`sandbox: docker`, a dev
   * container): what differs from running it on this host.
   */
  container?: ContainerContext;
}

/** A user by its numeric ids, as files on this host are owned. */
export interface ContainerUser {
  uid: number;
  gid: number;
}

/** What a harness whose program runs in a session's container needs to know of it. */
export interface ContainerContext {
  /**
   * A private directory mounted at its own path inside: the session's tool endpoint puts its socket and config
   * files here, so a CLI inside reaches Brain's bound tools.
   */
  toolsDir: string;
  /** The node program inside (the host's path to node may not exist there). */
  node: string;
  /**
   * The user the program runs as inside, when it is not Brain's (a dev container's non-root remoteUser under a
   * root Brain): the tool endpoint's directory, proxy, socket and config files are handed to it, or it could
   * neither read them nor connect. Unset: Brain's user, whose own files they are.
   */
  user?: ContainerUser;
  /**
   * Makes a server the program runs inside on the container's 127.0.0.1:`port` answer on this host's
   * 127.0.0.1:`port` (the container has no network of its own); close it when that server stops.
   */
  publish(port: number): Promise<{ close(): Promise<void> }>;
  /**
   * Makes this host's 127.0.0.1:`port` (a server of Brain's, such as the session's credential proxy) answer on
   * the container's 127.0.0.1:`port`; close it when that server stops. Absent when this host cannot enter the
   * container's network namespace (a dev container with network: "bridge" under a Brain that is not root).
   */
  reach?(port: number): Promise<{ close(): Promise<void> }>;
  /**
   * The program reaches its provider only through the session's credential proxy (bridged in with `reach`): the
   * provider's own loopback port, bridged in before the program starts for a program that talks to the provider
   * itself, is cut, so an agent in the container cannot go past the proxy to a provider that takes any key (a
   * local model server) or spend what the proxy would refuse. Called before the program starts.
   */
  proxied?(): Promise<void>;
}

export interface ToolUse {
  tool: string;
  arguments?: Record<string, unknown>;
  reason?: string;
  /** The id of the tool.call the harness logged for this use (permission.requested's tool_call_id). */
  tool_call_id?: string;
}

/** How a question was ended without an answer: `declined` by a person, or `unanswered` (the host's fallback). */
export type AskEnding = { declined?: true; unanswered?: Unanswered };

export interface PermissionVerdict {
  decision: "allow" | "deny";
  reason?: string;
  /** Why no one answered (the wait passed, the turn ended): the deny is the host's fallback, not a person's. */
  unanswered?: Unanswered;
}

export interface TurnContext {
  turn: string;
  /** Aborted when the turn is interrupted or the session closes. */
  signal: AbortSignal;
  /** Images sent with the prompt; only given to harnesses whose factory says `supportsImages`. */
  images?: PromptImage[];
}

export interface PromptOutcome {
  interrupted: boolean;
}

export interface Harness {
  prompt(text: string, ctx: TurnContext): Promise<PromptOutcome>;
  /** Adds text to the running turn (only when the factory supports steering). */
  steer(text: string, turn: string): Promise<void>;
  /** Asks the running turn to stop; `prompt()` then settles with `interrupted: true`. */
  interrupt(turn: string): Promise<void>;
  /**
   * The turn's pending tool calls are cancelled only once `interrupt()` has resolved, not at once: an agent that
   * takes tool results on a channel apart from the interrupt (a CLI's MCP calls) would send a cancelled result it
   * got first on to its model. `interrupt()` must then resolve once the agent has taken it, or given up on it.
   */
  readonly cancelsToolsAfterInterrupt?: boolean;
  checkpoint(): Promise<NativeFile[]>;
  /**
   * The files `checkpoint()` listed are now stored in a durable checkpoint, the base of the next: a file the
   * harness listed as not append-only because it rewrote it may be listed append-only again. Not called when the
   * checkpoint failed.
   */
  checkpointed?(files: NativeFile[]): void;
  close(): Promise<void>;
  /**
   * Whether the native state holds the conversation Brain's log says it had (the last prompt the model answered):
   * undefined when it does, else what is missing, naming the file. Asked once when the harness opens on a
   * session with answered turns, before anything starts: a harness without its history must not quietly start
   * the model afresh. Passive like open: it reads files and nothing else.
   */
  verify?(expected: ExpectedHistory): Promise<string | undefined>;
  /** False once the harness can serve no more turns (its process died): the session then opens a fresh one. */
  isAlive?(): boolean;
  /** How this harness steers, when its factory's `steering` is "per-session". */
  readonly steeringOf?: Steering;
}

/** Whether a harness takes steers, and how (HarnessFactory.supportsSteering and .steering). */
export interface Steering {
  supported: boolean;
  mode?: "live" | "queued";
}

/**
 * A process a caller started before it knew which factory would need it (the CLI's early runner,
 * src/harnesses/process/started-runner.ts): a factory takes only what it would have started itself.
 */
export interface Prestarted {
  /** Ends it if no factory took it. */
  discard(): Promise<void>;
}

export interface HarnessFactory {
  readonly name: string;
  readonly supportsSteering: boolean;
  /**
   * "queued" when a steer cannot reach the running generation and is sent as a follow-up once the CLI's own
   * turn ends (still inside the same Brain turn); the session then logs `user.steer` with `queued: true`.
   * "per-session" when it runs a different harness per session (a dev container): the session's open harness
   * says (Harness.steeringOf), and supportsSteering only that some may steer.
   */
  readonly steering?: "live" | "queued" | "per-session";
  /** Takes images with a prompt (TurnContext.images); a prompt with images to any other harness is refused. */
  readonly supportsImages?: boolean;
  /**
   * false: this harness calls no model provider (the echo runner). Read for a family whose capability `provider`
   * is "per-harness" (src/harnesses/family.ts needsProvider); absent, it calls one.
   */
  readonly needsProvider?: boolean;
  /**
   * The `config.options` keys a network client (REST, ACP through the daemon) may set on a session of this
   * harness. Everything else is the operator's, set in an agent definition or the config's defaults: keys that
   * pick an image, a URL, a directory, flags or environment would let a token holder reach the host. Absent:
   * none. "any" for harnesses whose options only tune the harness itself (a runner's).
   */
  readonly clientOptions?: ClientOptions;
  /** Why an option a network client may not set is the operator's, by key: said in the client's refusal. */
  readonly operatorOptions?: Readonly<Record<string, string>>;
  /**
   * Why a session with this config cannot be taken over by another machine (its state is not all in its native
   * dir and checkpoints), or undefined when it can. Options naming a local directory pin any harness anyway.
   */
  pinned?(config: SessionConfig): string | undefined;
  /**
   * Why a copy of a session's native dir is no conversation of its own, or undefined when it is: the agent keeps
   * the conversation on its side and the native dir only the id it is found by. A fork that resumed that id would
   * write into its parent's conversation (each one's turns changing the other's future), so Brain forks such a
   * session into a new agent conversation instead, seeded from the log (Brain.fork). `nativeDir`: the session's,
   * for a family whose agent says at its start where it keeps its state (the docker harness's records it there).
   */
  agentSide?(config: SessionConfig, nativeDir?: string): string | undefined | Promise<string | undefined>;
  /**
   * Starts what the next open will need (a runner process) ahead of it, for a caller that knows the harness
   * before the rest of its start-up has run. Released by the factory's close if no session takes it. `started`:
   * a runner spawned before the config was validated, which the factory takes (true) only if it is exactly the
   * one it would start; the caller discards it otherwise.
   */
  prestart?(started?: Prestarted): boolean | undefined;
  open(options: HarnessOptions): Promise<Harness>;
}

export type ClientOptions = "any" | readonly string[];

/** A failed turn, with the code that says whose side failed. */
export class HarnessError extends Error {
  override name = "HarnessError";
  constructor(
    readonly code: RunnerErrorCode,
    message: string,
  ) {
    super(message);
  }

  toInfo(): ErrorInfo {
    return { code: this.code, message: this.message };
  }
}

export type { ExpectedHistory, NativeFile };
