// The simulation's one source of choices: a seeded generator (mulberry32, the simulator's own
// `seeded`), so that one seed gives one sequence of actions and inputs.
import { seeded } from "../simulator/operator-sms.ts";

export class Random {
  private readonly next: () => number;

  constructor(readonly seed: number) {
    this.next = seeded(seed);
  }

  /** In [0, 1). */
  float(): number {
    return this.next();
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One of the items, or undefined when there are none (one draw either way). */
  pick<T>(items: readonly T[]): T | undefined {
    const i = this.int(Math.max(1, items.length));
    return items[i];
  }

  /** A key drawn with its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    const total = entries.reduce((s, [, w]) => s + w, 0);
    let x = this.next() * total;
    for (const [k, w] of entries) {
      x -= w;
      if (x < 0) return k;
    }
    return entries[entries.length - 1][0];
  }
}
