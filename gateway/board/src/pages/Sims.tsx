import { useState } from "preact/hooks";
import { api, call, type Outcome } from "../api.ts";
import { t } from "../i18n.ts";
import { dateTime, fcfa } from "../format.ts";
import { localDigits, msisdnProblem, type Operator } from "../rules.ts";
import type { Device, Sim, SimHistory } from "../types.ts";
import {
  Answer,
  Badge,
  DataTable,
  Dialog,
  Empty,
  Field,
  ListHead,
  RowAction,
  Table,
  useLiveList,
  type LiveList,
} from "../ui.tsx";

// The SIMs of the fleet as the admin's routes give them: no route returns a PIN, so the
// page has none to show (a PIN is typed once, to register a SIM). A measured balance is
// recorded by the API-key route only (the balance readers of the fleet), which a browser
// must not hold: the page shows it, with its time and source, and does not write it.
export function Sims() {
  const [outcome, setOutcome] = useState<Outcome>();
  const [devices, setDevices] = useState<Device[]>([]);
  const [assigning, setAssigning] = useState<Sim>();
  const [thresholds, setThresholds] = useState<Sim>();
  const [history, setHistory] = useState<Sim>();
  const list = useLiveList<Sim>(
    async () => {
      const [sims, devs] = await Promise.all([call(() => api.GET("/v1/sims")), call(() => api.GET("/v1/devices"))]);
      if (devs.data) setDevices(devs.data);
      return sims;
    },
    (s) => s.sim_id,
    ["alert", "operation"],
    [],
  );
  const label = (id: string | null) => devices.find((d) => d.device_id === id)?.label ?? "—";

  const act = async (
    run: () => Promise<{ data?: unknown; error?: unknown; response: Response }>,
    message: string,
  ): Promise<boolean> => {
    const r = await call(run);
    setOutcome(r.outcome ?? { ok: true, message });
    void list.reload();
    return !r.outcome;
  };

  return (
    <section>
      <h2>{t("sim.title")}</h2>
      <NewSim
        devices={devices}
        onSubmit={async (body) => {
          const ok = await act(() => api.POST("/v1/sims", { body }), t("sim.registered", { msisdn: body.msisdn }));
          return ok;
        }}
      />
      <Answer outcome={outcome} />
      <SimsTable
        list={list}
        label={label}
        act={act}
        onAssign={setAssigning}
        onThresholds={setThresholds}
        onHistory={setHistory}
      />
      {assigning && (
        <AssignDialog
          sim={assigning}
          devices={devices}
          label={label}
          act={act}
          outcome={outcome}
          onClose={() => setAssigning(undefined)}
        />
      )}
      {thresholds && (
        <ThresholdsDialog sim={thresholds} act={act} outcome={outcome} onClose={() => setThresholds(undefined)} />
      )}
      {history && (
        <Dialog title={`${t("sim.history")} · ${history.msisdn}`} onClose={() => setHistory(undefined)}>
          <History sim={history} />
        </Dialog>
      )}
    </section>
  );
}

/** Runs an admin action on a SIM; says whether it succeeded (its outcome is shown by the page). */
type Act = (
  run: () => Promise<{ data?: unknown; error?: unknown; response: Response }>,
  message: string,
) => Promise<boolean>;

const simPath = (s: Sim) => ({ params: { path: { sim_id: s.sim_id } } });

/** What the table's rows may do to a SIM. */
interface RowHandlers {
  act: Act;
  onAssign: (s: Sim) => void;
  onThresholds: (s: Sim) => void;
  onHistory: (s: Sim) => void;
}

