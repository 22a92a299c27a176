// nui's extension manifest (`extension.yaml`) and its harness list file, as far as Brain reads them. Manifests
// carry other contributions too (aiAssets, catalog, mentionProviders, hitlChannels, storage, ...): those are
// kept, not rejected, so a real nui extension installs unchanged.
import { z } from "zod";

/** apiVersion values nui has used (it was first called "Loop"). */
export const EXTENSION_API_VERSIONS = ["nui.plmbr.dev/extension/v1", "loop.dev/extension/v1"] as const;

/** An extension name is its directory name. */
export const EXTENSION_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const Transport = z.enum(["stdio", "tcp", "http"]);
export type Transport = z.infer<typeof Transport>;

const Command = z.union([z.string().min(1), z.array(z.string()).min(1)]);

export const HarnessRuntime = z.object({
  /** Default stdio, as nui. */
  transport: Transport.optional(),
  /** The host's command line; relative words resolve in the extension dir. Optional for http with a port. */
  command: Command.optional(),
  cwd: z.string().optional(),
  /** http (and tcp) hosts that are already running: where to reach them instead of a command. */
  host: z.string().optional(),
  port: z.number().int().min(1).max(65535).optional(),
  /** Variables added to the host's environment. */
  env: z.record(z.string(), z.string()).optional(),
});
export type HarnessRuntime = z.infer<typeof HarnessRuntime>;

const ListSource = z.object({
  file: z.string().min(1).optional(),
  command: z.unknown().optional(),
});

export const ExtensionManifest = z.object({
  apiVersion: z.enum(EXTENSION_API_VERSIONS),
  name: z.string().regex(EXTENSION_NAME_PATTERN, "1 to 64 letters, digits, '.', '_' or '-'"),
  version: z.string().min(1),
  displayName: z.string().optional(),
  description: z.string().optional(),
  contributions: z
    .object({
      harnesses: z.object({ source: ListSource, runtime: HarnessRuntime.optional() }).optional(),
      agents: z.object({ source: ListSource }).optional(),
    })
    .optional(),
});
export type ExtensionManifest = z.infer<typeof ExtensionManifest>;

export const HarnessListEntry = z.object({
  id: z.string().regex(EXTENSION_NAME_PATTERN, "1 to 64 letters, digits, '.', '_' or '-'"),
  displayName: z.string().optional(),
  description: z.string().optional(),
});
export const HarnessListFile = z.object({ harnesses: z.array(HarnessListEntry) });
export type HarnessListEntry = z.infer<typeof HarnessListEntry>;

/** `agents.yaml`: full agent definitions (ADL), their ids namespaced as `ext:<extension>/<id>`. */
export const AgentListFile = z.object({ agents: z.array(z.record(z.string(), z.unknown())) });

/** `ext:<extension>/<harness-id>`: how agent definitions and sessions name an extension's harness. */
export function extensionHarnessRef(extension: string, harness: string): string {
  return `ext:${extension}/${harness}`;
}

export function parseExtensionRef(ref: string): { extension: string; id: string } | undefined {
  const match = /^ext:([^/]+)\/([^/]+)$/.exec(ref);
  return match ? { extension: match[1]!, id: match[2]! } : undefined;
}
