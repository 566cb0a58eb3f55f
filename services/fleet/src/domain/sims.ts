import type { DomainError, Violation } from "@transferops/kit/pure";
import { PIN_PATTERN } from "./pin-crypto.ts";
import { deviceFull, deviceNotActive, invalid, simRetired, slotOccupied } from "./reasons.ts";
import {
  BALANCE_SOURCES,
  isBalanceSource,
  isOperator,
  isSimStatus,
  MSISDN_PATTERN,
  OPERATORS,
  SIM_STATUSES,
  type DeviceStatus,
  type SimStatus,
} from "./vocabulary.ts";

// SIM rules: where a SIM may be placed, which balance reading wins, when a balance
// alerts, and how freeze and unfreeze move the status (state diagram in sims.md).

export const SLOTS = [0, 1] as const;
export const MAX_SIMS_PER_DEVICE = SLOTS.length;

/** Register and assign bodies carry the slot as "0"/"1"; numbers are accepted too. */
export function parseSlot(value: unknown): 0 | 1 | undefined {
  if (value === 0 || value === "0") return 0;
  if (value === 1 || value === "1") return 1;
  return undefined;
}

export interface Occupant {
  sim_id: string;
  subscription_slot: number;
}

/**
 * Whether a SIM may go into a device's slot. `occupants` are the SIMs the device holds
 * now; the SIM being moved is left out of the check (it may move between slots of its own
 * device). Order: device not active, device full, slot occupied.
 */
export function checkPlacement(
  device: { device_id: string; status: DeviceStatus | string },
  occupants: readonly Occupant[],
  slot: number,
  movingSimId?: string,
): DomainError | null {
  if (device.status !== "active") return deviceNotActive(device.device_id, device.status);
  const others = occupants.filter((o) => o.sim_id !== movingSimId);
  if (others.length >= MAX_SIMS_PER_DEVICE)
    return deviceFull(
      device.device_id,
      others.map((o) => o.sim_id),
    );
  const inSlot = others.find((o) => o.subscription_slot === slot);
  if (inSlot) return slotOccupied(device.device_id, slot, inSlot.sim_id);
  return null;
}

/**
 * An older reading never replaces a newer one: a reading applies when the SIM is
 * unmeasured or the reading was observed at or after the mirror's time.
 */
export function readingApplies(mirrorUpdatedAt: Date | null, observedAt: Date): boolean {
  return mirrorUpdatedAt === null || observedAt.getTime() >= mirrorUpdatedAt.getTime();
}

/** Clock skew tolerated on `observed_at` before a reading counts as "in the future". */
export const FUTURE_TOLERANCE_MS = 60_000;

export function isInFuture(observedAt: Date, now: Date): boolean {
  return observedAt.getTime() > now.getTime() + FUTURE_TOLERANCE_MS;
}

export type BalanceBand = "low" | "high" | null;

/** Where a balance sits against the SIM's thresholds: below low, above high, or neither. */
export function balanceBand(balance: number, low: number | null, high: number | null): BalanceBand {
  if (low !== null && balance < low) return "low";
  if (high !== null && balance > high) return "high";
  return null;
}

/**
 * A balance alert is raised when a reading enters the low (or high) band from anywhere
 * else; staying in the band raises nothing more, leaving it re-arms the alert.
 */
export function balanceAlertDue(previousBand: BalanceBand, band: BalanceBand): BalanceBand {
  return band !== null && band !== previousBand ? band : null;
}

export type FreezeAction = "freeze" | "unfreeze";

/**
 * Freeze: active → frozen; unfreeze: frozen → active. Repeating either is a no-op
 * answered with the SIM. A retired SIM leaves retirement only through the update route.
 */
export function freezeTransition(
  simId: string,
  status: SimStatus,
  action: FreezeAction,
): { to: SimStatus; changed: boolean } | DomainError {
  if (status === "retired") return simRetired(simId);
  const to: SimStatus = action === "freeze" ? "frozen" : "active";
  return { to, changed: status !== to };
}

