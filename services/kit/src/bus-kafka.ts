import { Kafka, logLevel, type Consumer, type ConsumerRunConfig, type KafkaMessage, type Producer } from "kafkajs";
import {
  MAX_BATCH,
  type BusBatchHandler,
  type BusHandler,
  type BusMessage,
  type EventBus,
  type SubscribeOptions,
  type Subscription,
} from "./bus.ts";
import type { Logger } from "./log.ts";
import { consumerLag, eventsConsumed } from "./metrics.ts";

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  /** Prefixed to every topic and group, so runs sharing a broker never see each other. */
  prefix?: string;
  log: Logger;
}

/** Kafka through kafkajs, kept behind EventBus so the client can be swapped. */
export class KafkaBus implements EventBus {
  private readonly kafka: Kafka;
  private producer?: Promise<Producer>;
  private readonly consumers = new Set<Consumer>();
  private readonly prefix: string;

  constructor(private readonly options: KafkaBusOptions) {
    this.prefix = options.prefix ?? "";
    const log = options.log;
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: options.brokers,
      logLevel: logLevel.WARN,
      retry: { retries: 8, initialRetryTime: 200 },
      logCreator: () => (entry) => {
        const { message, ...rest } = entry.log;
        if (entry.level <= logLevel.ERROR) log.error({ kafka: rest }, `kafka: ${message}`);
        else log.warn({ kafka: rest }, `kafka: ${message}`);
      },
    });
  }

  private getProducer(): Promise<Producer> {
    this.producer ??= (async () => {
      const p = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: true });
      await p.connect();
      return p;
    })();
    return this.producer;
  }

  async publish(messages: BusMessage[]): Promise<void> {
    if (!messages.length) return;
    const pending = this.getProducer();
    const byTopic = new Map<string, BusMessage[]>();
    for (const m of messages) byTopic.set(m.topic, [...(byTopic.get(m.topic) ?? []), m]);
    try {
      const producer = await pending;
      await producer.sendBatch({
        acks: -1,
        topicMessages: [...byTopic].map(([topic, ms]) => ({
          topic: this.prefix + topic,
          messages: ms.map((m) => ({ key: m.key, value: Buffer.from(m.value), headers: m.headers })),
        })),
      });
    } catch (err) {
      // A producer that failed is not used again: its connect may have failed for good, or its
      // sequence numbers no longer match the broker's (after a broker restart kafkajs answers
      // "out of order sequence number" to every later send). The next publish starts a new
      // one; the outbox sends the batch again and consumers dedupe on the event id.
      if (this.producer === pending) {
        this.producer = undefined;
        void pending.then((p) => p.disconnect()).catch(() => undefined);
      }
      throw err;
    }
  }

  /**
   * Creates the topics that do not exist yet. Services starting together race to create
   * the same ones: kafkajs then fails with a retriable error (e.g. "This server does not host
   * this topic-partition" while the new topic's metadata spreads), and the next try finds it.
   */
  private async ensureTopics(topics: string[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const admin = this.kafka.admin();
      try {
        await admin.connect();
        const existing = new Set(await admin.listTopics());
        const missing = topics.filter((t) => !existing.has(t));
        if (missing.length) await admin.createTopics({ topics: missing.map((topic) => ({ topic, numPartitions: 3 })) });
        // Known to the broker's metadata (else the consumer's subscribe fails the same way).
        await admin.fetchTopicMetadata({ topics });
        return;
      } catch (err) {
        if (attempt >= 5 || (err as { retriable?: boolean }).retriable !== true) throw err;
        this.options.log.warn({ err, attempt }, "kafka: creating the topics failed; trying again");
      } finally {
        await admin.disconnect();
      }
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    }
  }

  /** The bus's view of a Kafka message of `topic` (the prefixed name). */
  private message(topic: string, message: KafkaMessage): BusMessage {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(message.headers ?? {})) if (v !== undefined) headers[k] = String(v);
    return {
      topic: topic.slice(this.prefix.length),
      key: message.key?.toString() ?? "",
      value: new Uint8Array(message.value ?? Buffer.alloc(0)),
      headers,
    };
  }

  async subscribe(group: string, topics: string[], handler: BusHandler): Promise<Subscription> {
    const groupId = this.prefix + group;
    return this.join(
      group,
      topics,
      {},
      {
        eachMessage: async ({ topic, message }) => {
          eventsConsumed.inc({ group: groupId, topic });
          // A throw makes kafkajs retry the message: delivery is at least once.
          await handler(this.message(topic, message));
        },
      },
    );
  }

  async subscribeBatches(
    group: string,
    topics: string[],
    handler: BusBatchHandler,
    options: SubscribeOptions = {},
  ): Promise<Subscription> {
    const groupId = this.prefix + group;
    return this.join(group, topics, options, {
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        for (let i = 0; i < batch.messages.length && isRunning() && !isStale(); i += MAX_BATCH) {
          const slice = batch.messages.slice(i, i + MAX_BATCH);
          eventsConsumed.inc({ group: groupId, topic: batch.topic }, slice.length);
          // A throw makes kafkajs fetch again from the last resolved offset: at least once.
          await handler(slice.map((m) => this.message(batch.topic, m)));
          resolveOffset(slice.at(-1)!.offset);
          await heartbeat();
        }
      },
    });
  }

  /** A consumer of the group, its lag measured after each batch; kafkajs restarts it until `isClosed()`. */
  private groupConsumer(groupId: string, isClosed: () => boolean): Consumer {
    // A short fetch wait keeps consumption latency low and lets disconnect finish quickly.
    const consumer = this.kafka.consumer({
      groupId,
      allowAutoTopicCreation: true,
      maxWaitTimeInMs: 500,
      // A member that died (kill -9, or one kafkajs replaced after a broker restart) holds
      // its partitions until its session times out: 10 s, not kafkajs' 30 s, so the group
      // resumes sooner (heartbeats still go every 3 s).
      sessionTimeout: 10_000,
      // kafkajs restarts a consumer after a retriable crash (e.g. the broker went away),
      // never once closed; 5 retries as kafkajs gives a consumer by default.
      retry: { retries: 5, restartOnFailure: async () => !isClosed() },
    });
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) =>
      consumerLag.set(
        { group: groupId, topic: payload.topic, partition: String(payload.partition) },
        Number(payload.offsetLag),
      ),
    );
    return consumer;
  }

  /** Connects and subscribes `consumer`; one that fails is disconnected, not left half open. */
  private async connect(consumer: Consumer, topics: string[], options: SubscribeOptions): Promise<void> {
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: topics.map((t) => this.prefix + t), fromBeginning: !options.fromNow });
    } catch (err) {
      await consumer.disconnect().catch(() => undefined);
      throw err;
    }
  }

  /**
   * Starts the group's consumer; `joined` resolves once the group is joined. Where the first
   * start fails (the broker unreachable past kafkajs' own retries, or refusing the topics, the
   * connect or the subscribe), the subscription is returned all the same and the start tried
   * again every second or so until it succeeds or the subscription is closed, as after a
   * consumer's crash (`replace`): the service serves meanwhile and reports itself not ready,
   * rather than exit at its start and wait for an orchestrator's restart back-off.
   */
  private async join(
    group: string,
    topics: string[],
    options: SubscribeOptions,
    run: ConsumerRunConfig,
  ): Promise<Subscription> {
    const groupId = this.prefix + group;
    let closed = false;
    let current: Consumer | undefined;
    let onJoin: () => void = () => undefined;
    const joined = new Promise<void>((resolve) => (onJoin = resolve));
    const open = async (): Promise<Consumer> => {
      await this.ensureTopics(topics.map((t) => this.prefix + t));
      const consumer = this.groupConsumer(groupId, () => closed);
      consumer.on(consumer.events.GROUP_JOIN, () => onJoin());
      // After any other crash kafkajs leaves the consumer stopped for good (seen after a broker
      // restart: "Failed to find group coordinator" while it loads): start a new one.
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        if (payload.restart || closed || current !== consumer) return;
        this.options.log.error({ err: payload.error, group: groupId }, "kafka: consumer stopped; starting a new one");
        void replace();
      });
      await this.connect(consumer, topics, options);
      // Not awaited: run() resolves once the group is joined, which a dead member delays until
      // its session times out. Calls are answered meanwhile, readiness waits (`joined`); the
      // group resumes from its committed offsets, and kafkajs retries a failed join.
      void consumer
        .run(run)
        .catch((err: unknown) => this.options.log.error({ err, group: groupId }, "kafka: consumer did not start"));
      return consumer;
    };
    const attempt = () =>
      open().catch((err: unknown) => {
        this.options.log.warn({ err, group: groupId }, "kafka: starting the consumer failed; trying again");
        return undefined;
      });
    const replace = async (): Promise<void> => {
      const old = current;
      current = undefined;
      if (old) {
        this.consumers.delete(old);
        await old.disconnect().catch(() => undefined);
      }
      while (!closed) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const next = await attempt();
        if (!next) continue;
        if (closed) await next.disconnect().catch(() => undefined);
        else {
          current = next;
          this.consumers.add(next);
        }
        return;
      }
    };
    current = await attempt();
    if (current) this.consumers.add(current);
    else void replace();
    return {
      joined,
      close: async () => {
        closed = true;
        const consumer = current;
        current = undefined;
        if (consumer) {
          this.consumers.delete(consumer);
          await consumer.disconnect();
        }
      },
    };
  }

  async lag(group: string, topics: string[]): Promise<Record<string, bigint>> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const committed = await admin.fetchOffsets({
        groupId: this.prefix + group,
        topics: topics.map((t) => this.prefix + t),
      });
      const out: Record<string, bigint> = {};
      for (const t of committed) {
        const ends = await admin.fetchTopicOffsets(t.topic);
        let lag = 0n;
        for (const p of ends) {
          const done = t.partitions.find((c) => c.partition === p.partition)?.offset ?? "-1";
          const start = BigInt(done) < 0n ? BigInt(p.low) : BigInt(done);
          lag += BigInt(p.high) > start ? BigInt(p.high) - start : 0n;
        }
        out[t.topic.slice(this.prefix.length)] = lag;
      }
      return out;
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * Moves the group back to the start of each topic, so its next run consumes everything
   * again (rebuilding a read model). Kafka refuses while the group has running members.
   */
  async rewind(group: string, topics: string[]): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      for (const topic of topics) {
        await admin.resetOffsets({ groupId: this.prefix + group, topic: this.prefix + topic, earliest: true });
      }
    } finally {
      await admin.disconnect();
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((c) => c.disconnect()));
    this.consumers.clear();
    if (this.producer) await (await this.producer.catch(() => undefined))?.disconnect();
  }
}
