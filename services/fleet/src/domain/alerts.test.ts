import { describe, expect, it } from "vitest";
import { balanceOutOfBand, deviceSilent, simAbsent } from "./alerts.ts";

const now = new Date("2026-01-01T12:10:00Z");

describe("fleet's alerts", () => {
  it("keys a silence by the heartbeat it follows, so repeated checks of one silence dedupe", () => {
    const lastSeen = new Date("2026-01-01T12:03:00Z");
    const seen = (at: Date) => ({ device_id: "d1", label: "Shop", last_seen_at: at, silent_since: at });
    const a = deviceSilent(seen(lastSeen), now);
    const b = deviceSilent(seen(lastSeen), new Date(now.getTime() + 60_000));
    expect(a).toMatchObject({
      kind: "device_silent",
      severity: "critical",
      device_id: "d1",
      context: { silent_minutes: 7 },
    });
    expect(a.dedupe_key).toBe(b.dedupe_key);
    expect(deviceSilent(seen(new Date("2026-01-01T12:04:00Z")), now).dedupe_key).not.toBe(a.dedupe_key);
  });

  it("counts a handset that never sent a heartbeat as silent since its registration", () => {
    const registered = new Date("2026-01-01T12:02:00Z");
    const a = deviceSilent({ device_id: "d2", label: "New", last_seen_at: null, silent_since: registered }, now);
    expect(a).toMatchObject({
      message: "Device New has sent no heartbeat since it was registered 8 minutes ago",
      context: { last_seen_at: null, silent_minutes: 8 },
      dedupe_key: `device_silent:d2:${registered.toISOString()}`,
    });
  });

  it("keys an absence by when it began", () => {
    const since = new Date("2026-01-01T12:00:00Z");
    const a = simAbsent({ sim_id: "s1", msisdn: "670000000", device_id: "d1", absent_since: since }, now);
    expect(a).toMatchObject({ kind: "sim_absent", severity: "critical", sim_id: "s1", device_id: "d1" });
    expect(a.dedupe_key).toBe(`sim_absent:s1:${since.toISOString()}`);
  });

  it.each([
    ["low", "low_balance", "warning", "below"],
    ["high", "high_balance", "info", "above"],
  ] as const)("names a %s balance with its threshold", (band, kind, severity, word) => {
    const a = balanceOutOfBand({ sim_id: "s1", msisdn: "670000000", device_id: null }, band, 500, 1000, now, now);
    expect(a).toMatchObject({ kind, severity, sim_id: "s1", context: { balance: 500, threshold: 1000 } });
    expect(a.device_id).toBeUndefined();
    expect(a.message).toContain(word);
  });
});
