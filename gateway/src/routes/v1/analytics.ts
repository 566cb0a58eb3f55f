import { z } from "zod";
import {
  AnalyticsReportSchema,
  UnprovenByHandsetReportSchema,
  type UnprovenByHandsetReport,
} from "@transferops/kit/gen/transferops/analytics/v1/analytics_pb";
import { toContractJson } from "../../http/json.ts";
import { ok, queryBool, queryInt, route, type Route } from "../../http/route.ts";
import { reasonsOf } from "../../http/reasons.ts";
import { ANALYTICS } from "../../http/service-reasons.ts";

const windowQuery = z.object({
  days: queryInt(1, 365).optional(),
  from: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, "must be YYYY-MM-DD")
    .optional(),
  to: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, "must be YYYY-MM-DD")
    .optional(),
  all: queryBool().optional(),
});
type WindowQuery = z.infer<typeof windowQuery>;
const windowOf = (q: WindowQuery) => ({ days: q.days ?? 0, from: q.from ?? "", to: q.to ?? "", all: q.all ?? false });

const count = z.number().int().min(0);
const nullableNumber = z.number().nullable();
const day = z.string().describe("YYYY-MM-DD, local (UTC+1)");

const analyticsSchema = z.object({
  fleet: z.boolean(),
  since: z.string().datetime().nullable(),
  until: z.string().datetime().nullable(),
  money: z.object({
    sent_xaf: count,
    transfers: count,
    median_transfer: count,
    largest_transfer: count,
    eur_taken: z.number(),
    received_xaf: count,
    realised_rate: nullableNumber,
    fees_xaf: count,
    fees_known_for: count,
    at_risk_xaf: count,
    at_risk_count: count,
    lost_xaf: count,
    lost_count: count,
  }),
  activity: z.object({
    operations: count,
    transfers: count,
    balance_checks: count,
    active_sims: count,
    active_agents: count,
    daily: z.array(
      z.object({
        day,
        operations: count,
        transfers: count,
        balance_checks: count,
        value_xaf: count,
        confirmed: count,
        auto_confirmed: count,
        failed: count,
        unproven: count,
      }),
    ),
    by_weekday: z.array(z.object({ weekday: z.number().int().min(1).max(7), operations: count })),
    by_hour: z.array(
      z.object({ weekday: z.number().int().min(1).max(7), hour: z.number().int().min(0).max(23), operations: count }),
    ),
    by_agent: z.array(z.object({ agent_id: z.string().uuid(), name: z.string(), operations: count, value_xaf: count })),
  }),
  reliability: z.object({
    confirmed: count,
    auto_confirmed: count,
    auto_confirm_rate: nullableNumber,
    settled_by_hand: count,
    failed: count,
    unproven: count,
    proof_delay_median_s: nullableNumber,
    proof_delay_p90_s: nullableNumber,
    total_messages: count,
    ambiguous_messages: count,
    collision_rate: nullableNumber,
    thresholds: z.object({ evidence_window_s: count, late_evidence_s: count }),
    by_status: z.record(z.string(), count),
  }),
  load: z.object({
    unproven_waiting: count,
    messages_waiting: count,
    oldest_unproven_hours: nullableNumber,
    oldest_message_hours: nullableNumber,
    dismissed: count,
    settled: count,
    sims_unmeasured: count,
    sims_stale: count,
    sims_frozen: count,
    sims_unassigned: count,
  }),
  previous: z.object({
    sent_xaf: count,
    transfers: count,
    confirmed: count,
    auto_confirmed: count,
    since: z.string().datetime().nullable(),
    until: z.string().datetime().nullable(),
    median_transfer: count,
    largest_transfer: count,
    realised_rate: nullableNumber,
  }),
});

