// The api family's catalog entry. The AI SDK is imported when the first api session opens, not before.
import { API_PROVIDERS } from "../../protocol/nui/adl.js";
import type { FamilyDescriptor } from "../family.js";
import { LazyFactory } from "../family.js";
import { ApiOptions } from "./settings.js";

export const apiFamily: FamilyDescriptor = {
  name: "api",
  summary: "Brain's own model loop on the AI SDK (config.model is provider:model)",
  capabilities: { steering: "live", images: true, sharedHost: "never", provider: "always" },
  factories: () => [
    new LazyFactory(
      "api",
      // Every api option tunes the model loop only (steps, retries, sampling, headers to the provider).
      { steering: true, images: true, clientOptions: Object.keys(ApiOptions.shape) },
      async () => new (await import("./factory.js")).ApiHarnessFactory(),
    ),
  ],
  seed: async (input) => (await import("./seed.js")).seedApi(input),
  adl: { needs: [{ field: "provider", fix: `one of ${API_PROVIDERS.join(", ")}` }] },
};
