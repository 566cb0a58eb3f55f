import { describe, expect, it } from "vitest";
import "./abort-reason.ts";

describe("an abort without a reason (as Connect ends each call)", () => {
  it("gives listeners the AbortError DOMException the platform gives, without a stack", () => {
    const controller = new AbortController();
    const seen: unknown[] = [];
    controller.signal.addEventListener("abort", () => seen.push(controller.signal.reason));
    controller.abort();
    const reason = controller.signal.reason as DOMException;
    expect(reason).toBeInstanceOf(DOMException);
    expect(reason.name).toBe("AbortError");
    expect(reason.message).toBe("This operation was aborted");
    expect(seen).toEqual([reason]);
    expect(() => controller.signal.throwIfAborted()).toThrow(reason);
    // Stack traces elsewhere are untouched.
    expect(new Error("still traced").stack).toContain("abort-reason.test.ts");
  });

  it("keeps the first reason when aborted again, and a given reason as given", () => {
    const controller = new AbortController();
    const first = new Error("deadline");
    controller.abort(first);
    controller.abort();
    controller.abort(new Error("later"));
    expect(controller.signal.reason).toBe(first);
    expect(AbortSignal.abort().reason).toBeInstanceOf(DOMException);
  });
});