/** Every SIM: its number, handset and slot, balance (with when and how it was measured), thresholds and state. */
function SimsTable(p: RowHandlers & { list: LiveList<Sim>; label: (id: string | null) => string }) {
  return (
    <DataTable
      list={p.list}
      caption={t("sim.title")}
      columns={[
        t("common.number"),
        t("common.operator"),
        t("sim.device"),
        { num: t("sim.balance") },
        t("sim.measured"),
        t("sim.thresholds"),
        t("common.status"),
        t("common.actions"),
      ]}
      row={(s) => (
        <tr key={s.sim_id}>
          <th scope="row">{s.msisdn}</th>
          <td>{s.operator}</td>
          <td>
            {s.device_id === null
              ? t("sim.unassigned")
              : t("sim.inDevice", { device: p.label(s.device_id), slot: (s.subscription_slot ?? 0) + 1 })}
          </td>
          <td class="num">{fcfa(s.balance_mirror)}</td>
          <td>
            {s.balance_updated_at
              ? t("sim.measuredAt", { time: dateTime(s.balance_updated_at), source: s.balance_source ?? "—" })
              : t("sim.neverMeasured")}
          </td>
          <td>
            {fcfa(s.low_balance_threshold)} – {fcfa(s.high_balance_threshold)}
          </td>
          <td>
            <Badge state={s.status} />
          </td>
          <SimActions sim={s} {...p} />
        </tr>
      )}
    />
  );
}

/** Freeze or unfreeze, assign or unassign, thresholds, history. */
function SimActions({ sim: s, ...p }: RowHandlers & { sim: Sim }) {
  return (
    <td class="actions">
      {s.status === "frozen" ? (
        <RowAction
          label={t("sim.unfreeze")}
          of={s.msisdn}
          onClick={() =>
            void p.act(
              () => api.POST("/v1/admin/sims/{sim_id}/unfreeze", simPath(s)),
              t("sim.unfrozen", { msisdn: s.msisdn }),
            )
          }
        />
      ) : (
        <RowAction
          label={t("sim.freeze")}
          of={s.msisdn}
          onClick={() =>
            void p.act(
              () => api.POST("/v1/admin/sims/{sim_id}/freeze", simPath(s)),
              t("sim.frozen", { msisdn: s.msisdn }),
            )
          }
        />
      )}
      <RowAction label={t("sim.assign")} of={s.msisdn} onClick={() => p.onAssign(s)} />
      {s.device_id !== null && (
        <RowAction
          label={t("sim.unassign")}
          of={s.msisdn}
          onClick={() =>
            void p.act(
              () => api.DELETE("/v1/sims/{sim_id}/assignment", simPath(s)),
              t("sim.unassigned.done", { msisdn: s.msisdn }),
            )
          }
        />
      )}
      <RowAction label={t("sim.thresholds")} of={s.msisdn} onClick={() => p.onThresholds(s)} />
      <RowAction label={t("sim.history")} of={s.msisdn} onClick={() => p.onHistory(s)} />
    </td>
  );
}

/** Puts a SIM in a handset's slot. */
function AssignDialog(p: {
  sim: Sim;
  devices: Device[];
  label: (id: string | null) => string;
  act: Act;
  outcome?: Outcome;
  onClose: () => void;
}) {
  return (
    <Dialog title={`${t("sim.assign")} · ${p.sim.msisdn}`} onClose={p.onClose}>
      <Assign
        sim={p.sim}
        devices={p.devices}
        onSubmit={async (device_id, slot) => {
          const ok = await p.act(
            () =>
              api.PATCH("/v1/sims/{sim_id}/assignment", {
                ...simPath(p.sim),
                body: { device_id, subscription_slot: slot },
              }),
            t("sim.assigned", { msisdn: p.sim.msisdn, device: p.label(device_id) }),
          );
          if (ok) p.onClose();
        }}
      />
      <Answer outcome={p.outcome} />
    </Dialog>
  );
}

