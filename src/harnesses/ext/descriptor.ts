// The ext family's catalog entry: one harness per harness an installed nui extension contributes, named
// `ext:<extension>/<id>`. Broken extensions are reported as problems, not thrown. The host transports are
// imported when a session of one opens.
import { homedir } from "node:os";
import { resolve } from "node:path";
import { z } from "zod";
import { parseExtensionRef } from "../../protocol/nui/manifest.js";
import { type FamilyDescriptor, LazyFactory } from "../family.js";
import { NUI_AGENT_SIDE } from "../nui/agent-side.js";
import type { NuiApiServer } from "../nui/api-server.js";
import { extensionsDir, listExtensions } from "./extensions.js";
import { pythonSdkDir } from "./sdk-paths.js";
import type { Timeouts } from "./transport.js";

export const ExtSettings = z.strictObject({
  /** Where TCP/HTTP extension hosts write connection files. Default ~/.nui/connections (nui's place). */
  connections_dir: z.string().optional(),
});

/** What tests set through FamilyContext.testing. */
interface ExtTesting {
  /** HOME for extension hosts (a scratch dir). Default: the user's home. */
  hostHome?: string;
  extensionTimeouts?: Partial<Timeouts>;
}

export const extFamily: FamilyDescriptor = {
  name: "ext",
  summary: "the harnesses of installed nui extensions (ext:<extension>/<id>)",
  settings: { block: "nui", schema: ExtSettings },
  capabilities: { steering: "none", images: false, sharedHost: "per-harness", provider: "per-harness" },
  factories: (ctx) => {
    const settings = ctx.settings as z.infer<typeof ExtSettings>;
    const testing = (ctx.testing ?? {}) as ExtTesting;
    const { extensions, problems } = listExtensions(extensionsDir(ctx.brainHome));
    // One loopback server for nui's HITL requests, shared by every extension harness of this host.
    let api: Promise<NuiApiServer> | undefined;
    const sharedApi = () => {
      api ??= import("../nui/api-server.js").then((m) => new m.NuiApiServer());
      return api;
    };
    const factories = extensions.flatMap((extension) =>
      extension.harnesses.map((harness) => {
        if (!extension.runtime) throw new Error(`${harness.ref}: the extension declares no harness runtime`);
        return new LazyFactory(harness.ref, { steering: false, agentSide: NUI_AGENT_SIDE }, async () => {
          const { ExtensionHarnessFactory } = await import("./factory.js");
          return new ExtensionHarnessFactory(extension, harness, {
            api: await sharedApi(),
            pythonSdkDir: pythonSdkDir(),
            ...(ctx.spawner ? { spawner: ctx.spawner } : {}),
            home: testing.hostHome ?? homedir(),
            ...(testing.extensionTimeouts ? { timeouts: testing.extensionTimeouts } : {}),
            ...(settings.connections_dir
              ? { connectionsDir: resolve(ctx.configDir, settings.connections_dir) }
              : {}),
          });
        });
      }),
    );
    return { factories, problems };
  },
  adl: {
    claims: (type) => {
      if (!type.startsWith("ext:")) return undefined;
      return parseExtensionRef(type)
        ? { ok: true }
        : { ok: false, message: `"${type}" is not ext:<extension>/<harness-id>` };
    },
  },
};
