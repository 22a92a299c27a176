// The reads and state saves a log has running, so that closing it waits for them before the file is closed.

export class LogTasks {
  private readonly running = new Set<Promise<unknown>>();

  /** Returns `task`, counted as running until it settles. */
  track<T>(task: Promise<T>): Promise<T> {
    this.running.add(task);
    const done = () => this.running.delete(task);
    void task.then(done, done);
    return task;
  }

  /** Resolves once every task running now has settled, however it did. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }
}
