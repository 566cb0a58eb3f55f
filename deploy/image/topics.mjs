// `<image> topics`: makes the Kafka topics match KAFKA_TOPICS (the Helm hook job, before the
// services start). KAFKA_TOPICS is JSON: [{"name", "partitions", "replicationFactor",
// "retentionMs"}]; each name gets KAFKA_TOPIC_PREFIX. Missing topics are created, partitions
// grown (Kafka never shrinks them), retention.ms set. Idempotent: safe on every upgrade.
import { Kafka, logLevel } from "kafkajs";

const log = (msg, fields = {}) => console.log(JSON.stringify({ level: "info", component: "topics", ...fields, msg }));
const brokers = (process.env.KAFKA_BROKERS ?? "")
  .split(",")
  .map((b) => b.trim())
  .filter(Boolean);
const prefix = process.env.KAFKA_TOPIC_PREFIX ?? "";
const wanted = JSON.parse(process.env.KAFKA_TOPICS ?? "[]");
if (!brokers.length || !Array.isArray(wanted) || !wanted.length) {
  console.error("topics: set KAFKA_BROKERS and KAFKA_TOPICS");
  process.exit(2);
}

const admin = new Kafka({ clientId: "transferops-topics", brokers, logLevel: logLevel.WARN }).admin();
await admin.connect();
try {
  const existing = new Set(await admin.listTopics());
  const missing = wanted.filter((t) => !existing.has(prefix + t.name));
  if (missing.length) {
    await admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((t) => ({
        topic: prefix + t.name,
        numPartitions: t.partitions,
        replicationFactor: t.replicationFactor,
        configEntries: [{ name: "retention.ms", value: String(t.retentionMs) }],
      })),
    });
    log("created", { topics: missing.map((t) => prefix + t.name) });
  }
  const present = wanted.filter((t) => existing.has(prefix + t.name));
  if (present.length) {
    const { topics } = await admin.fetchTopicMetadata({ topics: present.map((t) => prefix + t.name) });
    const grow = present.filter((t) => topics.find((m) => m.name === prefix + t.name).partitions.length < t.partitions);
    if (grow.length) {
      await admin.createPartitions({
        topicPartitions: grow.map((t) => ({ topic: prefix + t.name, count: t.partitions })),
      });
      log("partitions grown", { topics: grow.map((t) => `${prefix + t.name}=${t.partitions}`) });
    }
    await admin.alterConfigs({
      validateOnly: false,
      resources: present.map((t) => ({
        type: 2, // TOPIC
        name: prefix + t.name,
        configEntries: [{ name: "retention.ms", value: String(t.retentionMs) }],
      })),
    });
  }
  log("topics ready", { topics: wanted.map((t) => prefix + t.name) });
} finally {
  await admin.disconnect();
}
