export type { BlobHooks } from "./blobs.js";
export { CheckpointError } from "./errors.js";
export type { CheckpointFile, CheckpointManifest, CheckpointSegment } from "./manifest.js";
export { WINDOW } from "./plan.js";
export { holdsManifest, refuseInside } from "./restore.js";
export {
  type CheckpointHooks,
  CheckpointStore,
  type CheckpointStoreOptions,
  type Checkpoints,
  type CreateOptions,
} from "./store.js";
