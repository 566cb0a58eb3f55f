/**
 * Creates of this replica between their SIM's selection and their commit, by SIM: not
 * yet visible to a read of the table, but already on their way to the SIM.
 *
 * - Selection counts them as in flight, so a burst of concurrent creates spreads over
 *   the SIMs instead of all picking the one that looked least loaded.
 * - The reservation counts their amounts (see reserveBalance): a create skips the SIM's
 *   lock only if the balance covers everything committed and everything this replica is
 *   still creating on the SIM, with the headroom to spare; a create that takes the lock
 *   also counts the ones that skipped it and are not committed yet.
 */
export class PendingDebits {
  private readonly bySim = new Map<string, { count: number; amount: number; unlocked: number }>();

  /** Operations and FCFA pending on the SIM, and the FCFA of those that skipped its lock. */
  of(simId: string): { count: number; amount: number; unlocked: number } {
    const p = this.bySim.get(simId);
    return p ? { ...p } : { count: 0, amount: 0, unlocked: 0 };
  }

  /** Records a create of `amount` FCFA of debit on its SIM, until `end` (after commit or failure). */
  add(simId: string, amount: number): PendingDebit {
    const entry = () => this.bySim.get(simId)!;
    const p = this.bySim.get(simId) ?? { count: 0, amount: 0, unlocked: 0 };
    p.count += 1;
    p.amount += amount;
    this.bySim.set(simId, p);
    let unlocked = false;
    let ended = false;
    return {
      amount,
      skipLock: () => {
        if (unlocked || ended) return;
        unlocked = true;
        entry().unlocked += amount;
      },
      end: () => {
        if (ended) return;
        ended = true;
        const q = entry();
        q.count -= 1;
        q.amount -= amount;
        if (unlocked) q.unlocked -= amount;
        if (q.count === 0) this.bySim.delete(simId);
      },
    };
  }
}

export interface PendingDebit {
  readonly amount: number;
  /** This create goes without the SIM's lock: creates that take it count this one. */
  skipLock(): void;
  end(): void;
}
