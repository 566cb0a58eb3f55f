/**
 * In-process order for work that PostgreSQL serializes anyway, so that waiting costs no
 * database connection. A correlation holds its SIM's advisory lock across dispatch's proof
 * call; twenty copies of one SIM's messages arriving together would otherwise each take a
 * pooled connection only to wait on that lock, and leave none for every other SIM's work (a
 * pool of ten, starved: every other submission ran out of its deadline). With this, a
 * replica spends at most one connection per SIM waiting; other replicas wait in the same
 * database lock, as before.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `fn` after every earlier `run` of the same key has settled. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const mine = before.then(fn, fn);
    const tail = mine.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return mine;
  }
}

/**
 * Copies of one message handled by this replica at the same time share one run: the
 * second copy of an SMS (the app's retry) waits for the first's result instead of queueing
 * for the same locks.
 */
export class SingleFlight {
  private readonly running = new Map<string, Promise<unknown>>();

  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const current = this.running.get(key) as Promise<T> | undefined;
    if (current) return current;
    const p = fn().finally(() => this.running.delete(key));
    this.running.set(key, p);
    return p;
  }
}