/** Sets a SIM's balance thresholds. */
function ThresholdsDialog(p: { sim: Sim; act: Act; outcome?: Outcome; onClose: () => void }) {
  return (
    <Dialog title={`${t("sim.thresholds")} · ${p.sim.msisdn}`} onClose={p.onClose}>
      <Thresholds
        sim={p.sim}
        onSubmit={async (low, high) => {
          const ok = await p.act(
            () =>
              api.PATCH("/v1/sims/{sim_id}", {
                ...simPath(p.sim),
                body: { low_balance_threshold: low, high_balance_threshold: high },
              }),
            t("sim.thresholdsSet", { msisdn: p.sim.msisdn }),
          );
          if (ok) p.onClose();
        }}
      />
      <Answer outcome={p.outcome} />
    </Dialog>
  );
}

/** What the SIM ran (the fleet's history route, derived from operations). */
function History({ sim }: { sim: Sim }) {
  const list = useLiveList<SimHistory>(
    () =>
      call(() => api.GET("/v1/sims/{sim_id}/history", { params: { path: { sim_id: sim.sim_id } } })).then((r) =>
        r.data ? { data: [r.data] } : r,
      ),
    () => "history",
    ["operation"],
    [],
  );
  const h = list.rows[0];
  return (
    <>
      <ListHead list={list} />
      {h && (
        <>
          <p>
            {t("sim.totals", {
              total: h.total_operations,
              confirmed: h.total_confirmed,
              failed: h.total_failed,
              unproven: h.total_no_evidence,
            })}
          </p>
          <Table
            tall
            caption={t("sim.history")}
            columns={[t("common.created"), t("ops.type"), t("sim.to"), { num: t("common.amount") }, t("common.status")]}
          >
            {h.operations.map((o) => (
              <tr key={o.operation_id}>
                <td>{dateTime(o.created_at)}</td>
                <td>{o.op_type}</td>
                <td>{o.msisdn_dest}</td>
                <td class="num">{fcfa(o.montant)}</td>
                <td>
                  <Badge state={o.status} />
                </td>
              </tr>
            ))}
          </Table>
          <Empty rows={h.operations} />
        </>
      )}
    </>
  );
}

/** The PIN rule of the contract: 4 to 8 digits. */
const pinProblem = (pin: string) => (/^\d{4,8}$/.test(pin) ? undefined : t("v.pin"));

/**
 * Registers a SIM: its operator, number and PIN (sent once, stored encrypted by the server, never
 * shown again; the form forgets it once sent), and optionally the handset slot it sits in.
 */
function NewSim(props: {
  devices: Device[];
  onSubmit: (body: {
    operator: Operator;
    msisdn: string;
    pin: string;
    device_id?: string;
    subscription_slot?: 0 | 1;
  }) => Promise<boolean>;
}) {
  const [operator, setOperator] = useState<Operator>("operator_b");
  const [msisdn, setMsisdn] = useState("");
  const [pin, setPin] = useState("");
  const [deviceId, setDeviceId] = useState("");
  const [slot, setSlot] = useState<0 | 1>(0);
  const [touched, setTouched] = useState(false);
  const problems = { msisdn: msisdnProblem(msisdn, operator), pin: pinProblem(pin) };
  const show = (p?: string) => (touched ? p : undefined);
  return (
    <form
      class="inline"
      aria-label={t("sim.new")}
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        setTouched(true);
        if (problems.msisdn || problems.pin) return;
        const ok = await props.onSubmit({
          operator,
          msisdn: localDigits(msisdn),
          pin,
          ...(deviceId ? { device_id: deviceId, subscription_slot: slot } : {}),
        });
        if (!ok) return;
        setMsisdn("");
        setPin("");
        setTouched(false);
      }}
    >
      <Field label={t("common.operator")}>
        <select value={operator} onChange={(e) => setOperator(e.currentTarget.value as Operator)}>
          <option value="operator_a">operator_a</option>
          <option value="operator_b">operator_b</option>
        </select>
      </Field>
      <Field label={t("sim.newNumber")} error={show(problems.msisdn)}>
        <input
          inputMode="tel"
          value={msisdn}
          aria-invalid={Boolean(show(problems.msisdn))}
          onInput={(e) => setMsisdn(e.currentTarget.value)}
        />
      </Field>
      <Field label={t("sim.pin")} error={show(problems.pin)} hint={t("sim.pinHint")}>
        <input
          type="password"
          inputMode="numeric"
          autocomplete="off"
          value={pin}
          aria-invalid={Boolean(show(problems.pin))}
          onInput={(e) => setPin(e.currentTarget.value)}
        />
      </Field>
      <DeviceSlot devices={props.devices} deviceId={deviceId} setDeviceId={setDeviceId} slot={slot} setSlot={setSlot} />
      <button type="submit" class="primary">
        {t("sim.register")}
      </button>
    </form>
  );
}

