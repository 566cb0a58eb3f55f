import type { EventBus } from "@transferops/kit";
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
  { group: "analytics.operations", topics: operationTopics, handlers: operationHandlers },
  { group: "analytics.messages", topics: messageTopics, handlers: messageHandlers },
  { group: "analytics.transactions", topics: transactionTopics, handlers: transactionHandlers },
];

/** Consumer lag per topic, or undefined when the bus cannot tell. */

export function projectionLag(bus: EventBus): ProjectionLag {
  return async () => {
    if (!bus.lag) return undefined;
    const out: Record<string, bigint> = {};
    for (const c of CONSUMERS) Object.assign(out, await bus.lag(c.group, c.topics));
    return out;
  };
}
