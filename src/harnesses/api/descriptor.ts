// The api family's catalog entry. The AI SDK is imported when the first api session opens, not before.
import { API_PROVIDERS } from "../../protocol/nui/adl.js";
import type { FamilyDescriptor } from "../family.js";
import { LazyFactory } from "../family.js";

export const apiFamily: FamilyDescriptor = {
  name: "api",
  summary: "Brain's own model loop on the AI SDK (config.model is provider:model)",
  capabilities: { steering: "live", images: true, sharedHost: "never" },
  factories: () => [
    new LazyFactory(
      "api",
      { steering: true, images: true },
      async () => new (await import("./factory.js")).ApiHarnessFactory(),
    ),
  ],
  adl: { needs: [{ field: "provider", fix: `one of ${API_PROVIDERS.join(", ")}` }] },
};