/** The handset a new SIM sits in (none by default), and its slot there. */
function DeviceSlot(p: {
  devices: Device[];
  deviceId: string;
  setDeviceId: (id: string) => void;
  slot: 0 | 1;
  setSlot: (slot: 0 | 1) => void;
}) {
  return (
    <>
      <Field label={t("sim.device")}>
        <select value={p.deviceId} onChange={(e) => p.setDeviceId(e.currentTarget.value)}>
          <option value="">{t("sim.unassigned")}</option>
          {p.devices.map((d) => (
            <option key={d.device_id} value={d.device_id}>
              {d.label}
            </option>
          ))}
        </select>
      </Field>
      {p.deviceId && (
        <Field label={t("sim.slot")}>
          <select value={p.slot} onChange={(e) => p.setSlot(Number(e.currentTarget.value) as 0 | 1)}>
            <option value={0}>SIM 1</option>
            <option value={1}>SIM 2</option>
          </select>
        </Field>
      )}
    </>
  );
}

function Assign(props: { sim: Sim; devices: Device[]; onSubmit: (deviceId: string, slot: 0 | 1) => Promise<void> }) {
  const [deviceId, setDeviceId] = useState(props.sim.device_id ?? props.devices[0]?.device_id ?? "");
  const [slot, setSlot] = useState<0 | 1>((props.sim.subscription_slot ?? 0) as 0 | 1);
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void props.onSubmit(deviceId, slot);
      }}
    >
      <Field label={t("sim.device")}>
        <select value={deviceId} onChange={(e) => setDeviceId(e.currentTarget.value)}>
          {props.devices.map((d) => (
            <option key={d.device_id} value={d.device_id}>
              {d.label}
            </option>
          ))}
        </select>
      </Field>
      <Field label={t("sim.slot")}>
        <select value={slot} onChange={(e) => setSlot(Number(e.currentTarget.value) as 0 | 1)}>
          <option value={0}>SIM 1</option>
          <option value={1}>SIM 2</option>
        </select>
      </Field>
      <button type="submit" class="primary" disabled={!deviceId}>
        {t("sim.assign")}
      </button>
    </form>
  );
}

/** Empty clears a threshold (the route takes null). */
function Thresholds(props: { sim: Sim; onSubmit: (low: number | null, high: number | null) => Promise<void> }) {
  const [low, setLow] = useState(props.sim.low_balance_threshold?.toString() ?? "");
  const [high, setHigh] = useState(props.sim.high_balance_threshold?.toString() ?? "");
  const value = (s: string) => (s.trim() === "" ? null : Number(s));
  const bad = (s: string) => s.trim() !== "" && !/^\d+$/.test(s.trim());
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void props.onSubmit(value(low), value(high));
      }}
    >
      <Field label={t("sim.low")} hint={t("sim.emptyClears")} error={bad(low) ? t("v.amount") : undefined}>
        <input inputMode="numeric" value={low} onInput={(e) => setLow(e.currentTarget.value)} />
      </Field>
      <Field label={t("sim.high")} hint={t("sim.emptyClears")} error={bad(high) ? t("v.amount") : undefined}>
        <input inputMode="numeric" value={high} onInput={(e) => setHigh(e.currentTarget.value)} />
      </Field>
      <button type="submit" class="primary" disabled={bad(low) || bad(high)}>
        {t("common.send")}
      </button>
    </form>
  );
}
