import { describe, expect, it } from "vitest";
import {
  amountDivergence,
  decideProof,
  kindProves,
  type ProofCandidate,
  type ProofDecision,
  type ProofMessage,
} from "./correlation.ts";

const NOW = new Date("2026-11-22T12:00:00Z");
const LATE_S = 7200;
const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000);

function op(id: string, o: Partial<ProofCandidate> = {}): ProofCandidate {
  return {
    operation_id: id,
    status: "awaiting_evidence",
    origin: "aggregated",
    op_type: "deposit",
    montant: 5000,
    msisdn_dest: "690000001",
    created_at: minutesAgo(10),
    finished_at: minutesAgo(5),
    ...o,
  };
}

const msg = (o: Partial<ProofMessage> = {}): ProofMessage => ({
  kind: "DEP",
  amount: 5000,
  counterparty_msisdn: null,
  device_received_at: null,
  ...o,
});

const decide = (candidates: ProofCandidate[], m: Partial<ProofMessage> = {}): ProofDecision =>
  decideProof(candidates, msg(m), NOW, LATE_S);

describe("decideProof: one row per rule, in the order they apply", () => {
  it.each<[string, ProofCandidate[], Partial<ProofMessage>, ProofDecision]>([
    [
      "confirms the single active operation of exactly that amount",
      [op("o1")],
      {},
      { outcome: "confirmed", operation_id: "o1" },
    ],
    ["finds nothing for another amount", [op("o1", { montant: 5001 })], {}, { outcome: "no_candidate" }],
    [
      "never lets an unrecognised message (kind null) prove a transfer",
      [op("o1")],
      { kind: null },
      { outcome: "no_candidate" },
    ],
    [
      "never lets a deposit message prove a balance check",
      [op("o1", { op_type: "balance", montant: 5000 })],
      {},
      { outcome: "no_candidate" },
    ],
    [
      "lets a balance reply prove a balance check whatever the amount read",
      [op("o1", { op_type: "balance", montant: 1 }), op("o2")],
      { kind: "BAL", amount: 734_000 },
      { outcome: "confirmed", operation_id: "o1" },
    ],
    ["never lets a balance reply prove a transfer", [op("o1")], { kind: "BAL" }, { outcome: "no_candidate" }],
    ["never lets a movement prove anything", [op("o1")], { kind: "UV_OUT" }, { outcome: "no_candidate" }],
    [
      "never lets a mini statement prove anything",
      [op("o1", { op_type: "mini_statement", montant: 5000 })],
      { kind: "OPERATOR_B_REC" },
      { outcome: "no_candidate" },
    ],
    [
      "ignores an operation created after the handset received the message",
      [op("o1", { created_at: minutesAgo(1) })],
      { device_received_at: minutesAgo(2) },
      { outcome: "no_candidate" },
    ],
    [
      "keeps an operation created before the handset received the message",
      [op("o1", { created_at: minutesAgo(3) })],
      { device_received_at: minutesAgo(2) },
      { outcome: "confirmed", operation_id: "o1" },
    ],
    ...(["queued", "running", "awaiting_evidence", "awaiting_manual_dial"] as const).map(
      (status): [string, ProofCandidate[], Partial<ProofMessage>, ProofDecision] => [
        `confirms an active operation in ${status}`,
        [op("o1", { status, origin: status === "awaiting_manual_dial" ? "matching" : "aggregated" })],
        {},
        { outcome: "confirmed", operation_id: "o1" },
      ],
    ),
    [
      "confirms a no_evidence operation inside the late window",
      [op("o1", { status: "no_evidence", finished_at: minutesAgo(119) })],
      {},
      { outcome: "confirmed", operation_id: "o1" },
    ],
    [
      "leaves a no_evidence operation past the late window",
      [op("o1", { status: "no_evidence", finished_at: minutesAgo(120) })],
      {},
      { outcome: "no_candidate" },
    ],
    ...(["confirmed", "failed", "rejected"] as const).map(
      (status): [string, ProofCandidate[], Partial<ProofMessage>, ProofDecision] => [
        `never proves a ${status} operation`,
        [op("o1", { status })],
        {},
        { outcome: "no_candidate" },
      ],
    ),
    [
      "tries active operations before late no_evidence ones",
      [op("late", { status: "no_evidence", finished_at: minutesAgo(30) }), op("active", { status: "running" })],
      {},
      { outcome: "confirmed", operation_id: "active" },
    ],
    [
      "narrows to handset-dialled origins before matching operations",
      [op("m", { status: "awaiting_manual_dial", origin: "matching" }), op("a", { origin: "assisted" })],
      {},
      { outcome: "confirmed", operation_id: "a" },
    ],
    [
      "falls back to every origin when no handset-dialled operation fits",
      [op("m", { status: "awaiting_manual_dial", origin: "matching" }), op("a", { origin: "assisted", montant: 10 })],
      {},
      { outcome: "confirmed", operation_id: "m" },
    ],
    [
      "answers ambiguous, confirming nothing, when several dialled operations fit",
      [op("o2"), op("o1", { origin: "assisted", status: "running" })],
      {},
      { outcome: "ambiguous", candidate_ids: ["o1", "o2"] },
    ],
    [
      "gives the message to the dialled operation, not to a same-amount one no handset claimed",
      [op("d"), op("q", { origin: "assisted", status: "queued" })],
      {},
      { outcome: "confirmed", operation_id: "d" },
    ],
    [
      "gives a message without a number to the matching operation (dialled by hand), not to a queued one nobody dialled",
      [
        op("m", { status: "awaiting_manual_dial", origin: "matching" }),
        op("q", { origin: "assisted", status: "queued" }),
      ],
      {},
      { outcome: "confirmed", operation_id: "m" },
    ],
    [
      "answers ambiguous between queued operations alone",
      [op("q1", { status: "queued" }), op("q2", { status: "queued" })],
      {},
      { outcome: "ambiguous", candidate_ids: ["q1", "q2"] },
    ],
    [
      "answers ambiguous among late candidates too",
      [op("o1", { status: "no_evidence" }), op("o2", { status: "no_evidence" })],
      {},
      { outcome: "ambiguous", candidate_ids: ["o1", "o2"] },
    ],
    [
      "answers divergent when the counterparty contradicts the single candidate's number",
      [op("o1")],
      { counterparty_msisdn: "690000009" },
      { outcome: "divergent", operation_id: "o1", expected_msisdn: "690000001", found_msisdn: "690000009" },
    ],
    [
      "reads the counterparty in international form",
      [op("o1")],
      { counterparty_msisdn: "+237 690 000 001" },
      { outcome: "confirmed", operation_id: "o1" },
    ],
    [
      "answers divergent for a foreign number (Benin, in international form)",
      [op("o1")],
      { counterparty_msisdn: "2290167744314" },
      { outcome: "divergent", operation_id: "o1", expected_msisdn: "690000001", found_msisdn: "2290167744314" },
    ],
    [
      "answers divergent for a foreign number written with +",
      [op("o1")],
      { counterparty_msisdn: "+243 812 345 678" },
      { outcome: "divergent", operation_id: "o1", expected_msisdn: "690000001", found_msisdn: "+243812345678" },
    ],
    [
      "answers divergent for another number in international form",
      [op("o1")],
      { counterparty_msisdn: "237690000009" },
      { outcome: "divergent", operation_id: "o1", expected_msisdn: "690000001", found_msisdn: "690000009" },
    ],
    [
      "answers divergent for a number of no Cameroon length",
      [op("o1")],
      { counterparty_msisdn: "69000000" },
      { outcome: "divergent", operation_id: "o1", expected_msisdn: "690000001", found_msisdn: "69000000" },
    ],
    [
      "answers divergent for a masked number whose visible digits contradict",
      [op("o1")],
      { counterparty_msisdn: "2376****0009" },
      { outcome: "divergent", operation_id: "o1", expected_msisdn: "690000001", found_msisdn: "2376****0009" },
    ],
    [
      "confirms on a masked number whose visible digits agree",
      [op("o1")],
      { counterparty_msisdn: "69****001" },
      { outcome: "confirmed", operation_id: "o1" },
    ],
    [
      "ignores a counterparty that is not a number",
      [op("o1")],
      { counterparty_msisdn: "ORANGE" },
      { outcome: "confirmed", operation_id: "o1" },
    ],
    [
      "gives the message to the same-amount operation sent to the number it names, not to one sent elsewhere",
      [op("elsewhere", { msisdn_dest: "690000002" }), op("named", { status: "running" })],
      { counterparty_msisdn: "690000001" },
      { outcome: "confirmed", operation_id: "named" },
    ],
    [
      "lets a late operation sent to the named number take the proof from an active one sent elsewhere",
      [
        op("late", { status: "no_evidence", finished_at: minutesAgo(30) }),
        op("active", { msisdn_dest: "690000002", status: "awaiting_evidence" }),
      ],
      { counterparty_msisdn: "690000001" },
      { outcome: "confirmed", operation_id: "late" },
    ],
    [
      "still answers ambiguous when the named number fits several dialled operations",
      [op("o1"), op("o2"), op("other", { msisdn_dest: "690000002" })],
      { counterparty_msisdn: "690000001" },
      { outcome: "ambiguous", candidate_ids: ["o1", "o2"] },
    ],
    [
      "keeps a masked number that fits two destinations ambiguous",
      [op("o1", { msisdn_dest: "690000001" }), op("o2", { msisdn_dest: "690100001" })],
      { counterparty_msisdn: "69****001" },
      { outcome: "ambiguous", candidate_ids: ["o1", "o2"] },
    ],
    [
      "answers divergent on the preferred operation when every one is sent elsewhere",
      [op("d", { msisdn_dest: "690000002" }), op("q", { msisdn_dest: "690000003", status: "queued" })],
      { counterparty_msisdn: "690000001" },
      { outcome: "divergent", operation_id: "d", expected_msisdn: "690000002", found_msisdn: "690000001" },
    ],
    [
      "never calls a balance reply divergent",
      [op("o1", { op_type: "balance", montant: 1 })],
      { kind: "BAL", counterparty_msisdn: "690000009" },
      { outcome: "confirmed", operation_id: "o1" },
    ],
  ])("%s", (_rule, candidates, message, expected) => {
    expect(decide(candidates, message)).toEqual(expected);
  });
});

