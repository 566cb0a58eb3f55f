import { useEffect, useState } from "preact/hooks";
import { api, call, type Outcome } from "../api.ts";
import { t } from "../i18n.ts";
import { dateTime, fcfa } from "../format.ts";
import { amountProblem, OPERATORS, TRANSFER_OP_TYPES } from "../rules.ts";
import type { Device, FleetLimit } from "../types.ts";
import { Answer, Confirm, DataTable, Field, useLiveList, type LiveList } from "../ui.tsx";

// The circuit breaker and the fleet limits. The breaker's state is read from the fleet
// health route (`breaker_active`), the frozen handsets from the devices list: tripping
// freezes every active handset, resetting reopens operation creation and leaves them
// frozen, lifting resets and restores them. Each action names what it will do first.
type Action = "trip" | "reset" | "lift";
type LimitDraft = Omit<FleetLimit, "effective_from">;

/**
 * The breaker's state and the handsets it froze, read together; running an action reports
 * what it did by name and reads the state again.
 */
function useBreaker(setOutcome: (o: Outcome | undefined) => void) {
  const [breaker, setBreaker] = useState<boolean>();
  const [devices, setDevices] = useState<Device[]>([]);
  const [action, setAction] = useState<Action>();
  const loadState = async () => {
    const [health, devs] = await Promise.all([
      call(() => api.GET("/v1/admin/health")),
      call(() => api.GET("/v1/devices")),
    ]);
    if (health.data) setBreaker(health.data.breaker_active);
    if (devs.data) setDevices(devs.data);
    if (health.outcome ?? devs.outcome) setOutcome(health.outcome ?? devs.outcome);
  };
  useEffect(() => void loadState(), []);

  const frozen = devices.filter((d) => d.status === "frozen");
  const active = devices.filter((d) => d.status !== "frozen");
  const names = (ds: Device[]) => (ds.length ? ds.map((d) => d.label).join(", ") : t("fleet.noHandset"));
  const labels = (ids: string[]) => names(devices.filter((d) => ids.includes(d.device_id)));

  const run = async (a: Action): Promise<Outcome | undefined> => {
    let message: string;
    if (a === "lift") {
      const r = await call(() => api.POST("/v1/admin/circuit-breaker/lift"));
      if (r.outcome) return r.outcome;
      message = t("fleet.lifted", { devices: labels(r.data.restored_device_ids) });
    } else {
      const r = await call(() => api.PUT("/v1/admin/circuit-breaker", { body: { active: a === "trip" } }));
      if (r.outcome) return r.outcome;
      message =
        a === "trip"
          ? t("fleet.tripped", { devices: labels(r.data.frozen_device_ids) })
          : t("fleet.reset", { devices: labels(r.data.frozen_until_lift_device_ids) });
    }
    setOutcome({ ok: true, message });
    setAction(undefined);
    await loadState();
  };
  const what: Record<Action, string> = {
    trip: t("fleet.tripWhat", { n: active.length, devices: names(active) }),
    reset: t("fleet.resetWhat", { n: frozen.length, devices: names(frozen) }),
    lift: t("fleet.liftWhat", { n: frozen.length, devices: names(frozen) }),
  };
  return { breaker, frozen, names, action, setAction, run, what };
}

export function Fleet() {
  const [outcome, setOutcome] = useState<Outcome>();
  const [limit, setLimit] = useState<LimitDraft>();
  const { breaker, frozen, names, action, setAction, run, what } = useBreaker(setOutcome);
  const limits = useLiveList<FleetLimit>(
    async () => {
      const r = await call(() => api.GET("/v1/admin/limits"));
      return r.data ? { data: r.data.limits } : r;
    },
    (l) => `${l.operator}/${l.op_type}`,
    [],
    [],
  );

  return (
    <section>
      <h2>{t("fleet.title")}</h2>
      <Answer outcome={outcome} />
      <h3>{t("fleet.breaker")}</h3>
      {breaker !== undefined && (
        <p class={breaker ? "state bad" : "state"}>{breaker ? t("fleet.breakerOn") : t("fleet.breakerOff")}</p>
      )}
      <p>{t("fleet.frozen", { n: frozen.length, devices: names(frozen) })}</p>
      <BreakerActions breaker={breaker} frozen={frozen.length} onAction={setAction} />
      {action && (
        <Confirm
          title={t(`fleet.${action}Title`)}
          confirm={t(`fleet.${action}Confirm`)}
          run={() => run(action)}
          onClose={() => setAction(undefined)}
        >
          <p>{what[action]}</p>
        </Confirm>
      )}

      <h3>{t("fleet.limits")}</h3>
      <p>{t("fleet.notEnforced")}</p>
      <LimitsTable list={limits} />
      <h3>{t("fleet.newLimit")}</h3>
      <LimitForm onSubmit={setLimit} />
      {limit && (
        <RecordLimit
          limit={limit}
          onClose={() => setLimit(undefined)}
          onRecorded={async () => {
            setOutcome({ ok: true, message: t("fleet.recorded") });
            setLimit(undefined);
            await limits.reload();
          }}
        />
      )}
    </section>
  );
}

