import { describe, expect, it } from "vitest";
import { operationRequestId, settles, transactionIdOf } from "./transaction-state.ts";

describe("settles", () => {
  it.each([
    ["launched", null, "confirmed", true],
    ["launched", null, "failed", true],
    ["launched", null, "no_evidence", true],
    ["launched", null, "rejected", true],
    ["launched", null, "queued", false],
    ["launched", null, "running", false],
    ["launched", null, "awaiting_evidence", false],
    ["done", "no_evidence", "confirmed", true],
    ["done", "no_evidence", "failed", true],
    ["done", "confirmed", "confirmed", false],
    ["pending", null, "confirmed", false],
    ["cancelled", null, "confirmed", false],
    ["closed", "closed_by_receipt", "confirmed", false],
  ] as const)("%s (outcome %s) on %s: %s", (state, outcome, status, expected) => {
    expect(settles(state, outcome, status)).toBe(expected);
  });
});

describe("operation request_id", () => {
  const id = "6f1c2a9e-3b7d-4e52-9a41-0c8d2f5b7e13";
  it("is tx-<transaction_id> and maps back", () => {
    expect(operationRequestId(id)).toBe(`tx-${id}`);
    expect(transactionIdOf(`tx-${id}`)).toBe(id);
  });
  it.each(["req-1", `tx-${id.slice(0, 30)}`, id, "", `tx-${id}-extra`, `tx-${id}0`, ` tx-${id}`])(
    "%s names no transaction",
    (requestId) => {
      expect(transactionIdOf(requestId)).toBeNull();
    },
  );
});
