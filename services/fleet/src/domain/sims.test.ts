import { describe, expect, it } from "vitest";
import { DomainError } from "@transferops/kit";
import {
  balanceAlertDue,
  balanceBand,
  checkPlacement,
  freezeTransition,
  isInFuture,
  isStale,
  parseSlot,
  readingApplies,
  thresholdsInverted,
} from "./sims.ts";

const D = "0123456789abcdef0123456789abcdef";
const active = { device_id: D, status: "active" };

describe("parseSlot", () => {
  it.each([
    ["0", 0],
    ["1", 1],
    [0, 0],
    [1, 1],
    ["2", undefined],
    [2, undefined],
    ["", undefined],
    [null, undefined],
    ["01", undefined],
  ])("%j → %j", (value, expected) => expect(parseSlot(value)).toBe(expected));
});

describe("checkPlacement (precedence: device not active, device full, slot occupied)", () => {
  const reason = (r: DomainError | null) => r?.reason ?? null;
  it.each([
    ["an empty active device", active, [], 0, undefined, null],
    ["a free slot next to another SIM", active, [{ sim_id: "a", subscription_slot: 0 }], 1, undefined, null],
    ["an occupied slot", active, [{ sim_id: "a", subscription_slot: 0 }], 0, undefined, "slot_occupied"],
    [
      "a full device",
      active,
      [
        { sim_id: "a", subscription_slot: 0 },
        { sim_id: "b", subscription_slot: 1 },
      ],
      1,
      undefined,
      "device_full",
    ],
    [
      "a frozen device, even when full",
      { device_id: D, status: "frozen" },
      [
        { sim_id: "a", subscription_slot: 0 },
        { sim_id: "b", subscription_slot: 1 },
      ],
      0,
      undefined,
      "device_not_active",
    ],
    ["the moved SIM's own slot", active, [{ sim_id: "a", subscription_slot: 0 }], 0, "a", null],
    [
      "a full device when the moved SIM is one of the two",
      active,
      [
        { sim_id: "a", subscription_slot: 0 },
        { sim_id: "b", subscription_slot: 1 },
      ],
      0,
      "a",
      null,
    ],
    [
      "the other SIM's slot on a full device, moving one of them",
      active,
      [
        { sim_id: "a", subscription_slot: 0 },
        { sim_id: "b", subscription_slot: 1 },
      ],
      1,
      "a",
      "slot_occupied",
    ],
  ])("%s", (_name, device, occupants, slot, moving, expected) => {
    expect(reason(checkPlacement(device, occupants, slot, moving))).toBe(expected);
  });
});

describe("readingApplies (an older reading never replaces a newer one)", () => {
  const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 12, 0, s));
  it.each([
    ["an unmeasured SIM", null, t(0), true],
    ["a newer reading", t(0), t(1), true],
    ["a reading at the same instant", t(1), t(1), true],
    ["an older reading", t(1), t(0), false],
  ])("%s", (_name, mirror, observed, expected) => expect(readingApplies(mirror, observed)).toBe(expected));
});

describe("isInFuture and isStale", () => {
  const now = new Date("2026-01-01T12:00:00Z");
  it.each([
    [0, false],
    [59_000, false],
    [61_000, true],
    [-3600_000, false],
  ])("observed %i ms after now is in the future: %s", (offset, expected) =>
    expect(isInFuture(new Date(now.getTime() + offset), now)).toBe(expected),
  );
  it.each([
    [null, false],
    [23 * 3600_000, false],
    [24 * 3600_000 + 1, true],
  ])("a reading %s ms old is stale: %s", (age, expected) =>
    expect(isStale(age === null ? null : new Date(now.getTime() - age), now)).toBe(expected),
  );
});

describe("balance bands and alerts", () => {
  it.each([
    [500, 1000, null, "low"],
    [1000, 1000, null, null],
    [5000, 1000, 4000, "high"],
    [4000, 1000, 4000, null],
    [500, null, null, null],
  ])("balance %i with low %j and high %j is in band %j", (balance, low, high, band) =>
    expect(balanceBand(balance, low, high)).toBe(band),
  );

  it.each([
    [null, "low", "low"],
    ["low", "low", null],
    ["high", "low", "low"],
    ["low", null, null],
    [null, "high", "high"],
    [null, null, null],
  ] as const)("from band %j to %j alerts %j", (previous, band, due) =>
    expect(balanceAlertDue(previous, band)).toBe(due),
  );
});

describe("freezeTransition", () => {
  const S = "11111111-1111-4111-8111-111111111111";
  it.each([
    ["active", "freeze", { to: "frozen", changed: true }],
    ["frozen", "freeze", { to: "frozen", changed: false }],
    ["frozen", "unfreeze", { to: "active", changed: true }],
    ["active", "unfreeze", { to: "active", changed: false }],
  ] as const)("%s + %s", (status, action, expected) => expect(freezeTransition(S, status, action)).toEqual(expected));

  it.each(["freeze", "unfreeze"] as const)("refuses to %s a retired SIM with sim_retired", (action) => {
    const r = freezeTransition(S, "retired", action);
    expect(r).toBeInstanceOf(DomainError);
    expect([(r as DomainError).code, (r as DomainError).reason]).toEqual(["conflict", "sim_retired"]);
    expect((r as DomainError).status).toBe("conflict");
  });
});

describe("thresholdsInverted", () => {
  it.each([
    [100, 50, true],
    [50, 100, false],
    [50, 50, false],
    [null, 10, false],
    [10, null, false],
  ])("low %j high %j → %s", (low, high, expected) => expect(thresholdsInverted(low, high)).toBe(expected));
});
