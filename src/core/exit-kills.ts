// The process groups Brain started detached (its runners, its MCP stdio servers): each is in a group of its own, so
// a Ctrl-C at Brain's terminal does not reach it, and Brain leaving at once (process.exit: a second Ctrl-C of
// `brain run`) stops nothing gracefully. They are killed as Brain exits, through one "exit" listener for them
// all: one per group passed Node's limit of 10 listeners and warned. Owned by whoever sets Brain up, not a
// module's: two Brains in one process (tests) each kill their own.
export class ExitKills {
  private readonly groups = new Set<number>();
  private readonly kill = () => {
    for (const pgid of this.groups) {
      try {
        process.kill(-pgid, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
  };

  /** Kills group `pgid` as this process exits, until the returned function is called (its leader's exit). */
  add(pgid: number): () => void {
    if (this.groups.size === 0) process.on("exit", this.kill);
    this.groups.add(pgid);
    return () => {
      // Its id may name another group once it is gone: forgotten then, not killed at exit.
      if (!this.groups.delete(pgid)) return;
      if (this.groups.size === 0) process.off("exit", this.kill);
    };
  }
}
