import { randomUUID } from "node:crypto";
import { Topics, type EventBus, type Logger, type Subscription } from "@transferops/kit";

/**
 * That something the board shows changed somewhere: the events of the topics behind its
 * hints (operations, transactions, messages, alerts), heard on the bus by this gateway
 * replica in a consumer group of its own. Only a count: the event streams (routes/v1/events.ts)
 * read their caller's lists again when it moved, and not at all while nothing happens.
 * Live once the group joined; while not live the streams read on a timer, as without it.
 */
/**
 * The consumer groups of the gateways' change feeds: one a gateway start, a count of changes from
 * then on and no work, so a gateway gone leaves its group behind without losing anything.
 */
export const HINTS_GROUP_PREFIX = "gateway.hints.";

export class ChangeFeed {
  /** Moves on every batch of events heard. */
  version = 0;
  private joined = false;
  private subscription?: Subscription;

  constructor(private readonly log: Logger) {}

  get live(): boolean {
    return this.joined;
  }

  async start(bus: EventBus): Promise<void> {
    const group = `${HINTS_GROUP_PREFIX}${randomUUID()}`;
    this.subscription = await bus.subscribeBatches(
      group,
      [Topics.operations, Topics.transactions, Topics.messages, Topics.alerts],
      async () => {
        this.version += 1;
      },
      // A count of changes from now on: a new group per start must not read months of history.
      { fromNow: true },
    );
    void this.subscription.joined.then(() => {
      this.joined = true;
      this.version += 1;
      this.log.debug({ group }, "change feed live: event streams read on change");
    });
  }

  async stop(): Promise<void> {
    this.joined = false;
    await this.subscription?.close();
  }
}
