// Correlation against real PostgreSQL, with dispatch and fleet stood in for: each rule of
// outcomes.ts in precedence order, crashes at every step, and copies racing each other.

import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it, vi } from "vitest";
import { AlertRaisedSchema, AlertResolvedSchema } from "@transferops/kit/gen/transferops/common/v1/alerts_pb";
import { balanceReply, failure, promotion, transferReceived } from "../domain/sms-templates.ts";
import {
  deposit,
  messageRows,
  newRef,
  one,
  useHarness,
  outboxTypes,
  OTHER_SIM,
  session,
  SIM,
  transferIn,
  type Harness,
} from "../../../../test/support/evidence-harness.ts";
import { recordStatements } from "../../../../test/support/statements.ts";
import type { MessageRecord } from "../domain/message.ts";
import { lockSim, lockSimMessage } from "../store/messages.ts";
import { addToDay } from "../store/reconciliations.ts";
import { dailyReconciliation } from "./reconciliation.ts";
import { Redrive } from "./redrive.ts";
import { storeMessage } from "./submit.ts";
import { rejectionOf } from "../../../../test/support/refusal.ts";
import { eventually } from "../../../../test/support/eventually.ts";

let h: Harness;
useHarness((opened) => (h = opened));

const OP = "11111111-1111-4111-8111-111111111111";
const OP2 = "22222222-2222-4222-8222-222222222222";
const ADMIN = "33333333-3333-4333-8333-333333333333";

async function refusalOf(p: Promise<unknown>): Promise<{ status: string; reason: string }> {
  const e = await rejectionOf(p);
  return { status: e.status, reason: e.reason ?? e.code };
}

/** What a submission of `raw` on SIM from the operator's sender stores (storeMessage's input). */
const storeInput = (raw: string, clientMessageId: string | null = null) => ({
  simId: SIM,
  operator: "operator_b" as const,
  rules: [],
  subscriptionSlot: null,
  correlate: true,
  sender: "OrangeMoney",
  raw,
  receivedAt: new Date(),
  deviceReceivedAt: null,
  clientMessageId,
});

describe("rule 1: a duplicate gets the stored result, processed once", () => {
  it("answers a second submission of the same text with the first result, without asking dispatch again", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 15_000 });
    const text = deposit(15_000);
    const first = await one(h, text);
    const again = await one(h, text);
    expect(first).toMatchObject({
      duplicate: false,
      matched: true,
      restated: false,
      outcome: "confirmed",
      operationId: OP,
    });
    expect(again).toMatchObject({
      duplicate: true,
      matched: true,
      restated: false,
      outcome: "confirmed",
      operationId: OP,
    });
    expect(again.messageId).toBe(first.messageId);
    expect(again.operation?.operationId).toBe(OP);
    expect(again.balance).toBe(first.balance);
    expect(h.dispatch.proveCalls).toHaveLength(1);
    expect(await messageRows(h)).toHaveLength(1);
  });

  it("treats identical text without a client id as one message even with another timestamp", async () => {
    const text = deposit(900);
    await one(h, text, { receivedAt: new Date("2026-03-14T09:00:00Z") });
    const again = await one(h, text, { receivedAt: new Date("2026-03-14T10:00:00Z") });
    expect(again.duplicate).toBe(true);
    expect(await messageRows(h)).toHaveLength(1);
  });

  it("keeps the same text under two client ids as two messages, and one id sent twice as one", async () => {
    const text = deposit(900);
    await one(h, text, { clientMessageId: "c-1" });
    await one(h, text, { clientMessageId: "c-2" });
    const again = await one(h, text, { clientMessageId: "c-1" });
    expect(again.duplicate).toBe(true);
    expect(await messageRows(h)).toHaveLength(2);
  });

  it("stores a message, new or a copy, in one transaction: the insert's conflict is the duplicate check", async () => {
    const input = storeInput(deposit(4200));
    const transactions = vi.spyOn(h.deps.db, "tx");
    const { statements, stop } = recordStatements();
    try {
      const first = await storeMessage(h.deps, input);
      expect(first.duplicate).toBe(false);
      expect(transactions).toHaveBeenCalledTimes(1);
      expect(statements.find((q) => /insert into evidence\.messages/.test(q))).toBeDefined();
      expect(statements.filter((q) => /sms_hash = \?/.test(q))).toEqual([]);
      const again = await storeMessage(h.deps, input);
      expect(again).toMatchObject({ duplicate: true, message: { id: first.message.id } });
      expect(transactions).toHaveBeenCalledTimes(2);
    } finally {
      stop();
      transactions.mockRestore();
    }
    expect(await messageRows(h)).toHaveLength(1);
  });

  it("publishes MessageStored once for a message submitted twice", async () => {
    const text = promotion("operator_b", { language: "fr" });
    await one(h, text);
    await one(h, text);
    expect((await outboxTypes(h)).filter((t) => t === "MessageStored")).toHaveLength(1);
  });
});

