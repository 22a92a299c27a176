// Where Brain keeps its state and which harnesses a config offers: what commands that list or check harnesses
// need, without the session store, the tools and the rest of a Brain (setup.ts builds one).
import {
  builtinCatalog,
  catalogHarnesses,
  catalogHarnessTypes,
  type HarnessTypes,
} from "../harnesses/catalog.js";
import { brainHome } from "./brain-home.js";
import type { LoadedConfig } from "./config.js";

export { brainHome };

/** Every harness the catalog offers under this config (a later one replaces an earlier one of the same name). */
export function configHarnesses(
  loaded: LoadedConfig,
  home = brainHome(),
  catalog = builtinCatalog(),
  warmRunners = false,
) {
  return catalogHarnesses(catalog, {
    config: loaded.config,
    configDir: loaded.dir,
    brainHome: home,
    ...(warmRunners ? { warmRunners } : {}),
  });
}

/** The ADL harness types this config's host runs: what agent definitions are checked against. */
export function configHarnessTypes(
  loaded: LoadedConfig,
  home = brainHome(),
  catalog = builtinCatalog(),
): HarnessTypes {
  const names = configHarnesses(loaded, home, catalog).factories.map((f) => f.name);
  return catalogHarnessTypes(catalog, names);
}
