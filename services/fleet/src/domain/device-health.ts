import type { Severity } from "./vocabulary.ts";

// Health issues of a handset, derived from its latest heartbeat on each read (never
// stored): what is derived is always current with the clock and the thresholds below.
// Each rule reads one thing the handset reports; a group the app did not send yields no
// issue of that group (older apps send no report at all: `no_report`).

export interface HealthIssue {
  code: string;
  severity: Severity;
  message: string;
}

export interface HeartbeatSimReport {
  sim_id: string;
  present: boolean;
  signal?: number;
}

export interface DeviceHealthInput {
  last_seen_at: Date | null;
  /** Time of the latest heartbeat that carried a report; null when the latest had none. */
  health_reported_at: Date | null;
  report: Record<string, unknown> | null;
  battery: number | null;
  battery_exempt: boolean | null;
  heartbeat_sims: HeartbeatSimReport[] | null;
  /** SIMs assigned to the device in fleet. */
  assigned_sim_ids: string[];
}

/** Silence after which a device is offline (and its alert is due): the contract's 5 minutes. */
export const OFFLINE_AFTER_MS = 5 * 60_000;
export const BATTERY_WARNING_BELOW = 20;
export const BATTERY_CRITICAL_BELOW = 10;
export const POLL_FAILURES_WARNING = 3;
export const POLL_FAILURES_CRITICAL = 10;
/** An SMS waiting this long in the handset's outbox is a backlog. */
export const SMS_BACKLOG_AFTER_MS = 5 * 60_000;

const RANK: Record<Severity, number> = { critical: 3, warning: 2, info: 1 };

/** The permissions without which the handset cannot dial or forward proof. */
const VITAL_PERMISSIONS = ["call_phone", "read_phone_state", "receive_sms", "read_sms"] as const;
const USEFUL_PERMISSIONS = ["read_phone_numbers", "notifications"] as const;

type Group = Record<string, unknown>;

const group = (report: Record<string, unknown> | null, name: string): Group | undefined => {
  const g = report?.[name];
  return g && typeof g === "object" && !Array.isArray(g) ? (g as Group) : undefined;
};
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const date = (v: unknown): Date | undefined => {
  if (typeof v !== "string" && typeof v !== "number") return undefined;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? undefined : d;
};

export function deriveIssues(d: DeviceHealthInput, now: Date, offlineAfterMs = OFFLINE_AFTER_MS): HealthIssue[] {
  const issues: HealthIssue[] = [];
  const add = (code: string, severity: Severity, message: string) => issues.push({ code, severity, message });

  if (!d.last_seen_at) {
    add("offline", "critical", "The device has never sent a heartbeat");
    return issues;
  }
  const silentMs = now.getTime() - d.last_seen_at.getTime();
  if (silentMs > offlineAfterMs) {
    add("offline", "critical", `No heartbeat for ${Math.floor(silentMs / 60_000)} minutes`);
  }
  simIssues(d, add);
  const report = d.report;
  if (!report) {
    add("no_report", "warning", "The latest heartbeat carried no health report (app older than 1.1.0?)");
    batteryIssues(d.battery, undefined, add);
    if (d.battery_exempt === false)
      add("battery_optimised", "warning", "The app is not exempt from battery optimisation");
    return sortWorstFirst(issues);
  }
  reportIssues(report, d, d.health_reported_at ?? d.last_seen_at, add);
  return sortWorstFirst(issues);
}

type Add = (code: string, severity: Severity, message: string) => void;

/** What the latest health report says, group by group, in the order the board lists them. */
function reportIssues(report: Record<string, unknown>, d: DeviceHealthInput, reportedAt: Date, add: Add): void {
  accessIssues(report, add);
  const battery = group(report, "battery");
  batteryIssues(num(battery?.level) ?? d.battery, battery?.charging === true, add);
  backgroundIssues(group(report, "background"), d, add);
  networkIssues(group(report, "network"), add);
  const polling = group(report, "polling");
  if (polling) pollingIssues(polling, add);
  const sms = group(report, "sms");
  if (sms) smsIssues(sms, reportedAt, add);
  const app = group(report, "app");
  if (app?.ui === "closed") add("app_closed", "info", "The app's screen is closed");
  const recent = report.recent_errors;
  if (Array.isArray(recent) && recent.length)
    add("recent_errors", "info", `${recent.length} recent error(s) reported by the app`);
}

