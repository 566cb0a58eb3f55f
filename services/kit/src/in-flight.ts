/**
 * Work in flight by key: a call for a key that is already running shares its promise
 * instead of starting the work again. Nothing is kept once the work settles (no cache):
 * a later call runs it afresh.
 */
export class InFlight<K, V> {
  private readonly running = new Map<K, Promise<V>>();

  get(key: K): Promise<V> | undefined {
    return this.running.get(key);
  }

  run(key: K, work: () => Promise<V>): Promise<V> {
    const known = this.running.get(key);
    if (known) return known;
    const started = work();
    this.running.set(key, started);
    const forget = () => {
      if (this.running.get(key) === started) this.running.delete(key);
    };
    started.then(forget, forget);
    return started;
  }
}
