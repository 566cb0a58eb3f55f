// Smoke test: the broker from global setup is a real Kafka that stores and delivers messages.

import { Kafka, logLevel, Partitioners } from "kafkajs";
import { afterAll, describe, expect, it } from "vitest";
import { infra, uniqueTopicPrefix } from "./context.ts";

describe("Kafka test infrastructure", () => {
  const kafka = new Kafka({
    clientId: "infra-smoke-test",
    brokers: infra().kafkaBrokers.split(","),
    logLevel: logLevel.WARN,
  });
  const admin = kafka.admin();
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  const prefix = uniqueTopicPrefix();
  const topic = `${prefix}smoke`;
  // short fetch wait: disconnect() waits for the fetch in flight
  const consumer = kafka.consumer({ groupId: `${prefix}smoke-group`, maxWaitTimeInMs: 500 });

  afterAll(async () => {
    await Promise.allSettled([consumer.disconnect(), producer.disconnect(), admin.disconnect()]);
  });

  it("produces 3 keyed messages and consumes exactly those, in order, with a fresh group", async () => {
    await admin.connect();
    const created = await admin.createTopics({
      topics: [{ topic, numPartitions: 3, replicationFactor: 1 }],
      waitForLeaders: true,
    });
    expect(created).toBe(true);

    await producer.connect();
    await producer.send({
      topic,
      messages: ["first", "second", "third"].map((value) => ({ key: "transfer-42", value })),
    });

    const received: { key: string; value: string; partition: number }[] = [];
    let gotAll!: () => void;
    const allReceived = new Promise<void>((resolve) => (gotAll = resolve));
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message, partition }) => {
        received.push({ key: message.key?.toString() ?? "", value: message.value?.toString() ?? "", partition });
        if (received.length >= 3) gotAll();
      },
    });

    await Promise.race([
      allReceived,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`only got ${JSON.stringify(received)}`)), 30_000)),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 300)); // nothing else may arrive

    expect(received.map((m) => m.value)).toEqual(["first", "second", "third"]);
    expect(new Set(received.map((m) => m.key))).toEqual(new Set(["transfer-42"]));
    expect(new Set(received.map((m) => m.partition)).size).toBe(1); // same key -> same partition
  });
});
