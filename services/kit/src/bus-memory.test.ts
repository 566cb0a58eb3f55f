import { describe, expect, it } from "vitest";
import type { BusMessage } from "./bus.ts";
import { MemoryBus } from "./bus-memory.ts";
import { eventually } from "../../../test/support/eventually.ts";

const message = (n: number): BusMessage => ({ topic: "t", key: "k", value: new Uint8Array([n]), headers: {} });

describe("the in-process bus's batch subscriber", () => {
  it("gets what queued while its handler ran, in order, and the same messages again after a throw", async () => {
    const bus = new MemoryBus();
    const batches: number[][] = [];
    let failures = 1;
    let release!: () => void;
    const first = new Promise<void>((resolve) => (release = resolve));
    await bus.subscribeBatches("g", ["t"], async (ms) => {
      batches.push(ms.map((m) => m.value[0]!));
      if (batches.length === 1) await first; // the first batch holds the queue meanwhile
      if (batches.length === 2 && failures-- > 0) throw new Error("handler failed once");
    });
    await bus.publish([message(1)]);
    await bus.publish([message(2), message(3), message(4)]);
    release();
    await eventually(() => (batches.length >= 3 ? true : undefined), 5_000, "the failed batch delivered again");
    expect(batches).toEqual([[1], [2, 3, 4], [2, 3, 4]]);
    await bus.close();
  });
});
