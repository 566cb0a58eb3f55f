import { useState } from "preact/hooks";
import { api, call } from "../api.ts";
import { lang, t } from "../i18n.ts";
import { day, decimal, fcfa, status, today } from "../format.ts";
import type { Analytics as Report } from "../types.ts";
import { Columns, Figure, Rows } from "../chart.tsx";
import { Field, ListHead, Table, useLiveList } from "../ui.tsx";

/** A window's `until` is the midnight after its last day (exclusive): the day shown is the one before. */
const lastDay = (until: string | null | undefined) => (until ? new Date(Date.parse(until) - 1).toISOString() : until);

// The analytics route's blocks in pictures, each chart beside the table of its figures
// (the table is the source of truth; the chart is aria-hidden). The window controls are
// the route's (`days`, `from`/`to`, `all`); the previous window is the route's own.
// An agent sees its own work, a supervisor and an admin the fleet.
type Query = { days?: number; from?: string; to?: string; all?: "true" };

const locale = () => (lang() === "fr" ? "fr-CM" : "en-GB");
const dayLabel = (day: string) =>
  new Intl.DateTimeFormat(locale(), { timeZone: "UTC", day: "numeric", month: "short" }).format(Date.parse(day));
const weekday = (n: number) =>
  new Intl.DateTimeFormat(locale(), { timeZone: "UTC", weekday: "long" }).format(Date.UTC(2024, 0, n));
const seconds = (s: number | null) => (s === null ? "—" : s < 120 ? `${Math.round(s)} s` : `${Math.round(s / 60)} min`);
const change = (now: number, before: number) =>
  before === 0 ? "—" : `${now >= before ? "+" : ""}${Math.round(((now - before) / before) * 100)} %`;

export function Analytics() {
  const [query, setQuery] = useState<Query>({ days: 7 });
  const list = useLiveList<Report>(
    () => call(() => api.GET("/v1/analytics", { params: { query } })).then((r) => (r.data ? { data: [r.data] } : r)),
    () => "report",
    ["operation"],
    [JSON.stringify(query)],
  );
  const r = list.rows[0];
  return (
    <section>
      <h2>{t("an.title")}</h2>
      <Window query={query} onChange={setQuery} />
      <ListHead list={list} />
      {r && <Blocks r={r} />}
    </section>
  );
}

function Window(props: { query: Query; onChange: (q: Query) => void }) {
  const [days, setDays] = useState(String(props.query.days ?? 7));
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [all, setAll] = useState(false);
  return (
    <form
      class="inline"
      aria-label={t("an.window")}
      onSubmit={(e) => {
        e.preventDefault();
        props.onChange(
          all
            ? { all: "true" }
            : from
              ? { from, ...(to ? { to } : {}) }
              : { days: Number(days), ...(to ? { to } : {}) },
        );
      }}
    >
      <Field label={t("an.window")}>
        <select value={days} disabled={all || !!from} onChange={(e) => setDays(e.currentTarget.value)}>
          {[1, 7, 30, 90, 365].map((n) => (
            <option key={n} value={n}>
              {n === 1 ? t("an.today") : t("an.days", { n })}
            </option>
          ))}
        </select>
      </Field>
      <Field label={t("an.from")}>
        <input type="date" value={from} max={today()} disabled={all} onChange={(e) => setFrom(e.currentTarget.value)} />
      </Field>
      <Field label={t("an.to")}>
        <input type="date" value={to} max={today()} disabled={all} onChange={(e) => setTo(e.currentTarget.value)} />
      </Field>
      <label class="check">
        <input type="checkbox" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} />
        {t("an.all")}
      </label>
      <button type="submit" class="primary">
        {t("an.show")}
      </button>
    </form>
  );
}

function Blocks({ r }: { r: Report }) {
  return (
    <>
      <Summary r={r} />
      <div class="figures">
        <CompareFigure r={r} />
        <DailyFigure r={r} />
        <HourFigure r={r} />
        <WeekdayFigure r={r} />
        <StatusFigure r={r} />
        <DelayFigure r={r} />
        <AgentFigure r={r} />
      </div>
    </>
  );
}

