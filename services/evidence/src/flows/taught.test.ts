// The taught rules a submission parses with, as two replicas see them: each process remembers
// them under the stamp of the active set, and a change committed through one replica is
// applied by the other from its next submission on, and by a running submission after
// RULES_RECHECK_MS (on PostgreSQL, the harness's stand-ins).

import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "@transferops/kit";
import {
  ActivateWordingRuleRequestSchema,
  AddWordingRuleRequestSchema,
  RetireWordingRuleRequestSchema,
} from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import { deposit, one, session, useHarness, submit, type Harness } from "../../../../test/support/evidence-harness.ts";
import { recordStatements } from "../../../../test/support/statements.ts";
import { migrations } from "../store/migrations/index.ts";
import { currentTaughtRules, RULES_RECHECK_MS } from "./taught.ts";
import { activateRule, addRule, retireRule } from "./wording-rules.ts";
import { eventually } from "../../../../test/support/eventually.ts";

let h: Harness;
let otherDb: Database;
useHarness((opened) => (h = opened));
beforeAll(async () => {
  otherDb = await openDatabase({ url: h.tdb.url, schema: "evidence", migrations, poolMax: 4 });
});
afterAll(async () => {
  await otherDb.close();
});

const ADMIN = session("00000000-0000-4000-8000-0000000000ad", "admin");
/** A DEP or BAL rule is activated by an admin other than its author. */
const APPROVER = session("00000000-0000-4000-8000-0000000000ae", "admin");
let seq = 0;
const text = () =>
  `Operation KX9 terminee: ${20_000 + ++seq} FCFA credites au client 690000001. Code CI260314.3${seq}01.B3${seq}001. Reste 250000 FCFA.`;

async function teach(template: string): Promise<string> {
  const draft = await addRule(
    h.deps,
    create(AddWordingRuleRequestSchema, {
      caller: ADMIN,
      operator: "operator_b",
      kind: "DEP",
      language: "fr",
      direction: "out",
      template,
    }),
  );
  await activateRule(
    h.deps,
    create(ActivateWordingRuleRequestSchema, { caller: APPROVER, versionId: draft.id }),
    () => {},
  );
  return draft.id;
}

describe("taught rules across replicas", () => {
  it("a rule activated or retired through one replica is applied by the other from its next submission", async () => {
    // The other replica has remembered the empty set before the change.
    expect((await currentTaughtRules(otherDb, "operator_b")).rules).toEqual([]);
    const otherDeps = { ...h.deps, db: otherDb };

    const versionId = await teach("Operation KX9 terminee: {amount} credites au client {phone}. Code {ref}. {any}");
    const read = await one({ ...h, deps: otherDeps }, text());
    expect(read).toMatchObject({ kind: "DEP" });
    expect((await currentTaughtRules(otherDb, "operator_b")).rules.map((r) => r.id)).toEqual([
      expect.stringMatching(/^taught\.operator_b\./),
    ]);

    await retireRule(h.deps, create(RetireWordingRuleRequestSchema, { caller: ADMIN, versionId }), () => {});
    const after = await one({ ...h, deps: otherDeps }, text());
    expect(after.kind).toBeUndefined(); // no rule reads it: no kind
    expect((await currentTaughtRules(otherDb, "operator_b")).rules).toEqual([]);
  });

  it("a rule activated while a submission looks its SIM up, before its message's transaction, reads the message", async () => {
    expect((await currentTaughtRules(otherDb, "operator_b")).rules).toEqual([]);
    const lookup = h.fleet.lookupSim;
    h.fleet.lookupSim = async (req) => {
      await teach("Operation KX9 terminee: {amount} credites au client {phone}. Code {ref}. {any}");
      return lookup(req);
    };
    try {
      expect(await one({ ...h, deps: { ...h.deps, db: otherDb } }, text())).toMatchObject({ kind: "DEP" });
    } finally {
      h.fleet.lookupSim = lookup;
    }
  });

  it("a submission checks the rules' stamp in its message's transaction, before the insert, never on its own", async () => {
    await currentTaughtRules(h.db, "operator_b");
    const { statements, inTransaction, stop } = recordStatements();
    try {
      await submit(h, [text(), text()]);
    } finally {
      stop();
    }
    const at = (pattern: RegExp) => statements.flatMap((q, i) => (pattern.test(q) ? [i] : []));
    const stamps = at(/from evidence\.wording_rules\s*$/);
    const inserts = at(/insert into evidence\.messages/);
    // Once per submission (the second message is within RULES_RECHECK_MS), in the first message's transaction.
    expect([stamps.length, inserts.length]).toEqual([1, 2]);
    expect([inTransaction[stamps[0]!], inTransaction[inserts[0]!]]).toEqual([true, true]);
    expect(stamps[0]).toBeLessThan(inserts[0]!);
  });

  it("the rules of an unchanged set are remembered; another activation changes them", async () => {
    await teach("Operation KX9 terminee: {amount} credites au client {phone}. Code {ref}. {any}");
    const first = await currentTaughtRules(h.db, "operator_b");
    expect((await currentTaughtRules(h.db, "operator_b")).rules).toBe(first.rules);
    await teach("Operation KX9 terminee: {amount} credites au client {phone}. Code {ref}. Reste {balance}.");
    const next = await currentTaughtRules(h.db, "operator_b");
    expect(next.rules).not.toBe(first.rules);
    expect(next.rules).toHaveLength(2);
  });

  it("a submission running longer than the recheck interval parses its next messages with a rule activated meanwhile", async () => {
    h.dispatch.add({ operationId: "00000000-0000-4000-8000-0000000000b1", simId: "sim-b-1", montant: 5_000 });
    // The first message's proof takes longer than the interval.
    h.dispatch.delayMs = RULES_RECHECK_MS + 300;
    const asked = h.dispatch.proveCalls.length;
    const running = submit(h, [deposit(5_000), text()]);
    // The first message is inside dispatch (its proof takes longer than the interval).
    await eventually(() => (h.dispatch.proveCalls.length > asked ? true : undefined), 20_000, "the first proof asked");
    await teach("Operation KX9 terminee: {amount} credites au client {phone}. Code {ref}. {any}");
    const [proof, read] = await running;
    expect(proof).toMatchObject({ kind: "DEP", outcome: "confirmed" });
    expect(read).toMatchObject({ kind: "DEP" });
  });
});
