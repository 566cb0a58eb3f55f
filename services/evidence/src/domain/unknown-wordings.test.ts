import { describe, expect, it } from "vitest";
import { groupUnknown, shapeOf, whyUnknown, type UnknownCandidate } from "./unknown-wordings.ts";

const base: UnknownCandidate = {
  id: "m1",
  sim_id: "sim-1",
  raw_text: "CREDIT MOMO: 3250F recus de NORBERT DOSSOU (237670000009) le 2026-11-12 20:48 | Trx 10932256987",
  kind: null,
  amount: null,
  operator_ref: null,
  received_at: new Date("2026-11-28T10:00:00Z"),
  dismissed_at: null,
};

describe("unknown texts grouped by their shape", () => {
  it.each<[string, Partial<UnknownCandidate>, string | null]>([
    ["a text no rule reads", {}, "unread"],
    ["a deposit read without its reference", { kind: "DEP", amount: 5000 }, "deposit_without_ref"],
    ["a movement read without its amount", { kind: "UV_IN", operator_ref: "1" }, "kind_without_amount"],
    ["a balance reply (no amount by design)", { kind: "BAL" }, null],
    ["a notice", { kind: "ADMIN" }, null],
    ["a deposit read whole", { kind: "DEP", amount: 5000, operator_ref: "1" }, null],
    ["a dismissed text", { dismissed_at: new Date() }, null],
  ])("lists %s: %s", (_name, patch, why) => {
    expect(whyUnknown({ ...base, ...patch })).toBe(why);
  });

  it("gives two texts of one wording with other values the same shape", () => {
    const other = "CREDIT MOMO: 12,500 FCFA recus de AWA NDIAYE (699111222) le 2026-11-13 08:01 | Trx 10932299999";
    expect(shapeOf(other)).toBe(shapeOf(base.raw_text));
    expect(shapeOf(base.raw_text)).toBe("{name}: {amount} recus de {name} ({phone}) le {date} | trx {phone}");
  });

  it("counts, dates and samples a group, and sorts the groups by money and operations waiting", () => {
    const messages: UnknownCandidate[] = [
      base,
      {
        ...base,
        id: "m2",
        sim_id: "sim-2",
        raw_text: base.raw_text.replace("3250F", "800F"),
        received_at: new Date("2026-11-28T11:00:00Z"),
      },
      { ...base, id: "m3", sim_id: "sim-3", raw_text: "Votre compte a ete credite de 500 FCFA. Ref 77" },
    ];
    const waiting = { "sim-1": { count: 1, amountXaf: 3250 }, "sim-3": { count: 2, amountXaf: 9000 } } as Record<
      string,
      { count: number; amountXaf: number }
    >;
    const groups = groupUnknown(
      messages,
      () => "operator_a",
      (sim) => waiting[sim] ?? { count: 0, amountXaf: 0 },
    );
    expect(groups.map((g) => [g.sample.id, g.count, g.operationsWaiting, g.moneyWaitingXaf])).toEqual([
      ["m3", 1, 2, 9000],
      ["m2", 2, 1, 3250],
    ]);
    expect(groups[1]).toMatchObject({
      simIds: ["sim-1", "sim-2"],
      firstSeen: new Date("2026-11-28T10:00:00Z"),
      lastSeen: new Date("2026-11-28T11:00:00Z"),
      why: "unread",
    });
  });

  it("leaves out texts of a SIM whose operator is unknown", () => {
    expect(
      groupUnknown(
        [base],
        () => undefined,
        () => ({ count: 0, amountXaf: 0 }),
      ),
    ).toEqual([]);
  });
});
