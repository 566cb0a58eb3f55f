// Proof delays (seconds) summed per bucket, and percentiles read from the sums.
//
// A bucket is one second wide below DELAY_FINE_LIMIT_S (bucket k holds [k, k + 1)), then one
// of the histogram floors' buckets, about 10 % wide (Migration0005DelaySeconds). Each bucket
// keeps how many delays it holds and their sum: a percentile takes, for each rank it needs, the
// mean of that rank's bucket. So it is within the bucket's width of percentile_cont over the
// rows (under a second below 10 minutes), and equal to it when every delay of a bucket is the
// same value (whole seconds, as the contract's examples and the tests have them).

/** Below this, buckets are one second wide: the evidence window's default (EVIDENCE_WINDOW_S). */
export const DELAY_FINE_LIMIT_S = 600;

export interface DelayBucket {
  /** The bucket's number: buckets are in the order of the delays they hold. */
  bucket: number;
  /** How many delays it holds. */
  n: number;
  /** Their sum, seconds. */
  sum_s: number;
}

/**
 * percentile_cont(p) of the delays the buckets hold (ordered by `bucket`, empty ones left out),
 * each rank's value the mean of its bucket; undefined when they hold none.
 */
export function delayPercentile(buckets: readonly DelayBucket[], p: number): number | undefined {
  const count = buckets.reduce((s, b) => s + b.n, 0);
  if (count === 0) return undefined;
  const pos = p * (count - 1);
  const rank = Math.floor(pos);
  const a = valueAt(buckets, rank);
  const b = rank + 1 < count ? valueAt(buckets, rank + 1) : a;
  return a + (pos - rank) * (b - a);
}

/** The mean of the bucket holding the delay of rank `rank` (0 = the smallest). */
function valueAt(buckets: readonly DelayBucket[], rank: number): number {
  let below = 0;
  for (const b of buckets) {
    if (rank < below + b.n) return b.sum_s / b.n;
    below += b.n;
  }
  const last = buckets.at(-1)!;
  return last.sum_s / last.n;
}