describe("rule 2: a movement is listed, never matched", () => {
  it("stores a UV transfer received as a movement even when an operation has its amount", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 5000 });
    const text = transferReceived("operator_b", {
      amount: 5000,
      balanceAfter: 40_000,
      ref: newRef(),
      msisdn: "699000111",
      name: "PAUL EKANE",
      at: new Date(),
      language: "fr",
    });
    const r = await one(h, text);
    expect(r).toMatchObject({ matched: false, restated: false, outcome: "movement", kind: "UV_IN" });
    expect(h.dispatch.proveCalls).toHaveLength(0);
    expect(h.dispatch.operations.get(OP)!.status).toBe("awaiting_evidence");
  });
});

describe("rule 3: kinds that never confirm are stored", () => {
  it.each([
    ["promotion", () => promotion("operator_b", { language: "fr", prize: 5000 }), "MKT"],
    ["operator refusal", () => failure("operator_b", { language: "fr", amount: 5000 }), "FAIL"],
  ])("%s: stored, dispatch never asked", async (_name, build, kind) => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 5000 });
    const r = await one(h, build());
    expect(r).toMatchObject({ matched: false, outcome: "stored", kind });
    expect(h.dispatch.proveCalls).toHaveLength(0);
  });
});

describe("rule 4: correlate=false stores only", () => {
  it("stores a deposit as not_correlated without asking dispatch", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 7000 });
    const r = await one(h, deposit(7000), { correlate: false });
    expect(r).toMatchObject({ matched: false, outcome: "not_correlated", kind: "DEP" });
    expect(h.dispatch.proveCalls).toHaveLength(0);
  });
});

describe("rule 5: a restatement names the proved operation and confirms nothing", () => {
  it("attaches a second message with the same reference to the same operation, even with another candidate open", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 12_000 });
    const ref = newRef();
    const first = await one(h, deposit(12_000, { ref }));
    h.dispatch.add({ operationId: OP2, simId: SIM, montant: 12_000 });
    const second = await one(h, deposit(12_000, { ref, balanceAfter: 111_111 }));
    expect(first).toMatchObject({ outcome: "confirmed", operationId: OP });
    expect(second).toMatchObject({
      matched: true,
      restated: true,
      outcome: "restated",
      operationId: OP,
      duplicate: false,
    });
    expect(second.operation?.operationId).toBe(OP);
    expect(h.dispatch.proveCalls).toHaveLength(1);
    expect(h.dispatch.confirmations).toEqual([{ operationId: OP, messageId: first.messageId, by: "proof" }]);
    expect(h.dispatch.operations.get(OP2)!.status).toBe("awaiting_evidence");
    expect(h.fleet.balanceCalls).toHaveLength(1);
    const rows = await messageRows(h);
    expect(rows.map((r) => r.link)).toEqual(["proof", "restatement"]);
  });

  it("does not restate a reference proved on another SIM", async () => {
    const ref = newRef();
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 3000 });
    h.dispatch.add({ operationId: OP2, simId: OTHER_SIM, montant: 3000 });
    await one(h, deposit(3000, { ref }));
    const other = await one(h, deposit(3000, { ref }), { simId: OTHER_SIM });
    expect(other).toMatchObject({ outcome: "confirmed", operationId: OP2 });
  });

  it("keeps a genuine second dial with its own reference an orphan", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 3000 });
    await one(h, deposit(3000));
    const second = await one(h, deposit(3000));
    expect(second).toMatchObject({ matched: false, restated: false, outcome: "orphan" });
  });
});

describe("rule 6: nothing to match by", () => {
  it("keeps a text without a readable amount as an orphan, never asking dispatch", async () => {
    const r = await one(h, "Message inconnu: votre operation est en cours de traitement.");
    expect(r).toMatchObject({ outcome: "orphan", matched: false });
    expect(r.kind).toBeUndefined();
    expect(h.dispatch.proveCalls).toHaveLength(0);
  });
});