/** Whose figures, over which span, and what the money came to. */
function Summary({ r }: { r: Report }) {
  const { money } = r;
  return (
    <>
      <p>
        {r.fleet ? t("an.fleet") : t("an.own")} ·{" "}
        {r.since ? t("an.span", { since: day(r.since), until: day(lastDay(r.until)) }) : t("an.all")}
      </p>
      <dl class="facts">
        <dt>{t("an.fees")}</dt>
        <dd>{t("an.feesOf", { fees: fcfa(money.fees_xaf), n: money.fees_known_for })}</dd>
        <dt>{t("an.atRisk")}</dt>
        <dd>{t("an.countOf", { n: money.at_risk_count, xaf: fcfa(money.at_risk_xaf) })}</dd>
        <dt>{t("an.lost")}</dt>
        <dd>{t("an.countOf", { n: money.lost_count, xaf: fcfa(money.lost_xaf) })}</dd>
        <dt>{t("an.received")}</dt>
        <dd>
          {fcfa(money.received_xaf)}
          {money.realised_rate !== null && <> · {t("an.rate", { rate: decimal(money.realised_rate) })}</>}
        </dd>
      </dl>
    </>
  );
}

/** The figures against the span before. */
function CompareFigure({ r }: { r: Report }) {
  const { money, reliability: rel, previous: prev } = r;
  const compared: [string, number, number, (n: number) => string][] = [
    [t("an.sent"), money.sent_xaf, prev.sent_xaf, fcfa],
    [t("an.transfers"), money.transfers, prev.transfers, String],
    [t("an.confirmed"), rel.confirmed, prev.confirmed, String],
    [t("an.autoConfirmed"), rel.auto_confirmed, prev.auto_confirmed, String],
    [t("an.medianTransfer"), money.median_transfer, prev.median_transfer, fcfa],
    [t("an.largest"), money.largest_transfer, prev.largest_transfer, fcfa],
  ];
  return (
    <Figure
      title={t("an.compare", {
        since: day(prev.since),
        until: day(lastDay(prev.until)),
      })}
    >
      <Rows bars={compared.slice(1, 4).map(([label, now, before]) => ({ label, value: now, previous: before }))} />
      <Table
        caption={t("an.compareTable")}
        columns={["", { num: t("an.now") }, { num: t("an.before") }, { num: t("an.change") }]}
      >
        {compared.map(([label, now, before, f]) => (
          <tr key={label}>
            <th scope="row">{label}</th>
            <td class="num">{f(now)}</td>
            <td class="num">{f(before)}</td>
            <td class="num">{change(now, before)}</td>
          </tr>
        ))}
      </Table>
    </Figure>
  );
}

/** Operations by day (by week over a long span). */
function DailyFigure({ r }: { r: Report }) {
  const daily = r.activity.daily;
  const weekly = daily.length > 1 && Date.parse(daily[1]!.day) - Date.parse(daily[0]!.day) > 2 * 86_400_000;
  return (
    <Figure title={weekly ? t("an.weekly") : t("an.daily")}>
      <Columns bars={daily.map((d) => ({ label: dayLabel(d.day), value: d.value_xaf }))} />
      <Table
        tall
        caption={weekly ? t("an.weekly") : t("an.daily")}
        columns={[
          weekly ? t("an.weekOf") : t("money.day"),
          { num: t("an.operations") },
          { num: t("an.transfers") },
          { num: t("an.value") },
          { num: t("an.confirmed") },
          { num: t("an.failed") },
          { num: t("an.unproven") },
        ]}
      >
        {daily.map((d) => (
          <tr key={d.day}>
            <th scope="row">{dayLabel(d.day)}</th>
            <td class="num">{d.operations}</td>
            <td class="num">{d.transfers}</td>
            <td class="num">{fcfa(d.value_xaf)}</td>
            <td class="num">{d.confirmed}</td>
            <td class="num">{d.failed}</td>
            <td class="num">{d.unproven}</td>
          </tr>
        ))}
      </Table>
    </Figure>
  );
}

