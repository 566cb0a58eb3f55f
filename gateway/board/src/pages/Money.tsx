import { useEffect, useState } from "preact/hooks";
import { api, call } from "../api.ts";
import { t } from "../i18n.ts";
import { dateTime, fcfa, status, today } from "../format.ts";
import type { ChainLink, Reconciliation, SimDay, UnprovenHandset } from "../types.ts";
import { useSimNames } from "../sim-names.ts";
import { DataTable, Field, RowAction, Table, useLiveList } from "../ui.tsx";

// The money checks of one local day, from the operator's messages: the fleet's sums and
// each SIM's day, the unexplained difference named, the breaks of a SIM's balance chain,
// and the transfers no message proved, by handset. Supervisors and admins (the routes'
// scope). SIMs by number (useSimNames: every SIM for an admin, a supervisor's granted ones).
export function Money() {
  const [day, setDay] = useState(today());
  const [fleet, setFleet] = useState<Reconciliation["fleet"]>();
  const [chainOf, setChainOf] = useState<string>();
  const name = useSimNames();
  const sims = useLiveList<SimDay>(
    async () => {
      const r = await call(() => api.GET("/v1/reconciliations/daily", { params: { query: { day } } }));
      if (!r.data) return r;
      setFleet(r.data.fleet);
      return { data: r.data.sims };
    },
    (s) => s.sim_id,
    ["message"],
    [day],
  );

  return (
    <section>
      <h2>{t("money.title")}</h2>
      <form class="inline" onSubmit={(e) => e.preventDefault()}>
        <Field label={t("money.day")}>
          <input type="date" value={day} max={today()} onChange={(e) => setDay(e.currentTarget.value || today())} />
        </Field>
      </form>
      {fleet && <FleetFacts fleet={fleet} name={name} />}
      <h3>{t("money.perSim")}</h3>
      <DataTable
        list={sims}
        caption={t("money.perSim")}
        columns={[
          t("common.sim"),
          { num: t("money.opening") },
          { num: t("money.proven") },
          { num: t("money.fees") },
          { num: t("money.in") },
          { num: t("money.out") },
          { num: t("money.closing") },
          { num: t("money.unexplained") },
          { num: t("money.breaks") },
          t("common.actions"),
        ]}
        row={(s) => (
          <tr key={s.sim_id} class={s.unexplained_xaf || s.breaks.length ? "flagged" : undefined}>
            <th scope="row">{name(s.sim_id)}</th>
            <td class="num">{fcfa(s.opening_balance)}</td>
            <td class="num">{fcfa(s.proven_xaf)}</td>
            <td class="num">{fcfa(s.fees_xaf)}</td>
            <td class="num">{fcfa(s.in_xaf)}</td>
            <td class="num">{fcfa(s.out_xaf)}</td>
            <td class="num">{fcfa(s.closing_balance)}</td>
            <td class="num">{unexplainedText(s.unexplained_xaf)}</td>
            <td class="num">{s.breaks.length}</td>
            <td class="actions">
              <RowAction label={t("money.chain")} of={name(s.sim_id)} onClick={() => setChainOf(s.sim_id)} />
            </td>
          </tr>
        )}
      />
      {chainOf && <Chain simId={chainOf} name={name(chainOf)} day={day} />}
      <Unproven />
    </section>
  );
}

/** The fleet's sums for the day, the unexplained difference named, the SIMs not reconciled. */
function FleetFacts({ fleet, name }: { fleet: Reconciliation["fleet"]; name: ReturnType<typeof useSimNames> }) {
  return (
    <>
      <h3>{t("money.fleet", { n: fleet.sims })}</h3>
      <dl class="facts">
        <dt>{t("money.opening")}</dt>
        <dd>{fcfa(fleet.opening_balance)}</dd>
        <dt>{t("money.proven")}</dt>
        <dd>{fcfa(fleet.proven_xaf)}</dd>
        <dt>{t("money.provenFees")}</dt>
        <dd>{fcfa(fleet.proven_fees_xaf)}</dd>
        <dt>{t("money.in")}</dt>
        <dd>{fcfa(fleet.in_xaf)}</dd>
        <dt>{t("money.out")}</dt>
        <dd>{fcfa(fleet.out_xaf)}</dd>
        <dt>{t("money.fees")}</dt>
        <dd>{fcfa(fleet.fees_xaf)}</dd>
        <dt>{t("money.explained")}</dt>
        <dd>{fcfa(fleet.explained_xaf)}</dd>
        <dt>{t("money.closing")}</dt>
        <dd>{fcfa(fleet.closing_balance)}</dd>
        <dt>{t("money.unexplained")}</dt>
        <dd class={fleet.unexplained_xaf ? "bad" : "ok"}>
          {fleet.unexplained_xaf ? fcfa(fleet.unexplained_xaf) : t("money.nothingUnexplained")}
        </dd>
        <dt>{t("money.breaks")}</dt>
        <dd class={fleet.chain_breaks ? "bad" : undefined}>{fleet.chain_breaks}</dd>
        <dt>{t("money.notReconciled")}</dt>
        <dd class={fleet.sims_not_reconciled.length ? "bad" : undefined}>
          {fleet.sims_not_reconciled.map(name).join(", ") || t("money.allReconciled")}
        </dd>
      </dl>
    </>
  );
}