/** The accessibility service and the permissions: without them the handset cannot dial or forward proof. */
function accessIssues(report: Record<string, unknown>, add: Add): void {
  const accessibility = group(report, "accessibility");
  if (accessibility && (accessibility.enabled === false || accessibility.running === false)) {
    add("accessibility_off", "critical", "The accessibility service is off: USSD dialogs cannot be driven");
  }
  const permissions = group(report, "permissions");
  if (permissions) {
    const vital = VITAL_PERMISSIONS.filter((p) => permissions[p] === false);
    if (vital.length) add("permission_missing", "critical", `Permissions missing: ${vital.join(", ")}`);
    const useful = USEFUL_PERMISSIONS.filter((p) => permissions[p] === false);
    if (useful.length) add("permission_limited", "warning", `Permissions missing: ${useful.join(", ")}`);
  }
}

function backgroundIssues(background: Group | undefined, d: DeviceHealthInput, add: Add): void {
  const exempt = typeof background?.battery_exempt === "boolean" ? background.battery_exempt : d.battery_exempt;
  if (exempt === false) add("battery_optimised", "warning", "The app is not exempt from battery optimisation");
  if (background?.service_running === false)
    add("service_stopped", "critical", "The background service is not running");
  const stops = num(background?.time_limit_stops);
  if (stops && stops > 0)
    add("time_limit_stops", "warning", `Android stopped the service ${stops} time(s) for its time limit`);
}

function networkIssues(network: Group | undefined, add: Add): void {
  if (network?.connected === false) add("network_down", "critical", "The handset has no network connection");
  else if (network?.internet_reachable === false)
    add("internet_unreachable", "critical", "The handset cannot reach the internet");
}

function smsIssues(sms: Group, reportedAt: Date, add: Add): void {
  const oldest = date(sms.outbox_oldest_at);
  if ((num(sms.outbox_pending) ?? 0) > 0 && oldest && reportedAt.getTime() - oldest.getTime() > SMS_BACKLOG_AFTER_MS) {
    add(
      "sms_backlog",
      "warning",
      `${num(sms.outbox_pending)} SMS waiting to be forwarded since ${oldest.toISOString()}`,
    );
  }
  const spoolFailures = num(sms.spool_insert_failures);
  if (spoolFailures && spoolFailures > 0)
    add("sms_spool_failing", "warning", `${spoolFailures} SMS could not be spooled`);
}

function simIssues(d: DeviceHealthInput, add: (c: string, s: Severity, m: string) => void): void {
  if (!d.heartbeat_sims) return;
  const seen = new Map(d.heartbeat_sims.map((s) => [s.sim_id, s]));
  const absent = d.assigned_sim_ids.filter((id) => seen.get(id)?.present === false);
  if (absent.length) add("sim_absent", "critical", `SIM(s) reported absent: ${absent.join(", ")}`);
  const unreported = d.assigned_sim_ids.filter((id) => !seen.has(id));
  if (unreported.length)
    add("sim_unreported", "warning", `SIM(s) assigned here but not seen by the handset: ${unreported.join(", ")}`);
}

function batteryIssues(
  level: number | null | undefined,
  charging: boolean | undefined,
  add: (c: string, s: Severity, m: string) => void,
): void {
  if (level === null || level === undefined || charging) return;
  if (level < BATTERY_CRITICAL_BELOW) add("battery_low", "critical", `Battery at ${level}% and not charging`);
  else if (level < BATTERY_WARNING_BELOW) add("battery_low", "warning", `Battery at ${level}% and not charging`);
}

function pollingIssues(polling: Group, add: (c: string, s: Severity, m: string) => void): void {
  if (polling.wanted === false) add("polling_off", "critical", "Polling for operations is switched off");
  const failures = num(polling.consecutive_failures) ?? 0;
  if (failures >= POLL_FAILURES_CRITICAL) add("polling_failing", "critical", `${failures} consecutive polls failed`);
  else if (failures >= POLL_FAILURES_WARNING) add("polling_failing", "warning", `${failures} consecutive polls failed`);
  const stuck = num(polling.stuck_ticks) ?? 0;
  if (stuck > 0) add("polling_stuck", "warning", `The polling loop was stuck for ${stuck} tick(s)`);
}

function sortWorstFirst(issues: HealthIssue[]): HealthIssue[] {
  return issues
    .map((issue, i) => ({ issue, i }))
    .sort((a, b) => RANK[b.issue.severity] - RANK[a.issue.severity] || a.i - b.i)
    .map((x) => x.issue);
}

export function summarize(issues: readonly HealthIssue[]): { count: number; worst: Severity | null } {
  let worst: Severity | null = null;
  for (const i of issues) if (!worst || RANK[i.severity] > RANK[worst]) worst = i.severity;
  return { count: issues.length, worst };
}

export function isOnline(lastSeenAt: Date | null, now: Date, offlineAfterMs = OFFLINE_AFTER_MS): boolean {
  return lastSeenAt !== null && now.getTime() - lastSeenAt.getTime() <= offlineAfterMs;
}
