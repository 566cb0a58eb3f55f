import { describe, expect, it } from "vitest";
import { MAX_MESSAGES_PER_SUBMISSION, refusalsOf, validateSubmission, type IncomingShape } from "./submission.ts";

const ok: IncomingShape = { sender: "OrangeMoney", raw: "text", receivedAt: new Date(), clientMessageId: undefined };

describe("a submission's messages, each on its own", () => {
  it.each<[string, Partial<IncomingShape>, string | null]>([
    ["a valid message", {}, null],
    ["no sender", { sender: "" }, "sender: "],
    ["a sender over 100 characters", { sender: "s".repeat(101) }, "sender: "],
    ["no text", { raw: "" }, "raw: "],
    ["a text over 4,000 characters", { raw: "x".repeat(4001) }, "raw: "],
    ["no timestamp", { receivedAt: undefined }, "received_at: "],
    ["an invalid timestamp", { receivedAt: new Date("nope") }, "received_at: "],
    ["a client_message_id over 64 characters", { clientMessageId: "z".repeat(65) }, "client_message_id: "],
  ])("%s", (_what, change, detailStart) => {
    const [refused] = refusalsOf([{ ...ok, ...change }]);
    if (detailStart === null) expect(refused).toBeNull();
    else {
      expect(refused?.reason).toBe("invalid_message");
      expect(refused?.detail.startsWith(detailStart)).toBe(true);
    }
  });

  it("refuses only the bad message and names every problem it has", () => {
    const refusals = refusalsOf([ok, { ...ok, raw: "", sender: "" }, ok]);
    expect(refusals.map((r) => r?.reason ?? null)).toEqual([null, "invalid_message", null]);
    expect(refusals[1]!.detail).toBe(
      "sender: is required, at most 100 characters; raw: is required, at most 4000 characters",
    );
  });

  it("takes the first 100 and asks for the rest again", () => {
    const refusals = refusalsOf(Array.from({ length: MAX_MESSAGES_PER_SUBMISSION + 2 }, () => ok));
    expect(refusals.filter((r) => r === null)).toHaveLength(MAX_MESSAGES_PER_SUBMISSION);
    expect(refusals.slice(-2).map((r) => r?.reason)).toEqual(["over_batch_limit", "over_batch_limit"]);
  });

  it("refuses the submission itself only without a SIM", () => {
    expect(() => validateSubmission("")).toThrow(expect.objectContaining({ reason: "invalid_request" }));
    expect(() => validateSubmission("sim-1")).not.toThrow();
  });
});
