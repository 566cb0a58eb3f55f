import {
  MAX_BATCH,
  type BusBatchHandler,
  type BusHandler,
  type BusMessage,
  type EventBus,
  type Subscription,
} from "./bus.ts";

interface Group {
  topics: Set<string>;
  /** Takes the head of the queue: one message, or up to MAX_BATCH for a batch subscriber. */
  take: number;
  handler: BusBatchHandler;
  queue: BusMessage[];
  running: boolean;
  closed: boolean;
}

/**
 * In-process stand-in for Kafka, for the embedded local run only: every group receives
 * each message of its topics in publish order, a failed handler is retried with backoff.
 */
export class MemoryBus implements EventBus {
  private readonly groups = new Map<string, Group>();

  async publish(messages: BusMessage[]): Promise<void> {
    for (const m of messages) {
      for (const g of this.groups.values()) {
        if (!g.topics.has(m.topic) || g.closed) continue;
        g.queue.push(m);
        void this.drain(g);
      }
    }
  }

  async subscribe(group: string, topics: string[], handler: BusHandler): Promise<Subscription> {
    return this.join(group, topics, 1, ([m]) => handler(m!));
  }

  async subscribeBatches(group: string, topics: string[], handler: BusBatchHandler): Promise<Subscription> {
    return this.join(group, topics, MAX_BATCH, handler);
  }

  private async join(group: string, topics: string[], take: number, handler: BusBatchHandler): Promise<Subscription> {
    const g: Group = { topics: new Set(topics), take, handler, queue: [], running: false, closed: false };
    this.groups.set(group, g);
    return {
      joined: Promise.resolve(),
      close: async () => {
        g.closed = true;
        this.groups.delete(group);
      },
    };
  }

  private async drain(g: Group): Promise<void> {
    if (g.running) return;
    g.running = true;
    try {
      let attempt = 0;
      while (g.queue.length && !g.closed) {
        try {
          const head = g.queue.slice(0, g.take);
          await g.handler(head);
          g.queue.splice(0, head.length);
          attempt = 0;
        } catch {
          attempt += 1;
          await new Promise((r) => setTimeout(r, Math.min(5_000, 50 * 2 ** attempt)));
        }
      }
    } finally {
      g.running = false;
    }
  }

  async close(): Promise<void> {
    for (const g of this.groups.values()) g.closed = true;
    this.groups.clear();
  }
}
