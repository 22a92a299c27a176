// The embedded (file-system) store: session records and their JSONL event logs under $BRAIN_HOME.
export { StoreError } from "./errors.js";
export { JsonlEventLog, readEventsFile } from "./jsonl-log.js";
export { type LogIO, nodeLogIO } from "./log-io.js";
export { type LogHolder, LogLockedError } from "./log-lock.js";
export { SESSION_ID, SessionRecord } from "./session-record.js";
export {
  FsSessionStore,
  type NewSession,
  type SessionPatch,
  type SessionPaths,
  type StoreOptions,
} from "./session-store.js";
