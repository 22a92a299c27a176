// The devcontainer family's catalog entry: any harness of the catalog that can run behind a launcher (the CLI
// families, the runners) run inside a dev container Brain provisions per session.
import { z } from "zod";
import type { FamilyDescriptor } from "../family.js";
import { ContainerRecords } from "../http/container-records.js";
import { devcontainerShim, installDir } from "../nui/install-paths.js";
import { DevcontainerFactory } from "./factory.js";

export const DevcontainerSettings = z.strictObject({
  /** The Dev Container CLI program (name on PATH or path). */
  devcontainer: z.string().optional(),
  /** The docker program (name on PATH or path). */
  docker: z.string().optional(),
});

export const devcontainerFamily: FamilyDescriptor = {
  name: "devcontainer",
  summary: "another harness (innerHarness) inside a dev container provisioned per session",
  settings: { block: "nui", schema: DevcontainerSettings },
  capabilities: { steering: "per-harness", images: false, sharedHost: "never", provider: "per-harness" },
  factories: (ctx) => {
    const settings = ctx.settings as z.infer<typeof DevcontainerSettings>;
    return [
      new DevcontainerFactory({
        inner: (name, launcher) => ctx.launched(name, launcher),
        innerNames: () => ctx.launchable(),
        needsProvider: (name) => ctx.launchedNeedsProvider(name),
        shim: { node: process.execPath, script: devcontainerShim() },
        installDir: installDir(),
        records: new ContainerRecords(ctx.brainHome),
        ...(ctx.config.containers ? { limits: ctx.config.containers } : {}),
        // Tests hand their fakes' variables to the commands (a host's own Brain never does).
        ...(ctx.testing?.commandEnv ? { env: ctx.testing.commandEnv as NodeJS.ProcessEnv } : {}),
        programs: {
          ...(settings.devcontainer ? { devcontainer: settings.devcontainer } : {}),
          ...(settings.docker ? { docker: settings.docker } : {}),
        },
      }),
    ];
  },
  adl: {
    needs: [{ field: "innerHarness", fix: "the harness to run inside, e.g. innerHarness: claude-code" }],
  },
};
