import { describe, expect, it } from "vitest";
import { checkAttachProof, type AttachedMessage, type AttachTarget } from "./attach-proof.ts";

const deposit: AttachTarget = {
  operation_id: "op-1",
  status: "awaiting_evidence",
  op_type: "deposit",
  montant: 5000,
  msisdn_dest: "690000001",
};
const balance: AttachTarget = { ...deposit, op_type: "balance", montant: 1, msisdn_dest: "699999999" };
const proof: AttachedMessage = {
  message_id: "m-1",
  sender_is_operator: true,
  kind: "DEP",
  amount: 5000,
  counterparty_msisdn: "690000001",
};

const reasonOf = (op: AttachTarget, m: AttachedMessage) => checkAttachProof(op, m)?.reason ?? null;

describe("attach is proof: only a message that could have proved the operation by itself", () => {
  it.each<[string, AttachTarget, AttachedMessage]>([
    ["the operator's deposit, exact amount, the destination's number", deposit, proof],
    ["the destination in its international form", deposit, { ...proof, counterparty_msisdn: "+237 690 00 00 01" }],
    ["a partly masked number whose digits agree", deposit, { ...proof, counterparty_msisdn: "6900XXX01" }],
    ["a deposit naming no number", deposit, { ...proof, counterparty_msisdn: null }],
    ["a matching operation (dialled by a person)", { ...deposit, status: "awaiting_manual_dial" }, proof],
    ["a running operation", { ...deposit, status: "running" }, proof],
    ["a no_evidence operation, whatever the late window", { ...deposit, status: "no_evidence" }, proof],
    ["an operation settled on word", { ...deposit, status: "confirmed" }, proof],
    ["a withdrawal", { ...deposit, op_type: "withdrawal" }, proof],
    ["a balance reply to a balance check, whatever the balance", balance, { ...proof, kind: "BAL", amount: 461_500 }],
  ])("accepts %s", (_name, op, m) => {
    expect(checkAttachProof(op, m)).toBeNull();
  });

  it.each<[string, AttachTarget, AttachedMessage, string]>([
    ["an unknown sender's deposit", deposit, { ...proof, sender_is_operator: false }, "evidence_unknown_sender"],
    [
      "an unknown sender first, whatever else disagrees",
      { ...deposit, status: "queued" },
      { ...proof, sender_is_operator: false, kind: "FAIL", amount: 777 },
      "evidence_unknown_sender",
    ],
    ["an operator refusal (FAIL)", deposit, { ...proof, kind: "FAIL" }, "evidence_kind_cannot_prove"],
    ["a text no rule recognised", deposit, { ...proof, kind: null }, "evidence_kind_cannot_prove"],
    ["a movement", deposit, { ...proof, kind: "UV_IN" }, "evidence_kind_cannot_prove"],
    ["a balance reply to a transfer", deposit, { ...proof, kind: "BAL" }, "evidence_kind_cannot_prove"],
    ["a deposit to a balance check", balance, { ...proof, amount: 1 }, "evidence_kind_cannot_prove"],
    ["777 for an operation of 5000", deposit, { ...proof, amount: 777 }, "evidence_amount_mismatch"],
    ["one franc more", deposit, { ...proof, amount: 5001 }, "evidence_amount_mismatch"],
    ["another local number", deposit, { ...proof, counterparty_msisdn: "690000002" }, "evidence_number_mismatch"],
    ["a foreign number", deposit, { ...proof, counterparty_msisdn: "+33612345678" }, "evidence_number_mismatch"],
    [
      "a mask whose digits disagree",
      deposit,
      { ...proof, counterparty_msisdn: "6911XXX01" },
      "evidence_number_mismatch",
    ],
    ["a queued operation nobody dialled", { ...deposit, status: "queued" }, proof, "operation_never_dialled"],
  ])("refuses %s", (_name, op, m, reason) => {
    const refused = checkAttachProof(op, m);
    expect([refused?.reason, refused?.status]).toEqual([reason, "refused"]);
    expect(refused?.context).toMatchObject({ operation_id: op.operation_id, evidence_id: m.message_id });
  });

  it("names what disagrees in the refusal's context", () => {
    expect(checkAttachProof(deposit, { ...proof, amount: 777 })?.context).toMatchObject({
      expected_amount: 5000,
      found_amount: 777,
    });
    expect(checkAttachProof(deposit, { ...proof, counterparty_msisdn: "690000002" })?.context).toMatchObject({
      expected_msisdn: "690000001",
      found_msisdn: "690000002",
    });
    expect(reasonOf(deposit, { ...proof, kind: "FAIL" })).toBe("evidence_kind_cannot_prove");
  });
});
