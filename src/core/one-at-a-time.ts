// Work for one key (a session, a tenant) run one at a time in the order given, each after the one before settles,
// failed or not: a read-modify-write of a record, a check and what it admits. Other keys run at once.

export class OneAtATime {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const done = before.then(work, work);
    const tail = done.catch(() => {});
    this.tails.set(key, tail);
    // The last one out lets go of the key: a map of every key ever used would only grow.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return done;
  }
}
