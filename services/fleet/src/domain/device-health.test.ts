import { describe, expect, it } from "vitest";
import { deriveIssues, isOnline, summarize, type DeviceHealthInput } from "./device-health.ts";

const now = new Date("2026-01-01T12:00:00Z");
const ago = (ms: number) => new Date(now.getTime() - ms);
const SIM = "sim-1";

function healthy(): Record<string, any> {
  return {
    app: { version: "1.2.0", ui: "open" },
    battery: { level: 80, charging: false },
    network: { type: "4G", connected: true, internet_reachable: true },
    permissions: {
      call_phone: true,
      read_phone_state: true,
      read_phone_numbers: true,
      receive_sms: true,
      read_sms: true,
      notifications: true,
    },
    accessibility: { enabled: true, running: true },
    background: { battery_exempt: true, service_running: true, time_limit_stops: 0 },
    polling: { wanted: true, consecutive_failures: 0, stuck_ticks: 0 },
    sms: { outbox_pending: 0, spool_insert_failures: 0 },
    recent_errors: [],
  };
}

const device = (o: Partial<DeviceHealthInput> = {}): DeviceHealthInput => ({
  last_seen_at: ago(30_000),
  health_reported_at: ago(30_000),
  report: healthy(),
  battery: 80,
  battery_exempt: true,
  heartbeat_sims: [{ sim_id: SIM, present: true }],
  assigned_sim_ids: [SIM],
  ...o,
});

const withReport = (change: (r: Record<string, any>) => void) => {
  const r = healthy();
  change(r);
  return device({ report: r });
};

describe("deriveIssues", () => {
  it("finds nothing on a healthy, recent heartbeat", () => {
    expect(deriveIssues(device(), now)).toEqual([]);
  });

  it.each<[string, DeviceHealthInput, string, string]>([
    ["never seen", device({ last_seen_at: null, health_reported_at: null, report: null }), "offline", "critical"],
    ["silent for more than 5 minutes", device({ last_seen_at: ago(5 * 60_000 + 1) }), "offline", "critical"],
    ["a heartbeat without a report", device({ report: null, health_reported_at: null }), "no_report", "warning"],
    ["accessibility disabled", withReport((r) => (r.accessibility.enabled = false)), "accessibility_off", "critical"],
    [
      "accessibility not running",
      withReport((r) => (r.accessibility.running = false)),
      "accessibility_off",
      "critical",
    ],
    [
      "SMS permission missing",
      withReport((r) => (r.permissions.receive_sms = false)),
      "permission_missing",
      "critical",
    ],
    [
      "notifications permission missing",
      withReport((r) => (r.permissions.notifications = false)),
      "permission_limited",
      "warning",
    ],
    [
      "battery at 15% not charging",
      withReport((r) => (r.battery = { level: 15, charging: false })),
      "battery_low",
      "warning",
    ],
    [
      "battery at 5% not charging",
      withReport((r) => (r.battery = { level: 5, charging: false })),
      "battery_low",
      "critical",
    ],
    [
      "battery optimisation on",
      withReport((r) => (r.background.battery_exempt = false)),
      "battery_optimised",
      "warning",
    ],
    [
      "background service stopped",
      withReport((r) => (r.background.service_running = false)),
      "service_stopped",
      "critical",
    ],
    ["time-limit stops", withReport((r) => (r.background.time_limit_stops = 2)), "time_limit_stops", "warning"],
    ["no network", withReport((r) => (r.network.connected = false)), "network_down", "critical"],
    ["no internet", withReport((r) => (r.network.internet_reachable = false)), "internet_unreachable", "critical"],
    ["polling switched off", withReport((r) => (r.polling.wanted = false)), "polling_off", "critical"],
    ["3 failed polls", withReport((r) => (r.polling.consecutive_failures = 3)), "polling_failing", "warning"],
    ["10 failed polls", withReport((r) => (r.polling.consecutive_failures = 10)), "polling_failing", "critical"],
    ["a stuck polling loop", withReport((r) => (r.polling.stuck_ticks = 4)), "polling_stuck", "warning"],
    [
      "SMS waiting 6 minutes",
      withReport((r) => (r.sms = { outbox_pending: 2, outbox_oldest_at: ago(6.5 * 60_000).toISOString() })),
      "sms_backlog",
      "warning",
    ],
    ["SMS spool failures", withReport((r) => (r.sms.spool_insert_failures = 1)), "sms_spool_failing", "warning"],
    ["the app's screen closed", withReport((r) => (r.app.ui = "closed")), "app_closed", "info"],
    [
      "recent errors",
      withReport((r) => (r.recent_errors = [{ at: now.toISOString(), message: "boom" }])),
      "recent_errors",
      "info",
    ],
    [
      "an assigned SIM reported absent",
      device({ heartbeat_sims: [{ sim_id: SIM, present: false }] }),
      "sim_absent",
      "critical",
    ],
    ["an assigned SIM not reported", device({ heartbeat_sims: [] }), "sim_unreported", "warning"],
  ])("derives one issue from %s", (_name, input, code, severity) => {
    expect(deriveIssues(input, now).map((i) => [i.code, i.severity])).toEqual([[code, severity]]);
  });

  it.each<[string, DeviceHealthInput]>([
    ["battery at 15% while charging", withReport((r) => (r.battery = { level: 15, charging: true }))],
    [
      "SMS pending for only a minute",
      withReport((r) => (r.sms = { outbox_pending: 2, outbox_oldest_at: ago(90_000).toISOString() })),
    ],
    [
      "a SIM the device does not hold reported absent",
      device({
        heartbeat_sims: [
          { sim_id: SIM, present: true },
          { sim_id: "other", present: false },
        ],
      }),
    ],
    ["silent for exactly 5 minutes", device({ last_seen_at: ago(5 * 60_000) })],
    ["a report without the optional groups", device({ report: {} })],
  ])("derives nothing from %s", (_name, input) => {
    expect(deriveIssues(input, now)).toEqual([]);
  });

  it("lists the worst first and keeps report issues of a device gone offline", () => {
    const input = withReport((r) => {
      r.app.ui = "closed";
      r.battery = { level: 15, charging: false };
      r.accessibility.enabled = false;
    });
    input.last_seen_at = ago(10 * 60_000);
    expect(deriveIssues(input, now).map((i) => i.code)).toEqual([
      "offline",
      "accessibility_off",
      "battery_low",
      "app_closed",
    ]);
  });
});

describe("summarize", () => {
  it.each([
    [[], { count: 0, worst: null }],
    [[{ code: "a", severity: "info", message: "" }], { count: 1, worst: "info" }],
    [
      [
        { code: "a", severity: "warning", message: "" },
        { code: "b", severity: "critical", message: "" },
        { code: "c", severity: "info", message: "" },
      ],
      { count: 3, worst: "critical" },
    ],
  ] as const)("%j", (issues, expected) => expect(summarize(issues as never)).toEqual(expected));
});

describe("isOnline", () => {
  it.each([
    [null, false],
    [60_000, true],
    [5 * 60_000, true],
    [5 * 60_000 + 1, false],
  ])("last seen %j ms ago → %s", (age, expected) =>
    expect(isOnline(age === null ? null : ago(age), now)).toBe(expected),
  );
});
