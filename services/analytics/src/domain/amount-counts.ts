// The median and the largest confirmed transfer of a window, exactly, from counts per amount.
//
// The store reads, in one statement, the window's histogram (how many transfers per bucket of
// about 10 %) and, of the buckets that hold the two middle ranks and of the highest one, how many
// transfers of each amount (Migration0006AmountCounts). The median is percentile_cont(0.5)
// over the transfers: the values of ranks ⌊pos⌋ and ⌈pos⌉ (pos = 0.5 × (count − 1)),
// interpolated, each found by counting through its bucket's amounts from the number of
// transfers below the bucket; the largest is the highest amount of the highest bucket.

/** How many transfers of one amount the window holds, with where its bucket starts. */
export interface AmountCount {
  /** The amount's histogram bucket. */
  bucket: number;
  /** How many transfers of the window lie in the buckets below this one. */
  below: number;
  /** How many transfers the whole window holds. */
  total: number;
  /** The amount, FCFA. */
  montant: number;
  /** How many transfers of the window had it. */
  n: number;
}

/** The ranks (0 = the smallest) whose values percentile_cont(p) of `count` values interpolates. */
export function percentileRanks(count: number, p: number): { pos: number; lo: number; hi: number } {
  const pos = p * (count - 1);
  return { pos, lo: Math.floor(pos), hi: Math.ceil(pos) };
}

/**
 * percentile_cont(p) of the window's transfers, and the largest, from the counts of the amounts
 * of the buckets holding ranks ⌊pos⌋ and ⌈pos⌉ and of the highest bucket (in ascending amount);
 * undefined when the window holds none.
 */
export function amountFigures(
  counts: readonly AmountCount[],
  p: number,
): { percentile: number; largest: number } | undefined {
  if (counts.length === 0) return undefined;
  const { pos, lo, hi } = percentileRanks(counts[0].total, p);
  const a = valueAt(counts, lo);
  const b = valueAt(counts, hi);
  return { percentile: a + (pos - lo) * (b - a), largest: counts.at(-1)!.montant };
}

/** The amount of rank `rank`: counted through its bucket's amounts from the transfers below it. */
function valueAt(counts: readonly AmountCount[], rank: number): number {
  // The bucket holding the rank is the highest of those read that starts at or below it.
  const bucket = counts.filter((c) => c.below <= rank).at(-1) ?? counts[0];
  let seen = bucket.below;
  let last = bucket.montant;
  for (const c of counts) {
    if (c.bucket !== bucket.bucket) continue;
    last = c.montant;
    seen += c.n;
    if (rank < seen) return c.montant;
  }
  return last;
}