const analyticsExample = {
  fleet: true,
  since: "2026-11-15T23:00:00.000Z",
  until: "2026-11-22T23:00:00.000Z",
  money: {
    sent_xaf: 1250000,
    transfers: 14,
    median_transfer: 75000,
    largest_transfer: 250000,
    eur_taken: 1905.5,
    received_xaf: 1250000,
    realised_rate: 656,
    fees_xaf: 9800,
    fees_known_for: 12,
    at_risk_xaf: 50000,
    at_risk_count: 1,
    lost_xaf: 20000,
    lost_count: 1,
  },
  activity: {
    operations: 19,
    transfers: 16,
    balance_checks: 3,
    active_sims: 3,
    active_agents: 2,
    daily: [
      {
        day: "2026-11-16",
        operations: 4,
        transfers: 3,
        balance_checks: 1,
        value_xaf: 200000,
        confirmed: 4,
        auto_confirmed: 3,
        failed: 0,
        unproven: 0,
      },
    ],
    by_weekday: [{ weekday: 1, operations: 4 }],
    by_hour: [{ weekday: 1, hour: 9, operations: 2 }],
    by_agent: [
      { agent_id: "9b2f4c1e-3d5a-4e6f-8a7b-1c2d3e4f5a6b", name: "Awa Ngono", operations: 12, value_xaf: 800000 },
    ],
  },
  reliability: {
    confirmed: 17,
    auto_confirmed: 15,
    auto_confirm_rate: 0.8824,
    settled_by_hand: 2,
    failed: 1,
    unproven: 1,
    proof_delay_median_s: 42,
    proof_delay_p90_s: 130,
    total_messages: 22,
    ambiguous_messages: 1,
    collision_rate: 0.0455,
    thresholds: { evidence_window_s: 600, late_evidence_s: 7200 },
    by_status: { confirmed: 17, failed: 1, no_evidence: 1 },
  },
  load: {
    unproven_waiting: 1,
    messages_waiting: 2,
    oldest_unproven_hours: 5.25,
    oldest_message_hours: 30.5,
    dismissed: 4,
    settled: 9,
    sims_unmeasured: 0,
    sims_stale: 1,
    sims_frozen: 0,
    sims_unassigned: 1,
  },
  previous: {
    sent_xaf: 980000,
    transfers: 11,
    confirmed: 13,
    auto_confirmed: 12,
    since: "2026-11-08T23:00:00.000Z",
    until: "2026-11-15T23:00:00.000Z",
    median_transfer: 60000,
    largest_transfer: 200000,
    realised_rate: 655.96,
  },
};

const handsetsSchema = z.object({
  fleet: z.boolean(),
  since: z.string().datetime().nullable(),
  until: z.string().datetime().nullable(),
  handsets: z.array(
    z.object({
      device_id: z.string().nullable(),
      label: z.string(),
      dialled: count,
      unproven: count,
      unproven_xaf: count,
      waiting: count,
      waiting_xaf: count,
      settled_arrived: count,
      settled_not_arrived: count,
      unproven_rate: z.number().min(0).max(1),
      oldest_waiting_hours: nullableNumber,
    }),
  ),
});

/** The report as the contract shows it: a deleted device is null, as on an operation, not the wire's "". */
export function handsetReportJson(report: UnprovenByHandsetReport): Record<string, unknown> {
  const json = toContractJson(UnprovenByHandsetReportSchema, report);
  const handsets = (json.handsets as { device_id: string }[]).map((h) => ({ ...h, device_id: h.device_id || null }));
  return { ...json, handsets };
}

const WINDOW_RULES =
  "Window: local calendar days in UTC+1 (Africa/Douala). `days` 1 to 365 (default 7; 1 is today) ending at the " +
  "coming midnight; `from`/`to` (YYYY-MM-DD, inclusive; `from` wins over `days`; `to` alone ends a `days`-long " +
  "window on that day; `from` alone runs to today); `all=true` (without from/to) reaches every operation. " +
  "A reversed range or one starting after today is 422. Operations count on the local day they were created; " +
  "messages on the day they were received; intake transactions on their transaction date. An agent sees its own " +
  "operations (and the messages and SIMs of the SIMs they ran on); supervisors and admins the fleet.";

// invalid_request: the gateway's own validation of the query (a reason of no service's table).
const windowReasons = ["invalid_request", ...reasonsOf(ANALYTICS, "reversed_range", "future_range", "invalid_window")];