export function thresholdsInverted(low: number | null, high: number | null): boolean {
  return low !== null && high !== null && low > high;
}

/** A measured balance older than 24 hours is stale (operation creation refuses it). */
export function isStale(balanceUpdatedAt: Date | null, now: Date, staleAfterMs = 24 * 3600_000): boolean {
  return balanceUpdatedAt !== null && now.getTime() - balanceUpdatedAt.getTime() > staleAfterMs;
}

/** The body of a SIM creation, as the handler receives it. */
export interface NewSim {
  operator: string;
  msisdn: string;
  pin: string;
  deviceId?: string;
  subscriptionSlot?: number;
}

/** Validation of a SIM creation: every problem of the body, in field order. */
export function checkNewSim(req: NewSim): Violation[] {
  const problems: Violation[] = [];
  if (!isOperator(req.operator))
    problems.push({ field: "operator", message: `must be one of ${OPERATORS.join(", ")}` });
  if (!MSISDN_PATTERN.test(req.msisdn)) problems.push({ field: "msisdn", message: "must be 9 digits (local format)" });
  if (!PIN_PATTERN.test(req.pin)) problems.push({ field: "pin", message: "must be 4 to 8 digits" });
  if ((req.deviceId === undefined) !== (req.subscriptionSlot === undefined)) {
    problems.push({ field: "device_id", message: "device_id and subscription_slot must be given together" });
  }
  if (req.subscriptionSlot !== undefined && parseSlot(req.subscriptionSlot) === undefined) {
    problems.push({ field: "subscription_slot", message: "must be 0 or 1" });
  }
  return problems;
}

/**
 * Validation of a balance reading, the same whichever way it comes (the API key's route
 * or a proven operator message): a balance of at least 0, not observed in the future, a
 * known source.
 */
export function checkReading(balance: bigint, observedAt: Date, source: string, now: Date): Violation[] {
  const problems: Violation[] = [];
  if (balance < 0n) problems.push({ field: "balance", message: "must be at least 0" });
  if (isInFuture(observedAt, now)) problems.push({ field: "observed_at", message: "must not be in the future" });
  if (!isBalanceSource(source))
    problems.push({ field: "source", message: `must be one of ${BALANCE_SOURCES.join(", ")}` });
  return problems;
}

/** A patch of one threshold: `set` says the field was sent; absent `value` with `set` clears it. */
export interface ThresholdPatch {
  set: boolean;
  value?: bigint;
}

export interface SimPatch {
  status?: string;
  low: ThresholdPatch;
  high: ThresholdPatch;
}

/** Validation of the body of a SIM update, before the SIM is read. */
export function checkSimPatch(patch: SimPatch): Violation[] {
  const problems: Violation[] = [];
  if (patch.status !== undefined && !isSimStatus(patch.status))
    problems.push({ field: "status", message: `must be one of ${SIM_STATUSES.join(", ")}` });
  for (const [field, t] of [
    ["low_balance_threshold", patch.low],
    ["high_balance_threshold", patch.high],
  ] as const) {
    if (t.value !== undefined && t.value < 0n) problems.push({ field, message: "must be at least 0" });
  }
  return problems;
}

/**
 * The thresholds after a patch: a field not sent keeps its value, a field sent empty
 * clears it. The pair is refused when low ends above high.
 */
export function patchThresholds(
  current: { low: number | null; high: number | null },
  patch: SimPatch,
): { low: number | null; high: number | null } | DomainError {
  const apply = (t: ThresholdPatch, was: number | null) =>
    t.set ? (t.value === undefined ? null : Number(t.value)) : was;
  const low = apply(patch.low, current.low);
  const high = apply(patch.high, current.high);
  if (thresholdsInverted(low, high)) {
    return invalid([{ field: "low_balance_threshold", message: "must not exceed high_balance_threshold" }], {
      low_balance_threshold: low,
      high_balance_threshold: high,
    });
  }
  return { low, high };
}
