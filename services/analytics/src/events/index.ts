import type { EntityManager, EventBus } from "@transferops/kit";
import { fleetHandlers, fleetTopics } from "./fleet.ts";
import { messageHandlers, messageTopics } from "./messages.ts";
import { operationHandlers, operationTopics } from "./operations.ts";
import { transactionHandlers, transactionTopics } from "./transactions.ts";
import type { ProjectionLag } from "../flows/ports.ts";

export type { ProjectionLag };

/**
 * Analytics' consumers, one group per topic so a busy topic never delays another. The
 * read model is rebuilt by emptying the schema and rewinding these groups
 * (`npm run analytics:rebuild`). Each applies what the bus hands over at once in one
 * transaction with the events' inbox rows (`batched`): its handlers only write the read
 * model, so a transaction per event bought nothing.
 */
export const CONSUMERS = [
  { group: "analytics.fleet", topics: fleetTopics, handlers: fleetHandlers },
  { group: "analytics.operations", topics: operationTopics, handlers: oneAtATime(operationHandlers) },
  { group: "analytics.messages", topics: messageTopics, handlers: oneAtATime(messageHandlers) },
  { group: "analytics.transactions", topics: transactionTopics, handlers: transactionHandlers },
];

/**
 * The operations' and the messages' batches write the same rollup rows (an agent's day, its
 * messages' day, through the triggers of Migration0007AgentRollups) in the order of their
 * events: two batches at once, in this process or another replica, deadlocked there (the
 * replica run, 2026-11-29: retried three times, then the consumer failed). Each batch of
 * these two groups now takes one transaction-scoped lock before its first write, so they
 * apply one after the other: the read model is written by consumers only, off every
 * request's path, and a batch is milliseconds.
 */
function oneAtATime<H extends { handle(em: EntityManager, ...rest: never[]): Promise<void> }>(handlers: H[]): H[] {
  return handlers.map((h) => ({
    ...h,
    handle: async (em: EntityManager, ...rest: never[]) => {
      await em.execute(`select pg_advisory_xact_lock(hashtext('analytics.rollups'))`);
      return h.handle(em, ...rest);
    },
  }));
}

/** Consumer lag per topic, or undefined when the bus cannot tell. */

export function projectionLag(bus: EventBus): ProjectionLag {
  return async () => {
    if (!bus.lag) return undefined;
    const out: Record<string, bigint> = {};
    for (const c of CONSUMERS) Object.assign(out, await bus.lag(c.group, c.topics));
    return out;
  };
}
