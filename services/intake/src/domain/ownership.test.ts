import { describe, expect, it } from "vitest";
import { checkWrite, foreignColumns, INTAKE_COLUMNS } from "./ownership.ts";

describe("column ownership", () => {
  it.each([
    ["intake", ["state"], ["state"]],
    ["intake", ["launched_by", "launched_at"], ["launched_by", "launched_at"]],
    ["intake", ["operation_id"], ["operation_id"]],
    ["intake", ["cancelled_reason"], ["cancelled_reason"]],
    ["intake", ["payment_confirmed_at", "outcome"], ["payment_confirmed_at", "outcome"]],
    ["intake", [...INTAKE_COLUMNS], []],
    ["board", ["receiver_name", "receiver_phone", "contact_id"], []],
    ["board", ["state", "launched_by", "launched_at", "operation_id", "cancelled_reason"], []],
    ["board", ["received_amount_xaf"], ["received_amount_xaf"]],
    ["board", ["operator", "customer_name", "rate"], ["operator", "customer_name", "rate"]],
    ["board", ["request_id"], ["request_id"]],
  ] as const)("%s writing %j: foreign %j", (writer, columns, foreign) => {
    expect(foreignColumns(writer, columns)).toEqual(foreign);
  });

  it("refuses a write naming a column its writer does not own, before any SQL", () => {
    expect(() => checkWrite("intake", ["receiver_name", "state"])).toThrow("intake may not write state");
    expect(() => checkWrite("board", ["received_amount_xaf"])).toThrow("board may not write received_amount_xaf");
    expect(() => checkWrite("board", ["receiver_phone"])).not.toThrow();
  });
});