/** Operations by hour of the day. */
function HourFigure({ r }: { r: Report }) {
  const hours = Array.from({ length: 24 }, (_, h) =>
    r.activity.by_hour.filter((c) => c.hour === h).reduce((n, c) => n + c.operations, 0),
  );
  return (
    <Figure title={t("an.byHour")}>
      <Columns bars={hours.map((value, h) => ({ label: `${h} h`, value }))} />
      <Table tall caption={t("an.byHour")} columns={[t("an.hour"), { num: t("an.operations") }]}>
        {hours.map((n, h) => (
          <tr key={h}>
            <th scope="row">{h} h</th>
            <td class="num">{n}</td>
          </tr>
        ))}
      </Table>
    </Figure>
  );
}

/** Operations by day of the week. */
function WeekdayFigure({ r }: { r: Report }) {
  const { activity } = r;
  return (
    <Figure title={t("an.byWeekday")}>
      <Rows bars={activity.by_weekday.map((d) => ({ label: weekday(d.weekday), value: d.operations }))} />
      <Table caption={t("an.byWeekday")} columns={[t("an.weekday"), { num: t("an.operations") }]}>
        {activity.by_weekday.map((d) => (
          <tr key={d.weekday}>
            <th scope="row">{weekday(d.weekday)}</th>
            <td class="num">{d.operations}</td>
          </tr>
        ))}
      </Table>
    </Figure>
  );
}

/** Operations by status. */
function StatusFigure({ r }: { r: Report }) {
  const statuses = Object.entries(r.reliability.by_status).sort((a, b) => b[1] - a[1]);
  return (
    <Figure title={t("an.byStatus")}>
      <Rows bars={statuses.map(([s, n]) => ({ label: status(s), value: n }))} />
      <Table caption={t("an.byStatus")} columns={[t("common.status"), { num: t("an.operations") }]}>
        {statuses.map(([s, n]) => (
          <tr key={s}>
            <th scope="row">{status(s)}</th>
            <td class="num">{n}</td>
          </tr>
        ))}
      </Table>
    </Figure>
  );
}

/** How long proof takes, against the thresholds. */
function DelayFigure({ r }: { r: Report }) {
  const rel = r.reliability;
  const delays: [string, number | null][] = [
    [t("an.median"), rel.proof_delay_median_s],
    [t("an.p90"), rel.proof_delay_p90_s],
    [t("an.late"), rel.thresholds.late_evidence_s],
    [t("an.evidenceWindow"), rel.thresholds.evidence_window_s],
  ];
  return (
    <Figure title={t("an.proofDelay")}>
      <Rows bars={delays.map(([label, value]) => ({ label, value: value ?? 0 }))} format={seconds} />
      <Table caption={t("an.proofDelay")} columns={["", { num: t("an.delay") }]}>
        {delays.map(([label, value]) => (
          <tr key={label}>
            <th scope="row">{label}</th>
            <td class="num">{seconds(value)}</td>
          </tr>
        ))}
      </Table>
    </Figure>
  );
}

/** Each agent's operations (none shown when there are none). */
function AgentFigure({ r }: { r: Report }) {
  const { activity } = r;
  if (activity.by_agent.length === 0) return null;
  return (
    <Figure title={t("an.byAgent")}>
      <Rows bars={activity.by_agent.map((a) => ({ label: a.name, value: a.operations }))} />
      <Table
        caption={t("an.byAgent")}
        columns={[t("common.name"), { num: t("an.operations") }, { num: t("an.value") }]}
      >
        {activity.by_agent.map((a) => (
          <tr key={a.agent_id}>
            <th scope="row">{a.name}</th>
            <td class="num">{a.operations}</td>
            <td class="num">{fcfa(a.value_xaf)}</td>
          </tr>
        ))}
      </Table>
    </Figure>
  );
}
