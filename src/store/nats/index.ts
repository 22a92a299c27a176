// The cluster store: sessions on NATS JetStream (src/store/nats), the same interfaces as src/store/fs.
export { ReplicatedCheckpoints } from "./checkpoints.js";
export { type NatsContext, type NatsStoreConfig, openNatsContext } from "./context.js";
export { NatsStoreError } from "./errors.js";
export { NatsEventLog, type WriteGuard } from "./event-log.js";
export { Lease, type LeaseHolder } from "./lease.js";
export { NatsSessionStore, type NatsSessionStoreOptions } from "./session-store.js";
