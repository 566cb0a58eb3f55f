import { queueDepth, rows, type Database } from "@transferops/kit";

/** Publishes the queue depth per handset to /metrics (read at scrape time). */
export function registerQueueMetrics(db: Database): { stop(): void } {
  queueDepth.add("dispatch", async () =>
    (
      await rows<{ device_id: string; n: number }>(
        db.em(),
        `select device_id, count(*)::int as n from dispatch.operations
          where status = 'queued' and device_id is not null group by device_id`,
      )
    ).map((r) => ({ labels: { device_id: r.device_id }, value: r.n })),
  );
  return { stop: () => queueDepth.remove("dispatch") };
}
