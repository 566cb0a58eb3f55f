import { describe, expect, it } from "vitest";
import { checkReplay, checkRequestIdNamespace, replayDifferences, type ReplayedRequest } from "./idempotency.ts";
import type { ActorKind } from "./scope.ts";

describe("request_id namespace", () => {
  it.each<[ActorKind, string, string | null]>([
    ["intake", "tx-6f1c2a9e-3b7d-4e52-9a41-0c8d2f5b7e13", null],
    ["api_key", "tx-6f1c2a9e-3b7d-4e52-9a41-0c8d2f5b7e13", "request_id_reserved"],
    ["session", "tx-anything", "request_id_reserved"],
    ["session", "TX-anything", "request_id_reserved"],
    ["api_key", "intake-tx-1", null],
    ["session", "req-1", null],
  ])("a %s caller sending %s: %s", (kind, requestId, reason) => {
    const refused = checkRequestIdNamespace(kind, requestId);
    expect(refused?.reason ?? null).toBe(reason);
    if (refused) expect(refused.status).toBe("forbidden");
  });
});

describe("a replay", () => {
  const known = {
    agent_id: "a1",
    operator: "operator_b",
    op_type: "deposit",
    montant: 5000,
    msisdn_dest: "690000001",
    sim_id: "sim-1",
    partner_verified: true,
    dest_name: "Awa",
    contact_id: "c-1",
    parent_operation_id: null,
  };
  const same: ReplayedRequest = {
    request_id: "r1",
    agent_id: "a1",
    operator: "operator_b",
    op_type: "deposit",
    montant: 5000,
    msisdn: "+237 690 00 00 01",
    sim_id: null,
    partner_verified: true,
    dest_name: "Awa",
    contact_id: "c-1",
    parent_operation_id: null,
  };

  it.each<[string, Partial<ReplayedRequest>, string[]]>([
    ["the same request (number written another way, SIM left to the server)", {}, []],
    ["the same request naming the SIM chosen", { sim_id: "sim-1" }, []],
    ["another amount", { montant: 5001 }, ["montant"]],
    ["another destination", { msisdn: "690000002" }, ["client.msisdn"]],
    ["another operator", { operator: "operator_a" }, ["operator"]],
    ["another type", { op_type: "balance" }, ["type_op"]],
    ["another named SIM", { sim_id: "sim-2" }, ["sim_id"]],
    ["another owning agent named", { agent_id: "a2" }, ["agent_id"]],
    ["no owning agent named (a session or intake)", { agent_id: null }, []],
    ["the name check dropped", { partner_verified: false }, ["partner_verified"]],
    ["another recipient name", { dest_name: "Bello" }, ["client.nom"]],
    ["no recipient name", { dest_name: null }, ["client.nom"]],
    ["another contact", { contact_id: "c-2" }, ["contact_id"]],
    ["a parent named", { parent_operation_id: "op-9" }, ["parent_operation_id"]],
    ["several fields", { montant: 1, msisdn: "690000009" }, ["montant", "client.msisdn"]],
  ])("%s differs in %j", (_what, change, fields) => {
    expect(replayDifferences(known, { ...same, ...change })).toEqual(fields);
    const refused = checkReplay(known, { ...same, ...change });
    if (fields.length === 0) expect(refused).toBeNull();
    else {
      expect([refused?.status, refused?.reason, refused?.context]).toEqual([
        "conflict",
        "request_id_reused",
        { reason: "request_id_reused", request_id: "r1", differs: fields },
      ]);
    }
  });
});
