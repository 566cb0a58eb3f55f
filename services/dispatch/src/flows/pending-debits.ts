/**
 * Creates of this replica between their SIM's selection and their commit, by SIM: not
 * yet visible to a read of the table, but already on their way to the SIM. Selection
 * counts them as in flight, so a burst of concurrent creates spreads over the SIMs
 * instead of all picking the one that looked least loaded. The balance itself is decided
 * under the SIM's lock (reservation.ts), which every create takes.
 */
export class PendingDebits {
  private readonly bySim = new Map<string, { count: number; amount: number }>();

  /** Operations and FCFA pending on the SIM. */
  of(simId: string): { count: number; amount: number } {
    const p = this.bySim.get(simId);
    return p ? { ...p } : { count: 0, amount: 0 };
  }

  /** Records a create of `amount` FCFA of debit on its SIM, until `end` (after commit or failure). */
  add(simId: string, amount: number): PendingDebit {
    const p = this.bySim.get(simId) ?? { count: 0, amount: 0 };
    p.count += 1;
    p.amount += amount;
    this.bySim.set(simId, p);
    let ended = false;
    return {
      amount,
      end: () => {
        if (ended) return;
        ended = true;
        const q = this.bySim.get(simId)!;
        q.count -= 1;
        q.amount -= amount;
        if (q.count === 0) this.bySim.delete(simId);
      },
    };
  }
}

export interface PendingDebit {
  readonly amount: number;
  end(): void;
}
