// The in-process api harness family: Brain's own model loop on the Vercel AI SDK (see factory.ts).
export { type ApiFactoryOptions, ApiHarnessFactory } from "./factory.js";
export { PROVIDER_NAMES, parseModelSpec } from "./providers.js";
