// How the kit talks to each kind of harness: which wire the fake provider is reached on, the model named, the
// session config (CLI agents run in `bound` tool mode, the only mode in which Brain's tools reach them), and the
// name the model calls a bound tool by. A harness the kit has no profile for is treated as a runner.
import type { SessionConfig } from "../../../protocol/runner.js";
import type { ScriptedToolCall } from "../../../testing/fake-provider/index.js";

export interface SubjectProfile {
  /** What kind of harness this is, for the table: "runner", "api", "cli". */
  kind: string;
  /** The provider's `api` (undefined: the harness's default) and the path under the fake provider's URL. */
  api?: string;
  path: string;
  config: SessionConfig;
  /** The model's call of Brain's tool `name`, as this harness offers it to the model. */
  call(name: string, args: Record<string, unknown>): ScriptedToolCall;
  /** Where the key travels: the header names the kit looks in. */
  keyHeaders: string[];
  /**
   * Top-level request fields that carry the CLI's own identity rather than the conversation (Claude Code's
   * `metadata.user_id` holds a device id made per config dir): the fidelity check names them when they differ.
   */
  identity?: string[];
  /**
   * Ids the CLI mints for each item it adds to a request (Codex gives the new user message a fresh time-based
   * id), global: the fidelity check sets them aside and names them when they differ.
   */
  freshIds?: RegExp;
  /**
   * What the CLI lists in an order of its own making, not the conversation's (Gemini's skills, in the order its
   * glob found their files): the fidelity check compares the requests with it put in one order (`apply`, on their
   * JSON text), and names it (`what`) when only that order differed.
   */
  unordered?: { what: string; apply(json: string): string };
}

const plain = (name: string, args: Record<string, unknown>): ScriptedToolCall => ({ name, arguments: args });
const bearer = ["authorization"];

const RUNNER: SubjectProfile = {
  kind: "runner",
  api: "openai-completions",
  path: "/v1",
  config: { model: "openai/conformance-model" },
  call: plain,
  keyHeaders: bearer,
};

/** Claude Code, on its own or inside an ACP adapter: its device id (per config dir) is not the conversation's. */
const CLAUDE_CODE: SubjectProfile = {
  kind: "cli",
  path: "",
  config: { tool_mode: "bound" },
  call: (name, args) => plain(`mcp__brain__${name}`, args),
  keyHeaders: ["x-api-key", "authorization"],
  identity: ["metadata"],
};

/** Codex, on its own or inside codex-acp. */
const CODEX: SubjectProfile = {
  kind: "cli",
  api: "openai-responses",
  path: "/v1",
  config: { tool_mode: "bound", model: "conformance-model" },
  call: (name, args) => ({ name, namespace: "mcp__brain", arguments: args }),
  keyHeaders: bearer,
  // The installation id Codex keeps in its CODEX_HOME (not the conversation's) and the ids it mints for each
  // new message.
  identity: ["client_metadata"],
  freshIds: /\bmsg_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g,
};

const PROFILES: Record<string, SubjectProfile> = {
  api: { ...RUNNER, kind: "api", api: undefined, config: { model: "openai-chat:conformance-model" } },
  "claude-code": CLAUDE_CODE,
  codex: CODEX,
  opencode: {
    kind: "cli",
    path: "/v1",
    config: { tool_mode: "bound", model: "conformance-model" },
    call: (name, args) => plain(`brain_${name}`, args),
    keyHeaders: bearer,
  },
  // The same Claude Code inside, behind its ACP adapter.
  "acp:claude": CLAUDE_CODE,
  // The same codex inside; but codex-acp has no model catalog of Brain's: a slug its codex knows, or every answer
  // carries a notice.
  "acp:codex": { ...CODEX, config: { tool_mode: "bound", model: "gpt-5.4" } },
  "acp:gemini": {
    kind: "cli",
    path: "",
    config: { tool_mode: "bound" },
    call: (name, args) => plain(`mcp_brain_${name}`, args),
    keyHeaders: ["x-goog-api-key"],
    unordered: {
      what: "the order of the skills Gemini lists in its system prompt (the order its glob found their files in)",
      apply: sortedSkills,
    },
  },
  "pi-cli": {
    kind: "cli",
    api: "openai-completions",
    path: "/v1",
    config: { tool_mode: "bound", model: "openai/conformance-model" },
    call: plain,
    keyHeaders: bearer,
  },
};

/** Each `<available_skills>` block of `json` (a JSON text: its newlines escaped) with its `<skill>` entries sorted. */
export function sortedSkills(json: string): string {
  return json.replace(
    /(<available_skills>)(.*?)(<\/available_skills>)/g,
    (_all, open, body: string, close) => {
      const skills = body.match(/<skill>.*?<\/skill>/g) ?? [];
      const rest = body.replace(/<skill>.*?<\/skill>/g, "");
      return `${open}${[...skills].sort().join("")}${rest}${close}`;
    },
  );
}

export function profileFor(harness: string | undefined): SubjectProfile {
  return (harness && PROFILES[harness]) || RUNNER;
}