describe("rule 7: dispatch's answer", () => {
  it("confirms, links, and records the balance observed at the operator's timestamp", async () => {
    h.fleet.sims.get(SIM)!.balance = 300_000;
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 25_000, msisdnDest: "690000001" });
    const receivedAt = new Date(Date.now() - 5000);
    const r = await one(h, deposit(25_000, { balanceAfter: 275_000 }), { receivedAt });
    expect(r).toMatchObject({
      matched: true,
      restated: false,
      outcome: "confirmed",
      kind: "DEP",
      operationId: OP,
      isAmbiguous: false,
    });
    expect(r.balance).toBe(275_000n);
    expect(r.previousBalance).toBe(300_000n);
    expect(h.fleet.balanceCalls).toHaveLength(1);
    expect(h.fleet.balanceCalls[0]).toMatchObject({
      simId: SIM,
      balance: 275_000n,
      source: "sms",
      messageId: r.messageId,
    });
    expect(Number(h.fleet.balanceCalls[0].observedAt!.seconds)).toBe(Math.floor(receivedAt.getTime() / 1000));
    const [row] = await messageRows(h);
    expect(row).toMatchObject({
      state: "done",
      outcome: "confirmed",
      link: "proof",
      operation_id: OP,
      balance_state: "done",
    });
    expect(await outboxTypes(h, "messages")).toEqual(["MessageStored", "MessageCorrelated", "MessageLinked"]);
  });

  it("confirms a proof in ten statements in three transactions: each step's writes and the day's addition share a statement", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 25_000 });
    // A first message of the SIM: the rules' cache is warm and the chain has a neighbour.
    await one(h, deposit(7_000, { balanceAfter: 300_000 }), { receivedAt: new Date(Date.now() - 60_000) });
    const transactions = vi.spyOn(h.deps.db, "tx");
    const { statements, inTransaction, stop } = recordStatements();
    let r: Awaited<ReturnType<typeof one>>;
    let transactionCount: number;
    try {
      r = await one(h, deposit(25_000, { balanceAfter: 275_000 }));
      transactionCount = transactions.mock.calls.length;
    } finally {
      stop();
      transactions.mockRestore();
    }
    expect(r).toMatchObject({ outcome: "confirmed", operationId: OP });
    const step = (q: string): string => {
      if (/from evidence\.wording_rules\s*$/.test(q)) return "rules' stamp";
      if (/^\s*with m as \(\s*insert into evidence\.messages[\s\S]*insert into evidence\.daily_reconciliations/.test(q))
        return "message and day";
      if (/^\s*insert into "evidence"\.outbox/.test(q)) return "outbox";
      if (/pg_advisory_xact_lock[\s\S]*for update/.test(q)) return "SIM and message locks";
      if (/link = 'proof'/.test(q)) return "restatement probe";
      if (/^\s*with u as \(\s*update evidence\.messages set state = 'done'[\s\S]*daily_reconciliations/.test(q))
        return "correlation and day";
      if (/'previous' as side[\s\S]*'next' as side[\s\S]*'repeat' as side/.test(q)) return "chain neighbours";
      if (/^\s*select [\s\S]* for update$/.test(q)) return "message lock";
      if (/^\s*update evidence\.messages set balance_state/.test(q)) return "balance";
      return q;
    };
    expect(statements.map(step)).toEqual([
      // The submission (the stamp: its first message's transaction).
      "rules' stamp",
      "message and day",
      "outbox",
      // The correlation.
      "SIM and message locks",
      "restatement probe",
      "correlation and day",
      "chain neighbours",
      "outbox",
      // The proven balance.
      "message lock",
      "balance",
    ]);
    expect(inTransaction.every(Boolean)).toBe(true);
    expect(transactionCount).toBe(3);
    // The day's row counts both messages, the confirmed one as confirmed.
    const [day] = (await h.db
      .em()
      .execute(`select messages, confirmed, proven_xaf, last_balance from evidence.daily_reconciliations`)) as {
      messages: number;
      confirmed: number;
      proven_xaf: string;
      last_balance: string;
    }[];
    expect(day).toMatchObject({ messages: 2, confirmed: 1, proven_xaf: "25000", last_balance: "275000" });
  });

  it("sends dispatch the parsed fields and the handset's receipt time", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 4000 });
    const deviceReceivedAt = new Date(Date.now() - 2000);
    const ref = newRef();
    await one(h, deposit(4000, { ref, msisdn: "690000001", balanceAfter: 50_000 }), { deviceReceivedAt });
    expect(h.dispatch.proveCalls[0]).toMatchObject({
      simId: SIM,
      kind: "DEP",
      amount: 4000n,
      fee: 0n,
      balanceAfter: 50_000n,
      operatorRef: ref,
      counterpartyMsisdn: "690000001",
      isAmbiguousHint: false,
    });
    expect(Number(h.dispatch.proveCalls[0].deviceReceivedAt!.seconds)).toBe(
      Math.floor(deviceReceivedAt.getTime() / 1000),
    );
  });

  it("confirms a balance check with a balance reply, recorded as a balance_check reading", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 1, opType: "balance" });
    const r = await one(h, balanceReply("operator_b", { balance: 88_000, language: "fr" }));
    expect(r).toMatchObject({ outcome: "confirmed", kind: "BAL", operationId: OP });
    expect(h.dispatch.proveCalls[0].amount).toBe(88_000n);
    expect(h.fleet.balanceCalls[0]).toMatchObject({ balance: 88_000n, source: "balance_check" });
  });

  it("marks a message matching two operations on amount ambiguous and leaves it for a person", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 10_000 });
    h.dispatch.add({ operationId: OP2, simId: SIM, montant: 10_000 });
    const r = await one(h, deposit(10_000));
    expect(r).toMatchObject({ matched: false, outcome: "ambiguous", isAmbiguous: true });
    expect(r.operationId).toBeUndefined();
    expect(h.dispatch.confirmations).toHaveLength(0);
    expect(h.fleet.balanceCalls).toHaveLength(0);
  });

  it("confirms nothing on a divergent MSISDN and raises an alert through the outbox", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 6000, msisdnDest: "690000001" });
    const r = await one(h, deposit(6000, { msisdn: "699999999" }));
    expect(r).toMatchObject({ matched: false, outcome: "divergent" });
    expect(r.operationId).toBeUndefined();
    expect(h.dispatch.confirmations).toHaveLength(0);
    expect(h.fleet.balanceCalls).toHaveLength(0);
    expect(await outboxTypes(h, "alerts")).toEqual(["AlertRaised"]);
  });

  it("links the operator's repeat of a text dispatch already holds as proof as a restatement", async () => {
    // The first text's proof reached dispatch but its answer never came back here: this
    // service knows no proof by that reference, dispatch does.
    const ref = newRef();
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 7000, status: "confirmed", confirmedRef: ref });
    h.dispatch.add({ operationId: OP2, simId: SIM, montant: 7000 });
    const r = await one(h, deposit(7000, { ref }));
    expect(r).toMatchObject({ matched: true, restated: true, outcome: "restated", operationId: OP });
    expect(h.dispatch.confirmations).toHaveLength(0);
    expect(h.dispatch.operations.get(OP2)!.status).toBe("awaiting_evidence");
  });

  it("keeps a message no operation fits as an orphan", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 6000 });
    const r = await one(h, deposit(6001));
    expect(r).toMatchObject({ matched: false, restated: false, outcome: "orphan" });
    expect(h.dispatch.operations.get(OP)!.status).toBe("awaiting_evidence");
  });
});