/**
 * A SIM's balance chain for the day: the opening balance, each link that does not hold
 * (the balance a message printed against the one the previous message and its movement
 * imply), the closing balance, and what is left unexplained; then every link, a page at a
 * time, the broken ones highlighted.
 */
function Chain(props: { simId: string; name: string; day: string }) {
  const list = useLiveList<SimDay>(
    () =>
      call(() =>
        api.GET("/v1/reconciliations/daily/{sim_id}", {
          params: { path: { sim_id: props.simId }, query: { day: props.day } },
        }),
      ).then((r) => (r.data ? { data: r.data.sims } : r)),
    (s) => s.sim_id,
    ["message"],
    [props.simId, props.day],
  );
  const d = list.rows[0];
  return (
    <section aria-labelledby="chain-title">
      <h3 id="chain-title">{t("money.chainOf", { sim: props.name, day: props.day })}</h3>
      {d && (
        <>
          <p>
            {t("money.chainSummary", {
              messages: d.messages,
              confirmed: d.confirmed,
              movements: d.movements,
              unmatched: d.unmatched,
            })}
          </p>
          <ol class="chain">
            <li>
              {t("money.opening")} : <strong>{fcfa(d.opening_balance)}</strong>
            </li>
            {d.breaks.length === 0 ? (
              <li class="ok">{t("money.chainHolds")}</li>
            ) : (
              d.breaks.map((b) => (
                <li key={b.message_id} class="break">
                  <strong>{t("money.break", { gap: fcfa(b.gap) })}</strong>{" "}
                  {t("money.breakDetail", {
                    expected: fcfa(b.expected_balance),
                    found: fcfa(b.found_balance),
                    previous: b.previous_message_id,
                    message: b.message_id,
                  })}
                </li>
              ))
            )}
            <li>
              {t("money.closing")} : <strong>{fcfa(d.closing_balance)}</strong>
            </li>
            <li class={d.unexplained_xaf ? "break" : "ok"}>
              {t("money.unexplained")} : <strong>{unexplainedText(d.unexplained_xaf)}</strong>
            </li>
          </ol>
          <Links simId={props.simId} day={props.day} />
          {(d.unreadable_movements > 0 || d.unknown_sender > 0 || d.divergent > 0) && (
            <p>
              {t("money.chainCaveats", {
                unreadable: d.unreadable_movements,
                unknown: d.unknown_sender,
                divergent: d.divergent,
              })}
            </p>
          )}
        </>
      )}
    </section>
  );
}

/** How many links a page of the chain shows (the route answers up to 500). */
const LINKS_PAGE = 200;

