// Commands to a session's owner by NATS request-reply: the owner subscribes to `<prefix>.cmd.<session>` while
// the session is open on it, so a request reaches whichever node owns it now, and "no responders" means none
// does (the sender then claims it itself).
import { type NatsConnection, NoRespondersError, RequestError, TimeoutError } from "@nats-io/transport-node";
import { errorMessage } from "../store/nats/errors.js";
import type { CommandRouter, RoutedRequest, RoutedResponse } from "./routing.js";

export class NatsCommandRouter implements CommandRouter {
  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix = "brain",
    /** How long a forwarded command may take on the owner (commands answer at once: a prompt starts a turn). */
    private readonly timeoutMs = 10_000,
  ) {}

  private subject(session: string): string {
    return `${this.prefix}.cmd.${session}`;
  }

  serve(session: string, handle: (request: RoutedRequest) => Promise<RoutedResponse>): () => void {
    const sub = this.nc.subscribe(this.subject(session), {
      callback: (err, msg) => {
        if (err) return;
        void (async () => {
          let answer: RoutedResponse;
          try {
            answer = await handle(msg.json<RoutedRequest>());
          } catch (e) {
            answer = {
              status: 502,
              contentType: "application/json",
              body: JSON.stringify({
                error: { code: "brain_error", message: `owner failed: ${errorMessage(e)}` },
              }),
            };
          }
          msg.respond(JSON.stringify(answer));
        })();
      },
    });
    return () => sub.unsubscribe();
  }

  async forward(session: string, request: RoutedRequest): Promise<RoutedResponse | undefined> {
    try {
      const reply = await this.nc.request(this.subject(session), JSON.stringify(request), {
        timeout: this.timeoutMs,
      });
      return reply.json<RoutedResponse>();
    } catch (err) {
      // Nobody owns it (or its owner stopped answering): the command runs on this node, which claims it.
      if (
        isNoResponders(err) ||
        err instanceof TimeoutError ||
        (err as Error).cause instanceof TimeoutError
      ) {
        return undefined;
      }
      throw err;
    }
  }
}

function isNoResponders(err: unknown): boolean {
  return (
    err instanceof NoRespondersError ||
    (err instanceof RequestError && err.isNoResponders()) ||
    (err as Error)?.cause instanceof NoRespondersError
  );
}
