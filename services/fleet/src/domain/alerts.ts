import type { Severity } from "./vocabulary.ts";

// The alerts fleet raises itself. Each is published as `AlertRaised` on the `alerts` topic
// like any other service's, and stored as a notification by fleet's consumer. The dedupe
// key names one occurrence of a condition, so a repeat never notifies twice.

export interface Alert {
  kind: string;
  severity: Severity;
  message: string;
  sim_id?: string;
  device_id?: string;
  context: Record<string, string | number | boolean | null>;
  raised_at: Date;
  dedupe_key: string;
}

/** One alert per silence: keyed by the heartbeat after which the device went quiet. */
/**
 * A handset silent past the limit. `silent_since` is its last heartbeat, or its registration
 * when it never sent one (`last_seen_at` null: a handset holding a SIM that never came up).
 */
export function deviceSilent(
  d: { device_id: string; label: string; last_seen_at: Date | null; silent_since: Date },
  now: Date,
): Alert {
  const minutes = Math.floor((now.getTime() - d.silent_since.getTime()) / 60_000);
  return {
    kind: "device_silent",
    severity: "critical",
    message:
      d.last_seen_at === null
        ? `Device ${d.label} has sent no heartbeat since it was registered ${minutes} minutes ago`
        : `Device ${d.label} has sent no heartbeat for ${minutes} minutes`,
    device_id: d.device_id,
    context: { label: d.label, last_seen_at: d.last_seen_at?.toISOString() ?? null, silent_minutes: minutes },
    raised_at: now,
    dedupe_key: `device_silent:${d.device_id}:${d.silent_since.toISOString()}`,
  };
}

/** One alert per absence: keyed by the heartbeat that first reported the SIM missing. */
export function simAbsent(
  s: { sim_id: string; msisdn: string; device_id: string; absent_since: Date },
  now: Date,
): Alert {
  return {
    kind: "sim_absent",
    severity: "critical",
    message: `SIM ${s.msisdn} is reported absent from its handset`,
    sim_id: s.sim_id,
    device_id: s.device_id,
    context: { msisdn: s.msisdn, absent_since: s.absent_since.toISOString() },
    raised_at: now,
    dedupe_key: `sim_absent:${s.sim_id}:${s.absent_since.toISOString()}`,
  };
}

/** A reading that entered the low (or high) band; keyed by the reading's time. */
export function balanceOutOfBand(
  s: { sim_id: string; msisdn: string; device_id: string | null },
  band: "low" | "high",
  balance: number,
  threshold: number,
  observedAt: Date,
  now: Date,
): Alert {
  const low = band === "low";
  return {
    kind: low ? "low_balance" : "high_balance",
    severity: low ? "warning" : "info",
    message: low
      ? `SIM ${s.msisdn} balance ${balance} FCFA is below its low threshold of ${threshold} FCFA`
      : `SIM ${s.msisdn} balance ${balance} FCFA is above its high threshold of ${threshold} FCFA`,
    sim_id: s.sim_id,
    device_id: s.device_id ?? undefined,
    context: { msisdn: s.msisdn, balance, threshold, observed_at: observedAt.toISOString() },
    raised_at: now,
    dedupe_key: `${low ? "low_balance" : "high_balance"}:${s.sim_id}:${observedAt.toISOString()}`,
  };
}

/**
 * A login's failed sign-ins from every address together reached the gateway's ceiling: one
 * alert per login per hour (the hour of `now`, UTC).
 */
export function signInAttack(login: string, now: Date): Alert {
  const key = login.trim().toLowerCase();
  return {
    kind: "sign_in_attack",
    severity: "critical",
    message: `Sign-ins for login ${key} are failing from many places: it is under attack, and is throttled`,
    context: { login: key },
    raised_at: now,
    dedupe_key: `sign_in_attack:${key}:${now.toISOString().slice(0, 13)}`,
  };
}
