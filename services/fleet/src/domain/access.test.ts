import { describe, expect, it } from "vitest";
import { checkGrant, DEFAULT_MAX_AMOUNT } from "./access.ts";

const SIM_A = "11111111-1111-4111-8111-111111111111";
const SIM_B = "22222222-2222-4222-8222-222222222222";
const GHOST = "33333333-3333-4333-8333-333333333333";
const known = new Set([SIM_A, SIM_B]);

describe("checkGrant", () => {
  it.each([
    [
      "defaults the types to deposit and balance and the ceiling to 500000",
      { allowed_sim_ids: [SIM_A], allowed_op_types: [] },
      { allowed_sim_ids: [SIM_A], allowed_op_types: ["deposit", "balance"], max_amount: DEFAULT_MAX_AMOUNT },
    ],
    [
      "keeps given types and ceiling",
      { allowed_sim_ids: [SIM_A, SIM_B], allowed_op_types: ["withdrawal"], max_amount: 1000 },
      { allowed_sim_ids: [SIM_A, SIM_B], allowed_op_types: ["withdrawal"], max_amount: 1000 },
    ],
    [
      "drops duplicates, keeping order",
      { allowed_sim_ids: [SIM_B, SIM_A, SIM_B], allowed_op_types: ["balance", "balance"] },
      { allowed_sim_ids: [SIM_B, SIM_A], allowed_op_types: ["balance"], max_amount: DEFAULT_MAX_AMOUNT },
    ],
  ])("%s", (_name, input, expected) => {
    expect(checkGrant(input, known)).toEqual({ ok: true, grant: expected });
  });

  it.each([
    ["no SIM", { allowed_sim_ids: [], allowed_op_types: [] }, ["allowed_sim_ids"], [], []],
    ["an unknown SIM", { allowed_sim_ids: [SIM_A, GHOST], allowed_op_types: [] }, ["allowed_sim_ids"], [GHOST], []],
    [
      "an unknown type",
      { allowed_sim_ids: [SIM_A], allowed_op_types: ["deposit", "teleport"] },
      ["allowed_op_types"],
      [],
      ["teleport"],
    ],
    ["a ceiling of 0", { allowed_sim_ids: [SIM_A], allowed_op_types: [], max_amount: 0 }, ["max_amount"], [], []],
    [
      "both unknown SIM and type",
      { allowed_sim_ids: [GHOST], allowed_op_types: ["diagnostic"] },
      ["allowed_sim_ids", "allowed_op_types"],
      [GHOST],
      ["diagnostic"],
    ],
  ])("refuses %s, naming what was rejected", (_name, input, fields, sims, types) => {
    const r = checkGrant(input, known);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.violations.map((v) => v.field)).toEqual(fields);
    expect(r.rejected).toEqual({ sim_ids: sims, op_types: types });
    for (const id of [...sims, ...types]) expect(r.violations.map((v) => v.message).join(" ")).toContain(id);
  });
});