describe("the SIM must be the calling device's", () => {
  it.each([
    ["an unknown SIM", "sim-nowhere", undefined],
    ["a SIM of another handset", SIM, "other-device"],
  ])("refuses %s with 403 and stores nothing", async (_name, simId, deviceId) => {
    expect(await refusalOf(one(h, deposit(100), { simId, deviceId }))).toEqual({
      status: "forbidden",
      reason: "sim_not_assigned_to_device",
    });
    expect(await messageRows(h)).toHaveLength(0);
  });

  it("refuses an unassigned SIM", async () => {
    h.fleet.sims.set("sim-loose", { operator: "operator_a" });
    expect((await refusalOf(one(h, deposit(100), { simId: "sim-loose" }))).reason).toBe("sim_not_assigned_to_device");
  });

  it("reads the text with the SIM's operator parser", async () => {
    h.fleet.sims.set("sim-a", { operator: "operator_a", deviceId: "d0e1" });
    const text = balanceReply("operator_a", { balance: 4200, language: "en" });
    expect((await one(h, text, { simId: "sim-a", correlate: false })).kind).toBe("BAL");
  });
});

describe("a crash at any step is finished by a retry or the re-drive, never doubled", () => {
  it("finishes a message stored before a crash when the same submission comes again", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 8000 });
    const text = deposit(8000);
    // The process dies right after the insert committed: only the store step ran.
    const stored = await storeMessage(h.deps, storeInput(text));
    expect(stored.message).toMatchObject({ state: "pending", outcome: "pending" });
    const retry = await one(h, text);
    expect(retry).toMatchObject({ duplicate: true, matched: true, outcome: "confirmed", operationId: OP });
    expect(h.dispatch.confirmations).toHaveLength(1);
  });

  it("finishes a message whose recording died after dispatch confirmed: dispatch answers the same, one confirmation", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 8000 });
    let crashes = 1;
    h.hooks.afterProof = () => {
      if (crashes-- > 0) throw new Error("process killed after dispatch confirmed");
    };
    const text = deposit(8000);
    const first = await one(h, text);
    expect(first).toMatchObject({ matched: false, outcome: "pending" });
    expect(h.dispatch.operations.get(OP)!.status).toBe("confirmed");
    const retry = await one(h, text);
    expect(retry).toMatchObject({ duplicate: true, matched: true, outcome: "confirmed", operationId: OP });
    expect(h.dispatch.proveCalls.map((c) => c.messageId)).toEqual([first.messageId, first.messageId]);
    expect(h.dispatch.confirmations).toHaveLength(1);
    expect((await outboxTypes(h, "messages")).filter((t) => t === "MessageLinked")).toHaveLength(1);
  });

  it("lets the re-drive finish what nobody resubmits, once", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 8000 });
    h.dispatch.unavailable = 1;
    const first = await one(h, deposit(8000));
    expect(first.outcome).toBe("pending");
    const redrive = new Redrive(h.deps, { intervalMs: 60_000, graceMs: 0 });
    // One failed attempt: the re-drive waits 2 seconds before trying again.
    expect(await redrive.pass(new Date(Date.now() + 500))).toBe(0);
    expect(await redrive.pass(new Date(Date.now() + 3000))).toBe(1);
    expect(await redrive.pass(new Date(Date.now() + 3000))).toBe(0);
    const [row] = await messageRows(h);
    expect(row).toMatchObject({ state: "done", outcome: "confirmed", operation_id: OP, attempts: 1 });
    expect(h.dispatch.confirmations).toHaveLength(1);
  });

  it("leaves a message to its own submission during the grace period", async () => {
    h.dispatch.unavailable = 1;
    await one(h, deposit(8000));
    const redrive = new Redrive(h.deps, { intervalMs: 60_000, graceMs: 60_000 });
    expect(await redrive.pass()).toBe(0);
    expect((await messageRows(h))[0].state).toBe("pending");
  });

  it("keeps the link when fleet is unreachable and sends the balance later", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 9000 });
    h.fleet.unavailable = 1;
    const r = await one(h, deposit(9000, { balanceAfter: 70_000 }));
    expect(r).toMatchObject({ matched: true, outcome: "confirmed" });
    expect(r.balance).toBeUndefined();
    expect((await messageRows(h))[0]).toMatchObject({ link: "proof", balance_state: "pending" });
    await new Redrive(h.deps, { intervalMs: 60_000, graceMs: 0 }).pass(new Date(Date.now() + 3000));
    expect((await messageRows(h))[0]).toMatchObject({ balance_state: "done", balance: "70000" });
    expect(h.fleet.sims.get(SIM)!.balance).toBe(70_000);
    expect(h.dispatch.confirmations).toHaveLength(1);
  });

  it("sends the balance when the link committed but the process died before fleet", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 9000 });
    let crashes = 1;
    h.hooks.beforeBalance = () => {
      if (crashes-- > 0) throw new Error("process killed before fleet");
    };
    const text = deposit(9000, { balanceAfter: 61_000 });
    const first = await one(h, text);
    expect(first).toMatchObject({ matched: true });
    expect(first.balance).toBeUndefined();
    const retry = await one(h, text);
    expect(retry).toMatchObject({ duplicate: true, matched: true, balance: 61_000n });
    expect(h.fleet.balanceCalls).toHaveLength(1);
  });
});