/** Analytics: the report and the unproven-by-handset report, both read from analytics' read model. */
export const analyticsRoutes: Route[] = [
  route({
    operationId: "getAnalytics",
    method: "get",
    path: "/v1/analytics",
    tag: "Analytics",
    summary: "Volume and reliability over a window: money, activity, reliability, load and the previous window",
    description:
      `${WINDOW_RULES}\n\n` +
      "Transfers are deposits, withdrawals and float deposits; balance checks are balance and mini-statement " +
      "queries. `money.transfers`, `median_transfer` (percentile, halves rounded) and `largest_transfer` cover " +
      "confirmed transfers. `eur_taken`/`received_xaf` sum the intake transactions of the window (cancelled ones " +
      "excluded); `realised_rate` = received XAF per EUR over those with a known EUR amount, null for an agent. " +
      "`at_risk` = transfers in no_evidence; `lost` = transfers the operator refused (`ussd_failed`) or a person " +
      "settled as never arrived. Reliability counts every operation: `auto_confirmed` = confirmed by an operator " +
      "message with nobody attaching, settling or arbitrating; `settled_by_hand` = decided by a board settle or " +
      "an admin arbitration; proof delay runs from the message's operator timestamp to its pairing. `by_hour` " +
      "lists the non-empty cells; `by_weekday` all seven days; the daily series every day (or, past 120 days, " +
      "every week dated by its Monday). `load` is never windowed. `previous` is the window of the same number " +
      "of days just before this one (with `all`, its figures are zero and its bounds null). Figures come from " +
      "analytics' projection of the events, a few seconds behind the services (lag in /v1/health).",
    auth: ["session"],
    query: windowQuery,
    responses: {
      200: { description: "The report", schema: analyticsSchema, example: analyticsExample },
      401: { description: "Not signed in", reasons: reasonsOf(ANALYTICS, "not_signed_in") },
      403: { description: "Inactive agent", reasons: reasonsOf(ANALYTICS, "agent_inactive") },
      422: {
        description: "Invalid window: days outside 1..365, malformed date, reversed or future range",
        reasons: windowReasons,
      },
    },
    async handle({ caller, query, services }) {
      const res = await services.analytics.getAnalytics({ caller, window: windowOf(query) });
      return ok(toContractJson(AnalyticsReportSchema, res.report!));
    },
  }),
  route({
    operationId: "getUnprovenByHandset",
    method: "get",
    path: "/v1/analytics/unproven-by-handset",
    tag: "Analytics",
    summary: "Transfers that dialled and whose confirming message never arrived, grouped by handset",
    description:
      `${WINDOW_RULES}\n\n` +
      "Per handset (the device that held the SIM when the operation was created; `device_id` null once that " +
      "device is deleted): `dialled` transfers of the window that finished dialling, and of those the `unproven` " +
      "ones no operator message confirmed: still `waiting` in no_evidence, or settled by a person " +
      "(`settled_arrived`, `settled_not_arrived`). Amounts in FCFA; `unproven_rate` = unproven / dialled; " +
      "`oldest_waiting_hours` from when the oldest waiting one finished dialling. Only handsets with at least one " +
      "unproven transfer, most unproven first.",
    auth: ["session"],
    query: windowQuery,
    responses: {
      200: {
        description: "Handsets with unproven transfers",
        schema: handsetsSchema,
        example: {
          fleet: true,
          since: "2026-11-15T23:00:00.000Z",
          until: "2026-11-22T23:00:00.000Z",
          handsets: [
            {
              device_id: "a1b2c3d4e5f60718",
              label: "Akwa counter 2",
              dialled: 40,
              unproven: 3,
              unproven_xaf: 150000,
              waiting: 1,
              waiting_xaf: 50000,
              settled_arrived: 1,
              settled_not_arrived: 1,
              unproven_rate: 0.075,
              oldest_waiting_hours: 26.5,
            },
          ],
        },
      },
      401: { description: "Not signed in", reasons: reasonsOf(ANALYTICS, "not_signed_in") },
      403: { description: "Inactive agent", reasons: reasonsOf(ANALYTICS, "agent_inactive") },
      422: { description: "Invalid window", reasons: windowReasons },
    },
    async handle({ caller, query, services }) {
      const res = await services.analytics.getUnprovenByHandset({ caller, window: windowOf(query) });
      return ok(handsetReportJson(res.report!));
    },
  }),
];
