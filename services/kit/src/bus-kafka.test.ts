// The Kafka bus at a service's start, on the real broker (test/infra): a broker that refuses the
// first starts of a consumer does not end the service.
import { Kafka, KafkaJSNonRetriableError } from "kafkajs";
import { describe, expect, it } from "vitest";
import { infra, uniqueTopicPrefix } from "../../../test/infra/context.ts";
import { eventually } from "../../../test/support/eventually.ts";
import { KafkaBus } from "./bus-kafka.ts";
import { createLogger } from "./log.ts";

describe("a consumer whose broker refuses it at the service's start", () => {
  it("is returned not ready, is started again until the broker answers, then joins and consumes", async () => {
    const warnings: string[] = [];
    const log = createLogger("kit-test", {
      level: "warn",
      destination: { write: (line: string) => void warnings.push(line) },
    });
    const bus = new KafkaBus({
      brokers: infra().kafkaBrokers.split(","),
      clientId: "kit-test",
      prefix: uniqueTopicPrefix(),
      log,
    });
    // The broker refuses the first two starts as kafkajs reports a broker still unreachable once
    // its own retries are spent: every admin client (the topics' creation) fails to connect.
    const kafka = (bus as unknown as { kafka: Kafka }).kafka;
    const admin = kafka.admin.bind(kafka);
    let refusals = 2;
    kafka.admin = (...args) => {
      const client = admin(...args);
      if (refusals > 0) {
        refusals--;
        client.connect = () => Promise.reject(new KafkaJSNonRetriableError("broker unreachable (test)"));
      }
      return client;
    };
    const seen: string[] = [];
    try {
      const sub = await bus.subscribe("start", ["refused"], async (m) => void seen.push(m.key));
      let joined = false;
      void sub.joined.then(() => (joined = true));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(joined).toBe(false);
      await eventually(() => (joined ? true : undefined), 60_000, "the group joined");
      expect(refusals).toBe(0);
      expect(warnings.join("")).toContain("kafka: starting the consumer failed; trying again");
      await bus.publish([{ topic: "refused", key: "after-the-refusals", value: new Uint8Array(), headers: {} }]);
      await eventually(() => (seen.includes("after-the-refusals") ? true : undefined), 30_000, "the event consumed");
      await sub.close();
    } finally {
      await bus.close();
    }
  }, 90_000);
});