/** Until a statement of this test's database waits on a lock. */
async function someoneWaitsOnALock(what: string): Promise<void> {
  await eventually(
    async () =>
      (
        await h.db.tx((em) =>
          em.execute(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`),
        )
      ).length > 0
        ? true
        : undefined,
    20_000,
    what,
  );
}

describe("concurrency", () => {
  it("takes the SIM's lock before the message's in one statement, and reads the message as the lock holder left it", async () => {
    const stored = await one(h, deposit(3_000), { correlate: false });
    let release!: () => void;
    let locked!: () => void;
    const held = new Promise<void>((r) => (locked = r));
    // Another transaction holds the SIM's lock (a correlation on another replica) and changes the message.
    const holder = h.db.tx(async (em) => {
      await lockSim(em, SIM);
      locked();
      await new Promise<void>((r) => (release = r));
      await em.execute(`update evidence.messages set attempts = 7 where id = ?`, [stored.messageId]);
    });
    await held;
    let read: MessageRecord | undefined;
    const waiter = h.db.tx(async (em) => (read = await lockSimMessage(em, SIM, stored.messageId)));
    await someoneWaitsOnALock("the waiter blocked on the SIM's lock");
    expect(read).toBeUndefined();
    // The message's row is not locked while the statement waits for the SIM's lock.
    const probe = await h.db.tx((em) =>
      em.execute(`select id from evidence.messages where id = ? for update nowait`, [stored.messageId]),
    );
    expect(probe).toHaveLength(1);
    release();
    await Promise.all([holder, waiter]);
    expect(read).toMatchObject({ id: stored.messageId, attempts: 7 });
  });

  it("stores a new message of a SIM's day while another write of that day is under way, without a deadlock", async () => {
    // A write of a SIM's day that locks the chain's row of the day first (the messages' row
    // trigger) and its counts second (addToDay), as a person's attach or a re-reading does,
    // while a refusal of the same SIM arrives. The insert adds to the counts, then its trigger
    // to the chain's row: the other order. Without the SIM's lock first (insertMessage), each
    // waited for the row the other held and PostgreSQL rolled one back (seed 486216758).
    const stored = await one(h, balanceReply("operator_b", { language: "fr", balance: 70_000 }));
    let release!: () => void;
    let changed!: () => void;
    const chainRowHeld = new Promise<void>((r) => (changed = r));
    const writer = h.db.tx(async (em) => {
      const m = (await lockSimMessage(em, SIM, stored.messageId))!;
      // A chain column changes: the trigger takes the day's row of day_chains.
      await em.execute(`update evidence.messages set stored_at = stored_at + interval '1 millisecond' where id = ?`, [
        m.id,
      ]);
      changed();
      await new Promise<void>((r) => (release = r));
      await addToDay(em, m, m);
    });
    await chainRowHeld;
    const refusal = storeMessage(
      h.deps,
      storeInput(failure("operator_b", { language: "fr", amount: 5000 }), "refusal-1"),
    );
    await someoneWaitsOnALock("the refusal's insert waits");
    release();
    const [, saved] = await Promise.all([writer, refusal]);
    expect(saved).toMatchObject({ duplicate: false, message: { kind: "FAIL", outcome: "stored" } });
    expect(await messageRows(h)).toHaveLength(2);
    // Both counted by the day.
    const [counts] = await h.db
      .em()
      .execute(`select sum(messages)::int as n from evidence.daily_reconciliations where sim_id = ?`, [SIM]);
    expect(counts.n).toBe(2);
  });

  it("stores one message and confirms once when the same message is submitted three times at once", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 20_000 });
    h.dispatch.delayMs = 50;
    const text = deposit(20_000);
    const results = await Promise.all([one(h, text), one(h, text), one(h, text)]);
    expect(await messageRows(h)).toHaveLength(1);
    expect(h.dispatch.confirmations).toHaveLength(1);
    expect(new Set(results.map((r) => r.messageId)).size).toBe(1);
    for (const r of results) expect(r).toMatchObject({ matched: true, outcome: "confirmed", operationId: OP });
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(h.fleet.balanceCalls).toHaveLength(1);
  });

  it("confirms one of two different messages racing for one operation; the other stays an orphan", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 5500 });
    h.dispatch.delayMs = 30;
    const [a, b] = await Promise.all([one(h, deposit(5500)), one(h, deposit(5500))]);
    expect([a.outcome, b.outcome].sort()).toEqual(["confirmed", "orphan"]);
    expect(h.dispatch.confirmations).toHaveLength(1);
  });

  it("restates the second of two messages with one reference racing for one operation", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 5500 });
    h.dispatch.add({ operationId: OP2, simId: SIM, montant: 5500, createdAt: new Date(Date.now() - 30_000) });
    h.dispatch.operations.get(OP2)!.status = "confirmed"; // only OP is a candidate
    h.dispatch.delayMs = 30;
    const ref = newRef();
    const [a, b] = await Promise.all([one(h, deposit(5500, { ref })), one(h, deposit(5500, { ref, balanceAfter: 1 }))]);
    expect([a.outcome, b.outcome].sort()).toEqual(["confirmed", "restated"]);
    expect(a.operationId).toBe(OP);
    expect(b.operationId).toBe(OP);
    expect(h.dispatch.proveCalls).toHaveLength(1);
    expect(h.dispatch.confirmations).toHaveLength(1);
  });

  it("holds one operation per message and one proof per operation in the schema", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 1000 });
    await one(h, deposit(1000));
    await one(h, deposit(2000), { correlate: false });
    const [orphan] = (await messageRows(h)).filter((r) => r.outcome === "not_correlated");
    await expect(
      h.db
        .em()
        .execute(`update evidence.messages set operation_id = ?, link = 'proof', state = 'done' where id = ?`, [
          OP,
          orphan.id,
        ]),
    ).rejects.toThrow(/messages_one_proof_per_operation/);
  });
});

describe("the operator's sender ids and the balance chain", () => {
  const at = (minute: number) => new Date(Date.UTC(2026, 10, 20, 8, minute));
  const received = (amount: number, balanceAfter: number, minute: number) =>
    transferIn(amount, balanceAfter, at(minute));

  it("stores another sender's copy as unknown_sender with an alert, and still takes the operator's own copy", async () => {
    const text = deposit(4200, { msisdn: "699000111" });
    const forged = await one(h, text, { sender: "+237670000000" });
    expect(forged).toMatchObject({ outcome: "unknown_sender", matched: false, duplicate: false });
    expect(h.dispatch.proveCalls).toHaveLength(0);
    expect(await outboxTypes(h, "alerts")).toEqual(["AlertRaised"]);
    const again = await one(h, text, { sender: "+237670000000" });
    expect(again).toMatchObject({ outcome: "unknown_sender", duplicate: true });
    const genuine = await one(h, text, { sender: "Orange Money" });
    expect(genuine.duplicate).toBe(false);
    expect(genuine.outcome).not.toBe("unknown_sender");
    expect(await outboxTypes(h, "alerts")).toEqual(["AlertRaised"]);
  });

  it("raises one chain-break alert for a missing message, resolves it once the message arrives, none for a repeat", async () => {
    const first = received(500, 1500, 1);
    await one(h, received(1000, 1000, 0), { receivedAt: at(0) });
    await one(h, first, { receivedAt: at(1) });
    expect(await outboxTypes(h, "alerts")).toEqual([]);
    const late = received(200, 1700, 2);
    await one(h, received(300, 2000, 3), { receivedAt: at(3) });
    expect(await outboxTypes(h, "alerts")).toEqual(["AlertRaised"]);
    const [raised] = await alerts();
    await one(h, late, { receivedAt: at(2) });
    await one(h, first, { receivedAt: at(1), clientMessageId: "operator-repeat" });
    expect(await outboxTypes(h, "alerts")).toEqual(["AlertRaised", "AlertResolved"]);
    const [, resolved] = await alerts();
    expect(resolved).toMatchObject({ kind: "balance_chain_break", simId: SIM, dedupeKey: raised.dedupeKey });
    expect(resolved.reason).toMatch(/closes the gap of 200 FCFA/);
  });

  it("resolves the old break when a late message only partly closes it, and alerts its own broken link", async () => {
    await one(h, received(1000, 1000, 0), { receivedAt: at(0) });
    await one(h, received(300, 1800, 3), { receivedAt: at(3) }); // two messages (+200, +300) missing
    await one(h, received(200, 1200, 1), { receivedAt: at(1) }); // one arrives: 1000 -> 1200 holds
    expect(await outboxTypes(h, "alerts")).toEqual(["AlertRaised", "AlertResolved", "AlertRaised"]);
    const [first, resolved, remaining] = await alerts();
    expect(resolved.dedupeKey).toBe(first.dedupeKey);
    expect(resolved.reason).toMatch(/still missing/);
    expect(remaining.dedupeKey).not.toBe(first.dedupeKey);
    expect(remaining.context).toMatchObject({ gap: 300 });
  });

  it("counts a commission credited to the wallet (COM): no break, and the day reconciles to zero", async () => {
    await one(h, received(1000, 1000, 0), { receivedAt: at(0) });
    const commission = await one(
      h,
      `Paiement de commission reussi. Informations detaillees: Montant: 250 FCFA, ID transaction: ${newRef()}, Nouveau Solde: 1250.40 FCFA.`,
      { receivedAt: at(1) },
    );
    expect(commission).toMatchObject({ kind: "COM", outcome: "stored", matched: false });
    await one(h, received(300, 1550, 2), { receivedAt: at(2) });
    expect(await outboxTypes(h, "alerts")).toEqual([]);
    const day = await dailyReconciliation(h.deps, { caller: session(ADMIN, "admin"), day: "2026-11-20", simId: SIM });
    expect(day.sims[0]).toMatchObject({ in_xaf: 1550, breaks: [], unexplained_xaf: 0, closing_balance: 1550 });
    expect(h.dispatch.proveCalls).toHaveLength(0);
  });

  it("counts a commission credited inside an agent's cash-in receipt (Montant Net Debite): no break, the day reconciles", async () => {
    await one(h, received(1000, 1000, 0), { receivedAt: at(0) });
    // The agent's wallet moves by the net debit (500 - 10 = 490), not by the amount.
    const cashIn = await one(
      h,
      `Depot vers 699992396 ABDOU AZIZ reussi from 656118851 BLESSED ENTERPRISE. Informations detaillees : ` +
        `Montant transaction : 500FCFA, ID de Transaction : ${newRef()}, Frais : 0FCFA, Commission : 10  FCFA, ` +
        `Montant Net Debite : 490FCFA, Nouveau Solde : 510.40FCFA.`,
      { receivedAt: at(1) },
    );
    expect(cashIn).toMatchObject({ kind: "DEP" });
    const [stored] = (await h.db
      .em()
      .execute(`select amount, commission, balance_after from evidence.messages where id = ?`, [cashIn.messageId])) as {
      amount: string;
      commission: string;
      balance_after: string;
    }[];
    expect(stored).toEqual({ amount: "500", commission: "10", balance_after: "510" });
    await one(h, received(300, 810, 2), { receivedAt: at(2) });
    expect(await outboxTypes(h, "alerts")).toEqual([]);
    const day = await dailyReconciliation(h.deps, { caller: session(ADMIN, "admin"), day: "2026-11-20", simId: SIM });
    expect(day.sims[0]).toMatchObject({
      in_xaf: 1300,
      out_xaf: 500,
      breaks: [],
      unexplained_xaf: 0,
      closing_balance: 810,
    });
  });

  it("keeps a prepaid card's receipts out of the wallet's chain: the card's balance is not the wallet's", async () => {
    await one(h, received(1000, 1000, 0), { receivedAt: at(0) });
    // Real Orange Cameroon texts: the "Nouveau solde" is the virtual card's (29394, then 327).
    const reload = await one(
      h,
      "Votre carte prépayée virtuelle a été rechargée de 1000 XAF. Nouveau solde : 29394.01 XAF. Merci d'utiliser Orange Money.",
      { receivedAt: at(1) },
    );
    const payment = await one(
      h,
      "Cher client, votre paiement de 1.18 USD chez NAME-CHEAP.COM* Z9S4ZH a été effectué avec succès. Nouveau solde " +
        "327.00 XAF. ID: 507434. Orange Money vous remercie. N'oubliez pas de recharger votre carte pour vos prochains paiements",
      { receivedAt: at(2) },
    );
    // Recognised without a kind (never a possible deposit): stored, out of the unmatched queue.
    for (const r of [reload, payment]) expect(r).toMatchObject({ outcome: "stored", matched: false });
    const stored = (await h.db
      .em()
      .execute(`select kind, balance_after, direction from evidence.messages where id in (?, ?)`, [
        reload.messageId,
        payment.messageId,
      ])) as { kind: string | null; balance_after: string | null; direction: string | null }[];
    expect(stored).toEqual([
      { kind: null, balance_after: null, direction: null },
      { kind: null, balance_after: null, direction: null },
    ]);
    await one(h, received(300, 1300, 3), { receivedAt: at(3) });
    expect(await outboxTypes(h, "alerts")).toEqual([]);
    const day = await dailyReconciliation(h.deps, { caller: session(ADMIN, "admin"), day: "2026-11-20", simId: SIM });
    expect(day.sims[0]).toMatchObject({ breaks: [], unexplained_xaf: 0, closing_balance: 1300 });
    expect(h.dispatch.proveCalls).toHaveLength(0);
  });

  /** The alerts evidence wrote to its outbox, decoded, in order. */
  async function alerts(): Promise<
    { kind: string; simId: string; dedupeKey: string; reason?: string; context?: Record<string, unknown> }[]
  > {
    const rows = (await h.db
      .em()
      .execute(`select type, payload from evidence.outbox where topic = 'alerts' order by seq`)) as {
      type: string;
      payload: Buffer;
    }[];
    return rows.map((r) =>
      r.type.endsWith("AlertResolved")
        ? fromBinary(AlertResolvedSchema, r.payload)
        : fromBinary(AlertRaisedSchema, r.payload),
    );
  }
});
