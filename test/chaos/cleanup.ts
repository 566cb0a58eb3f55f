// The teardown of a fault run (chaos, replicas): cleanups registered as things start, run in
// reverse order once, whoever asks first (the end of the run or a signal); the other waits for it.

export interface Cleanups {
  /** Registers a cleanup; they run last-registered first. */
  push(...fns: (() => Promise<unknown>)[]): void;
  /** Runs every registered cleanup once; a later call waits for the same run. */
  run(): Promise<void>;
}

export function cleanupsOnSignal(log: (s: string) => void): Cleanups {
  const cleanups: (() => Promise<unknown>)[] = [];
  let cleaning: Promise<void> | undefined;
  const run = () =>
    (cleaning ??= (async () => {
      for (const c of cleanups.splice(0).reverse()) await c().catch((err: unknown) => log(`cleanup: ${String(err)}`));
    })());
  // `on`, not `once`: tsx hands the signal back to the process, and a second one with no
  // listener left would exit before the cleanup (processes, broker, database) is done.
  let stopping = false;
  const onSignal = (code: number) => {
    if (stopping) return;
    stopping = true;
    void run().finally(() => process.exit(code));
  };
  process.on("SIGINT", () => onSignal(130));
  process.on("SIGTERM", () => onSignal(143));
  return { push: (...fns) => void cleanups.push(...fns), run };
}
