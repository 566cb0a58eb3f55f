import { useEffect, useState } from "preact/hooks";
import { api, call, type Outcome } from "../api.ts";
import { t } from "../i18n.ts";
import { dateTime, fcfa } from "../format.ts";
import { amountProblem, localDigits, msisdnProblem } from "../rules.ts";
import type { Operation, OwnSim } from "../types.ts";
import { Answer, Badge, DataTable, Dialog, Field, RowAction, useLiveList, type LiveList } from "../ui.tsx";

/** The user's own SIMs, and a SIM named by its number and handset (an operation names it by id). */
function useOwnSims() {
  const [sims, setSims] = useState<OwnSim[]>([]);
  useEffect(() => {
    void call(() => api.GET("/v1/agents/me/sims")).then((r) => r.data && setSims(r.data));
  }, []);
  const simOf = (simId: string | null | undefined) => {
    const sim = sims.find((s) => s.sim_id === simId);
    if (!sim) return simId ? simId.slice(0, 8) : "—";
    return sim.device_label ? `${sim.msisdn} · ${sim.device_label}` : sim.msisdn;
  };
  return { sims, simOf };
}

export function Matching() {
  const [outcome, setOutcome] = useState<Outcome>();
  const [editing, setEditing] = useState<Operation>();
  const list = useLiveList<Operation>(
    () => call(() => api.GET("/v1/operations/matching", { params: { query: { limit: 250 } } })),
    (o) => o.operation_id,
    ["operation"],
    [],
  );
  const { sims, simOf } = useOwnSims();
  const cancel = async (o: Operation) => {
    const r = await call(() =>
      api.POST("/v1/operations/matching/{operation_id}/cancel", { params: { path: { operation_id: o.operation_id } } }),
    );
    setOutcome(r.outcome ?? { ok: true, message: t("mo.cancelled") });
    void list.reload();
  };
  return (
    <section>
      <h2>{t("mo.title")}</h2>
      <p>{t("mo.why")}</p>
      <MatchingForm
        sims={sims}
        submit={t("mo.record")}
        onSubmit={async (v) => {
          const r = await call(() =>
            api.POST("/v1/operations/matching", {
              body: {
                beneficiary_msisdn: v.msisdn,
                montant: v.montant,
                contact_id: v.contact_id,
                sim_id: v.sim_id,
              },
            }),
          );
          const o = r.outcome ?? {
            ok: true as const,
            message: t("mo.recorded", {
              amount: fcfa(r.data.montant),
              msisdn: r.data.msisdn_dest,
              sim: simOf(r.data.sim_id),
            }),
          };
          // A refusal shows under the form; the page keeps the last success.
          setOutcome(o.ok ? o : undefined);
          void list.reload();
          return o;
        }}
      />
      <Answer outcome={outcome} />
      <MatchingTable list={list} simOf={simOf} onEdit={setEditing} onCancel={(o) => void cancel(o)} />
      {editing && (
        <ChangeMatching
          operation={editing}
          onClose={() => setEditing(undefined)}
          onChanged={(o) => {
            setEditing(undefined);
            setOutcome(o);
          }}
          onSent={() => void list.reload()}
        />
      )}
    </section>
  );
}

/** The operations waiting to be dialled by hand, changed or cancelled while they wait. */
function MatchingTable(p: {
  list: LiveList<Operation>;
  simOf: (simId: string | null | undefined) => string;
  onEdit: (o: Operation) => void;
  onCancel: (o: Operation) => void;
}) {
  return (
    <DataTable
      list={p.list}
      caption={t("mo.title")}
      columns={[
        t("common.created"),
        t("common.status"),
        t("common.number"),
        { num: t("common.amount") },
        t("mo.sim"),
        t("common.actions"),
      ]}
      row={(o) => (
        <tr key={o.operation_id}>
          <td>{dateTime(o.created_at)}</td>
          <td>
            <Badge state={o.status} />
          </td>
          <td>{o.msisdn_dest}</td>
          <td class="num">{fcfa(o.montant)}</td>
          <td>{p.simOf(o.sim_id)}</td>
          <td>
            {o.status === "awaiting_manual_dial" && (
              <>
                <RowAction label={t("mo.change")} of={o.msisdn_dest} onClick={() => p.onEdit(o)} />
                <RowAction label={t("mo.cancel")} of={o.msisdn_dest} onClick={() => p.onCancel(o)} />
              </>
            )}
          </td>
        </tr>
      )}
    />
  );
}