/** Every link of the day's chain: what each message moved, the balance expected and the one printed. */
function Links(props: { simId: string; day: string }) {
  const [offset, setOffset] = useState(0);
  const [total, setTotal] = useState(0);
  useEffect(() => setOffset(0), [props.simId, props.day]);
  const list = useLiveList<ChainLink>(
    async () => {
      const r = await call(() =>
        api.GET("/v1/reconciliations/daily/{sim_id}/chain", {
          params: { path: { sim_id: props.simId }, query: { day: props.day, offset, limit: LINKS_PAGE } },
        }),
      );
      if (!r.data) return r;
      setTotal(r.data.total);
      return { data: r.data.links };
    },
    (l) => l.message_id,
    ["message"],
    [props.simId, props.day, offset],
  );
  const caption = t("money.links", { from: total ? offset + 1 : 0, to: offset + list.rows.length, total });
  return (
    <>
      <h4>{caption}</h4>
      <Table
        caption={caption}
        columns={[
          t("money.linkAt"),
          t("money.message"),
          t("wr.kind"),
          t("common.status"),
          { num: t("money.moved") },
          { num: t("money.before") },
          { num: t("money.expected") },
          { num: t("money.printed") },
          t("money.link"),
        ]}
        tall
      >
        {list.rows.map((l) => (
          <LinkRow key={l.message_id} l={l} />
        ))}
      </Table>
      <p class="inline">
        {offset > 0 && (
          <button type="button" onClick={() => setOffset(Math.max(0, offset - LINKS_PAGE))}>
            {t("money.earlierLinks")}
          </button>
        )}
        {offset + list.rows.length < total && (
          <button type="button" onClick={() => setOffset(offset + LINKS_PAGE)}>
            {t("money.laterLinks")}
          </button>
        )}
      </p>
    </>
  );
}

/** One link of the chain: what the message moved, the balance expected and the one printed. */
function LinkRow({ l }: { l: ChainLink }) {
  return (
    <tr key={l.message_id} class={l.is_break ? "flagged" : undefined}>
      <th scope="row">{dateTime(l.received_at)}</th>
      <td class="mono">{l.message_id}</td>
      <td>
        {l.kind ?? "—"} {l.direction ?? ""}
      </td>
      <td>{status(l.outcome)}</td>
      <td class="num">{fcfa(l.moved)}</td>
      <td class="num">{fcfa(l.balance_before)}</td>
      <td class="num">{fcfa(l.expected_balance)}</td>
      <td class="num">{fcfa(l.balance_after)}</td>
      <td>
        {l.is_break ? (
          <strong>{t("money.broken", { gap: fcfa(l.gap) })}</strong>
        ) : l.expected_balance === null ? (
          t("money.unchecked")
        ) : (
          t("money.holds")
        )}
      </td>
    </tr>
  );
}

const unexplainedText = (n: number | null) =>
  n === null ? t("money.noBalance") : n === 0 ? t("money.nothingUnexplained") : fcfa(n);

/** Transfers that dialled and that no operator message proved, by handset, over the last `days`. */
function Unproven() {
  const [days, setDays] = useState(7);
  const list = useLiveList<UnprovenHandset>(
    () =>
      call(() => api.GET("/v1/analytics/unproven-by-handset", { params: { query: { days } } })).then((r) =>
        r.data ? { data: r.data.handsets } : r,
      ),
    (h) => h.device_id ?? h.label,
    ["operation"],
    [days],
  );
  return (
    <>
      <h3>{t("money.unproven")}</h3>
      <form class="inline" onSubmit={(e) => e.preventDefault()}>
        <Field label={t("an.window")}>
          <select value={days} onChange={(e) => setDays(Number(e.currentTarget.value))}>
            {[1, 7, 30, 90].map((n) => (
              <option key={n} value={n}>
                {t("an.days", { n })}
              </option>
            ))}
          </select>
        </Field>
      </form>
      <DataTable
        list={list}
        caption={t("money.unproven")}
        columns={[
          t("sim.device"),
          { num: t("money.dialled") },
          { num: t("money.unprovenN") },
          { num: t("money.waiting") },
          { num: t("money.settledArrived") },
          { num: t("money.settledNot") },
          { num: t("money.rate") },
          { num: t("money.oldest") },
        ]}
        row={(h) => (
          <tr key={h.device_id ?? h.label}>
            <th scope="row">{h.label}</th>
            <td class="num">{h.dialled}</td>
            <td class="num">
              {h.unproven} · {fcfa(h.unproven_xaf)}
            </td>
            <td class="num">
              {h.waiting} · {fcfa(h.waiting_xaf)}
            </td>
            <td class="num">{h.settled_arrived}</td>
            <td class="num">{h.settled_not_arrived}</td>
            <td class="num">{Math.round(h.unproven_rate * 100)} %</td>
            <td class="num">{h.oldest_waiting_hours === null ? "—" : `${h.oldest_waiting_hours.toFixed(1)} h`}</td>
          </tr>
        )}
      />
    </>
  );
}