/** What may be done to the breaker in its state: trip it, reset it, lift it. */
function BreakerActions(p: { breaker?: boolean; frozen: number; onAction: (a: Action) => void }) {
  return (
    <div class="actions">
      {p.breaker === false && (
        <button type="button" onClick={() => p.onAction("trip")}>
          {t("fleet.trip")}
        </button>
      )}
      {p.breaker && (
        <button type="button" onClick={() => p.onAction("reset")}>
          {t("fleet.resetOnly")}
        </button>
      )}
      {(p.breaker || p.frozen > 0) && (
        <button type="button" onClick={() => p.onAction("lift")}>
          {t("fleet.lift")}
        </button>
      )}
    </div>
  );
}

/** The fleet limits in force. */
function LimitsTable({ list }: { list: LiveList<FleetLimit> }) {
  return (
    <DataTable
      list={list}
      caption={t("fleet.limits")}
      columns={[
        t("common.operator"),
        t("ops.type"),
        { num: t("fleet.maxAmount") },
        { num: t("fleet.maxDailyAgent") },
        { num: t("fleet.maxDailySim") },
        t("fleet.since"),
      ]}
      row={(l) => (
        <tr key={`${l.operator}/${l.op_type}`}>
          <th scope="row">{l.operator ?? t("fleet.everyOperator")}</th>
          <td>{l.op_type}</td>
          <td class="num">{fcfa(l.max_amount)}</td>
          <td class="num">{fcfa(l.max_daily_agent)}</td>
          <td class="num">{fcfa(l.max_daily_sim)}</td>
          <td>{dateTime(l.effective_from)}</td>
        </tr>
      )}
    />
  );
}

/** Asks before recording a new limit, then records it. */
function RecordLimit(p: { limit: LimitDraft; onClose: () => void; onRecorded: () => Promise<void> }) {
  const { limit } = p;
  return (
    <Confirm
      title={t("fleet.recordTitle")}
      confirm={t("fleet.recordConfirm")}
      run={async () => {
        const r = await call(() => api.PATCH("/v1/admin/limits", { body: limit }));
        if (r.outcome) return r.outcome;
        await p.onRecorded();
      }}
      onClose={p.onClose}
    >
      <p>
        {t("fleet.recordWhat", {
          operator: limit.operator ?? t("fleet.everyOperator"),
          type: limit.op_type,
          max: fcfa(limit.max_amount),
          agent: fcfa(limit.max_daily_agent),
          sim: fcfa(limit.max_daily_sim),
        })}
      </p>
    </Confirm>
  );
}

function LimitForm(props: { onSubmit: (l: LimitDraft) => void }) {
  const [operator, setOperator] = useState("");
  const [type, setType] = useState<string>("deposit");
  const [max, setMax] = useState("");
  const [agent, setAgent] = useState("");
  const [sim, setSim] = useState("");
  const problem = (v: string) => (v.trim() ? amountProblem(v) : t("v.required"));
  const bad = [max, agent, sim].some((v) => problem(v));
  const [shown, setShown] = useState(false);
  const amount = (label: string, value: string, set: (v: string) => void) => (
    <Field label={label} error={shown ? problem(value) : undefined}>
      <input inputMode="numeric" value={value} onInput={(e) => set(e.currentTarget.value)} />
    </Field>
  );
  return (
    <form
      class="inline"
      aria-label={t("fleet.newLimit")}
      onSubmit={(e) => {
        e.preventDefault();
        setShown(true);
        if (bad) return;
        props.onSubmit({
          operator: operator || null,
          op_type: type,
          max_amount: Number(max),
          max_daily_agent: Number(agent),
          max_daily_sim: Number(sim),
        });
      }}
    >
      <Field label={t("common.operator")}>
        <select value={operator} onChange={(e) => setOperator(e.currentTarget.value)}>
          <option value="">{t("fleet.everyOperator")}</option>
          {OPERATORS.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </Field>
      <Field label={t("ops.type")}>
        <select value={type} onChange={(e) => setType(e.currentTarget.value)}>
          {TRANSFER_OP_TYPES.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </Field>
      {amount(t("fleet.maxAmount"), max, setMax)}
      {amount(t("fleet.maxDailyAgent"), agent, setAgent)}
      {amount(t("fleet.maxDailySim"), sim, setSim)}
      <button type="submit" class="primary">
        {t("fleet.record")}
      </button>
    </form>
  );
}