describe("kindProves", () => {
  it.each<[string | null, string, boolean]>([
    ["DEP", "deposit", true],
    ["DEP", "float_deposit", true],
    ["DEP", "withdrawal", true],
    [null, "deposit", false],
    ["", "deposit", false],
    ["BAL", "balance", true],
    ["BAL", "deposit", false],
    ["DEP", "balance", false],
    ["DEP", "mini_statement", false],
    ["FAIL", "deposit", false],
    ["REV", "deposit", false],
  ])("kind %s proves %s: %s", (kind, opType, expected) => {
    expect(kindProves(kind, opType as never)).toBe(expected);
  });
});

describe("amountDivergence: a message to an active operation's destination for another amount", () => {
  it("names the newest active operation sent to that number, with both amounts", () => {
    const older = op("o1", { montant: 7000, created_at: minutesAgo(30) });
    const newer = op("o2", { montant: 6000, created_at: minutesAgo(20) });
    expect(amountDivergence([older, newer], msg({ counterparty_msisdn: "237690000001" }))).toEqual({
      outcome: "divergent",
      operation_id: "o2",
      expected_msisdn: "690000001",
      found_msisdn: "690000001",
      expected_amount: 6000,
      found_amount: 5000,
    });
  });

  it("finds none without a number, for another number, a balance reply, a finished or later operation", () => {
    const other = op("o1", { montant: 7000 });
    expect(amountDivergence([other], msg())).toBeNull();
    expect(amountDivergence([other], msg({ counterparty_msisdn: "690000002" }))).toBeNull();
    expect(amountDivergence([other], msg({ kind: "BAL", counterparty_msisdn: "690000001" }))).toBeNull();
    expect(
      amountDivergence([op("o1", { montant: 7000, status: "no_evidence" })], msg({ counterparty_msisdn: "690000001" })),
    ).toBeNull();
    expect(
      amountDivergence([other], msg({ counterparty_msisdn: "690000001", device_received_at: minutesAgo(15) })),
    ).toBeNull();
    expect(amountDivergence([op("o1")], msg({ counterparty_msisdn: "690000001" }))).toBeNull();
    expect(
      amountDivergence([op("o1", { montant: 7000, op_type: "balance" })], msg({ counterparty_msisdn: "690000001" })),
    ).toBeNull();
  });
});
