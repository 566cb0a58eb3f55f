import { ensureKafka } from "./kafka.ts";
const t = Date.now();
const k = await ensureKafka((s) => console.log(s));
console.log(k.description, "total", Date.now() - t, "ms");
const s = Date.now();
await k.stop();
console.log("stop", Date.now() - s, "ms");