/** Changes an operation waiting to be dialled: its number, amount or contact. */
function ChangeMatching(p: {
  operation: Operation;
  onClose: () => void;
  onChanged: (o: Outcome) => void;
  onSent: () => void;
}) {
  return (
    <Dialog title={`${t("mo.change")} · ${p.operation.msisdn_dest}`} onClose={p.onClose}>
      <MatchingForm
        initial={p.operation}
        submit={t("mo.change")}
        onSubmit={async (v) => {
          const r = await call(() =>
            api.PATCH("/v1/operations/matching/{operation_id}", {
              params: { path: { operation_id: p.operation.operation_id } },
              body: { beneficiary_msisdn: v.msisdn, montant: v.montant, contact_id: v.contact_id },
            }),
          );
          const o = r.outcome ?? { ok: true as const, message: t("mo.changed") };
          if (o.ok) p.onChanged(o);
          p.onSent();
          return o;
        }}
      />
    </Dialog>
  );
}

interface MatchingValues {
  msisdn: string;
  montant: number;
  contact_id: string | null;
  sim_id: string | null;
}

/** Record or change: number and amount checked as typed; the operator comes from the number. */
function MatchingForm(props: {
  sims?: OwnSim[];
  initial?: Operation;
  submit: string;
  onSubmit: (v: MatchingValues) => Promise<Outcome>;
}) {
  const [msisdn, setMsisdn] = useState(props.initial?.msisdn_dest ?? "");
  const [amount, setAmount] = useState(props.initial ? String(props.initial.montant) : "");
  const [contact, setContact] = useState(props.initial?.contact_id ?? "");
  const [sim, setSim] = useState("");
  const [touched, setTouched] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>();
  const problems = { msisdn: msisdnProblem(msisdn), amount: amountProblem(amount) };
  const submit = async (e: Event) => {
    e.preventDefault();
    setTouched(true);
    if (problems.msisdn || problems.amount) return;
    const o = await props.onSubmit({
      msisdn: localDigits(msisdn),
      montant: Number(amount),
      contact_id: contact.trim() || null,
      sim_id: sim || null,
    });
    setOutcome(o.ok ? undefined : o);
    if (o.ok && !props.initial) {
      setMsisdn("");
      setAmount("");
      setContact("");
      setTouched(false);
    }
  };
  return (
    <form onSubmit={submit} noValidate class="inline">
      <Field label={t("common.number")} error={touched ? problems.msisdn : undefined}>
        <input
          inputMode="tel"
          value={msisdn}
          aria-invalid={touched && Boolean(problems.msisdn)}
          onInput={(e) => setMsisdn(e.currentTarget.value)}
        />
      </Field>
      <Field label={t("common.amount")} error={touched ? problems.amount : undefined}>
        <input
          inputMode="numeric"
          value={amount}
          aria-invalid={touched && Boolean(problems.amount)}
          onInput={(e) => setAmount(e.currentTarget.value)}
        />
      </Field>
      <Field label={t("common.contact")}>
        <input value={contact} maxLength={200} onInput={(e) => setContact(e.currentTarget.value)} />
      </Field>
      {props.sims && props.sims.length > 0 && <SimSelect sims={props.sims} sim={sim} setSim={setSim} />}
      <button type="submit" class="primary">
        {props.submit}
      </button>
      <Answer outcome={outcome} />
    </form>
  );
}

/** The SIM to dial from (any, by default). */
function SimSelect(p: { sims: OwnSim[]; sim: string; setSim: (sim: string) => void }) {
  return (
    <Field label={t("common.sim")}>
      <select value={p.sim} onChange={(e) => p.setSim(e.currentTarget.value)}>
        <option value="">{t("ops.any")}</option>
        {p.sims.map((s) => (
          <option key={s.sim_id} value={s.sim_id}>
            {s.msisdn} · {s.operator} · {fcfa(s.balance_mirror)}
          </option>
        ))}
      </select>
    </Field>
  );
}
