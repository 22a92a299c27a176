// What `brain acp` takes from an editor's requests, checked: session/new's _meta.brain, a prompt's blocks, and
// session/load's directory. Each mistake is invalid params naming the field.
import { statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { type ContentBlock, RequestError } from "@agentclientprotocol/sdk";
import type { CreateSessionBody, PromptBody } from "../protocol/api.js";
import { SESSION_ID_PATTERN } from "../protocol/session.js";

/** session/new's `_meta.brain` keys, each a field of BrainMeta. */
const META_KEYS = ["harness", "agent", "provider", "config", "permissions"] as const;

/** session/new's `_meta.brain`: what the editor may choose. */
interface BrainMeta {
  harness?: string;
  agent?: string;
  /** A provider the operator configured, by name (GET /v1/providers). */
  provider?: string;
  config?: CreateSessionBody["config"];
  permissions?: CreateSessionBody["permissions"];
}

/**
 * ACP's session/new, session/load and session/list take a cwd that "Must be an absolute path": a relative one was
 * recorded as the session's directory (and given back by session/list as its SessionInfo.cwd, which must be absolute
 * too), or resolved against `brain acp`'s own directory, which is not the editor's project.
 */
export function refuseRelativeCwd(cwd: string): void {
  if (!isAbsolute(cwd)) {
    throw RequestError.invalidParams({
      message: `cwd ${JSON.stringify(cwd.slice(0, 4096))} is not an absolute path: ACP's cwd is the project's directory as an absolute path, such as "/home/me/project"`,
      field: "cwd",
    });
  }
}

/**
 * A sessionId no session can have, refused before it goes into a daemon path: "", "." and ".." made another path
 * ("/v1/sessions/", "/v1/"), answered "no route GET /v1/", which named neither the field nor what was wrong.
 */
export function refuseBadSessionId(sessionId: string): void {
  if (!SESSION_ID_PATTERN.test(sessionId)) {
    throw RequestError.invalidParams({
      message: `sessionId ${JSON.stringify(sessionId.slice(0, 100))} is not a session id (1 to 64 letters, digits, '_' or '-'): use one session/new or session/list gave`,
      field: "sessionId",
    });
  }
}

/**
 * session/load's cwd is the editor's, on this machine (`brain acp` runs beside the editor): a project since moved
 * or deleted is named here, rather than a session shown as loaded in a directory that is not there.
 */
export function refuseMissingDir(cwd: string): void {
  refuseRelativeCwd(cwd);
  let isDir = false;
  try {
    isDir = statSync(cwd).isDirectory();
  } catch {}
  if (!isDir) {
    throw RequestError.invalidParams({
      message: `cwd ${JSON.stringify(cwd.slice(0, 4096))} is not an existing directory on this machine (moved or deleted since the session was made?): load the session with its project's directory, as session/list gives it`,
      field: "cwd",
    });
  }
}

/** The prompt as Brain takes it: text (text blocks, links, embedded text resources) and images; audio and binary
 * resources are refused, named. */
export function promptOf(blocks: ContentBlock[]): { text: string; images: PromptBody["images"] } {
  const parts: string[] = [];
  const images: NonNullable<PromptBody["images"]> = [];
  for (const [i, block] of blocks.entries()) {
    if (block.type === "text") parts.push(block.text);
    else if (block.type === "image") images.push({ mime_type: block.mimeType, data: block.data });
    else if (block.type === "resource_link") parts.push(`[${block.name}](${block.uri})`);
    else if (block.type === "resource" && "text" in block.resource) {
      parts.push(`<resource uri="${block.resource.uri}">\n${block.resource.text}\n</resource>`);
    } else {
      const what =
        block.type === "resource"
          ? "an embedded resource of binary content (blob)"
          : `a block of type ${block.type}`;
      throw RequestError.invalidParams({
        message: `Brain takes text, images, resource links and text resources: ${what} cannot be sent (promptCapabilities say so); send it as a resource link or text`,
        field: `prompt[${i}]`,
      });
    }
  }
  const text = parts.join("\n");
  if (!text.trim()) {
    throw RequestError.invalidParams({
      message:
        "the prompt has no text: every prompt to a Brain session needs a text block (images go with it)",
      field: "prompt",
    });
  }
  return { text, images };
}

/**
 * A field of the daemon's prompt body, as the daemon named it in a refusal, by where it is in the editor's
 * session/prompt: ACP's prompt has no `images`, only content blocks, so `images.1.data` named no block the editor
 * sent. The Nth image is the Nth image block (promptOf keeps their order); the text is the prompt's.
 */
export function promptField(blocks: ContentBlock[], field: string): string {
  if (field === "text") return "prompt";
  const image = /^images(?:\.(\d+))?(?:\.(.+))?$/.exec(field);
  if (!image) return field;
  const at = blocks.flatMap((block, i) => (block.type === "image" ? [i] : []))[Number(image[1] ?? 0)];
  if (at === undefined) return "prompt";
  const within = image[2] === "mime_type" ? "mimeType" : image[2];
  return `prompt[${at}]${within ? `.${within}` : ""}`;
}

/**
 * A field of the daemon's create body, as the daemon named it in a refusal, by where the editor gave it: under
 * `_meta.brain` (or `_meta`, as brainMeta reads it), and editor_cwd as session/new's cwd. A field the command line
 * chose (--harness) keeps the daemon's name.
 */
export function newSessionField(meta: Record<string, unknown> | null | undefined, field: string): string {
  if (field === "editor_cwd") return "cwd";
  const under = meta?.brain !== undefined && meta.brain !== null ? "_meta.brain" : "_meta";
  const given = under === "_meta.brain" ? meta?.brain : meta;
  const key = field.split(".")[0] ?? field;
  return typeof given === "object" && given !== null && key in given ? `${under}.${field}` : field;
}

/**
 * session/new's `_meta.brain` (or `_meta` itself), its fields passed on as given: the daemon checks them and
 * names a wrong one. Dropping a field of the wrong type here made a session without what the editor asked for
 * (its permissions, its harness) and said nothing.
 */
export function brainMeta(meta: Record<string, unknown> | null | undefined): BrainMeta {
  const value = meta?.brain ?? meta ?? {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw RequestError.invalidParams({
      message: `_meta.brain is an object such as {"harness": "echo"}, not ${Array.isArray(value) ? "an array" : typeof value}`,
      field: "_meta.brain",
    });
  }
  const given = value as Record<string, unknown>;
  // Under _meta.brain every key is Brain's: one it does not take is a typo ("harnes") that made a session on the
  // default harness and said nothing. _meta itself is shared with other extensions, so its other keys are theirs.
  // (A null _meta.brain is none, as ?? above reads it.)
  if (meta?.brain !== undefined && meta.brain !== null) {
    const unknown = Object.keys(given).find((key) => !(META_KEYS as readonly string[]).includes(key));
    if (unknown !== undefined) {
      throw RequestError.invalidParams({
        message: `_meta.brain has no field ${JSON.stringify(unknown.slice(0, 100))}: it takes ${META_KEYS.join(", ")}`,
        field: `_meta.brain.${unknown.slice(0, 100)}`,
      });
    }
  }
  const out: Record<string, unknown> = {};
  // provider is only a name (the daemon refuses inline settings, which would let an editor's config point the
  // daemon's keys anywhere).
  for (const key of META_KEYS) {
    if (given[key] !== undefined) out[key] = given[key];
  }
  return out as BrainMeta;
}
