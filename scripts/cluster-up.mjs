#!/usr/bin/env node
// `npm run cluster`: cluster mode on one machine to try it out: a 3-node NATS cluster with JetStream (Debian's
// nats-server, installed when missing) and three Brain nodes (`brain serve --nats`, no auth, loopback only),
// each in its own temp dir. Ctrl-C stops them all and removes the dirs. Needs the build (npm run build).
import { startBrainNode } from "../dist/src/testing/brain-node.js";
import { startNatsCluster } from "../dist/src/testing/nats-cluster.js";

const cluster = await startNatsCluster();
const nodes = [];
try {
  for (const name of ["a", "b", "c"]) nodes.push(await startBrainNode(`node-${name}`, cluster.servers));
} catch (err) {
  await Promise.allSettled(nodes.map((n) => n.stop()));
  await cluster.stop();
  throw err;
}
console.log(`NATS: ${cluster.servers.join(",")}  (data in ${cluster.dir})`);
for (const node of nodes) console.log(`${node.name}: ${node.url}/  (web UI; BRAIN_HOME ${node.home})`);
console.log(
  "every node serves every session; kill one (its pid is in `ps`) to watch another take over. Ctrl-C stops all.",
);
await new Promise((resolve) => {
  process.once("SIGINT", resolve);
  process.once("SIGTERM", resolve);
});
console.error("stopping the Brain nodes and the NATS cluster");
await Promise.allSettled(nodes.map((n) => n.stop()));
await cluster.stop();
