/**
 * The event bus as the services see it: Kafka in tests and production, an in-process
 * bus for the embedded local run. Delivery is at least once in both; consumers dedupe
 * through their inbox.
 */
export interface BusMessage {
  topic: string;
  /** Aggregate id: one aggregate's events keep their order. */
  key: string;
  value: Uint8Array;
  headers: Record<string, string>;
}

export type BusHandler = (message: BusMessage) => Promise<void>;

/**
 * Consecutive messages of one topic-partition (Kafka) or of the group's queue (in-process),
 * in order; a throw delivers the same messages again.
 */
export type BusBatchHandler = (messages: BusMessage[]) => Promise<void>;

/** Most messages handed to a batch handler at once (the rest follow in the next batch). */
export const MAX_BATCH = 500;

export interface Subscription {
  /**
   * Resolves once the consumer has joined its group (partitions assigned): the service is
   * ready only then (`startGrpcServer`'s `ready`). Never rejects; a join that keeps failing
   * keeps the service unready.
   */
  joined: Promise<void>;
  close(): Promise<void>;
}

export interface SubscribeOptions {
  /**
   * A new group starts at the topics' end instead of their beginning: for a listener that only
   * wants to hear of changes from now on (the gateway's hints), never for a consumer that must
   * see every event. A group that committed offsets resumes from them either way.
   */
  fromNow?: boolean;
}

export interface EventBus {
  /** Resolves once every message is acknowledged by the bus. */
  publish(messages: BusMessage[]): Promise<void>;
  /** Delivers each message of the topics to one member of the group; retries a failed handler. */
  subscribe(group: string, topics: string[], handler: BusHandler): Promise<Subscription>;
  /**
   * As `subscribe`, but hands over what has arrived as consecutive messages (at most
   * `MAX_BATCH`), so a consumer can apply them in one transaction.
   */
  subscribeBatches(
    group: string,
    topics: string[],
    handler: BusBatchHandler,
    options?: SubscribeOptions,
  ): Promise<Subscription>;
  close(): Promise<void>;
  /**
   * Messages of each topic published and not yet consumed by the group (consumer lag),
   * where the bus can tell.
   */
  lag?(group: string, topics: string[]): Promise<Record<string, bigint>>;
}
