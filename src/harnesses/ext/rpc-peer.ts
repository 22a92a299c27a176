// Brain's side of the JSON-RPC conversation with a nui extension host over one byte stream (a child's stdio or
// a TCP socket; docs/protocol.md#json-rpc-over-stdio-or-tcp-extension-hosts). The protocol has no
// host-to-Brain requests: one is refused, so the host does not wait forever, and reported.
import { RpcPeer } from "../../protocol/jsonrpc.js";

export interface RpcPeerEvents {
  onNotification(method: string, params: unknown): void;
  onWarning(message: string): void;
}

export function hostPeer(write: (text: string) => void, events: RpcPeerEvents): RpcPeer {
  const peer: RpcPeer = new RpcPeer(write, {
    who: "extension host",
    onNotification: (method, params) => events.onNotification(method, params),
    onWarning: (message) => events.onWarning(message),
    onRequest: (id, method) => {
      peer.respondError(id, -32601, `Brain does not serve method "${method}"`);
      events.onWarning(`extension host called "${method}", which Brain does not serve`);
    },
  });
  return peer;
}
