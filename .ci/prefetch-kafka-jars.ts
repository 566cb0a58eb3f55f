// Fetches (or finds cached) the Kafka broker jars the tests use when there is neither
// KAFKA_BROKERS nor a container runtime. Run by .ci/run; prints the libs directory.
import { ensureKafkaJars } from "../test/infra/kafka.ts";

const libs = await ensureKafkaJars((s) => console.log(s));
console.log(`kafka jars: ${libs}`);
