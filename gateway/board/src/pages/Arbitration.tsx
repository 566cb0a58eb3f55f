import { useEffect, useState } from "preact/hooks";
import { api, call, type Outcome } from "../api.ts";
import { t } from "../i18n.ts";
import { dateTime, fcfa, status } from "../format.ts";
import type { Operation, SettledOnWord, Unproven } from "../types.ts";
import { Answer, DataTable, Dialog, Field, RowAction, useLiveList, type LiveList } from "../ui.tsx";

export function Arbitration() {
  const [settling, setSettling] = useState<Unproven>();
  const [outcome, setOutcome] = useState<Outcome>();
  const unproven = useLiveList<Unproven>(
    () => call(() => api.GET("/v1/operations/unproven", { params: { query: { limit: 250, all: "true" } } })),
    (r) => r.operation_id,
    ["operation"],
    [],
  );
  const settled = useLiveList<SettledOnWord>(
    () => call(() => api.GET("/v1/operations/settled-on-word", { params: { query: { limit: 250, all: "true" } } })),
    (r) => r.operation_id,
    ["operation", "message"],
    [],
  );
  return (
    <section>
      <h2>{t("arb.title")}</h2>
      <Answer outcome={outcome} />
      <h3>{t("arb.unproven")}</h3>
      <UnprovenTable list={unproven} onSettle={setSettling} />
      <h3>{t("arb.settled")}</h3>
      <SettledTable list={settled} />
      {settling && (
        <Settle
          row={settling}
          onClose={() => setSettling(undefined)}
          onSettled={(o) => {
            setSettling(undefined);
            setOutcome(o);
            void unproven.reload();
            void settled.reload();
          }}
        />
      )}
    </section>
  );
}

/** Operations finished without proof: each may be settled on the user's word. */
function UnprovenTable({ list, onSettle }: { list: LiveList<Unproven>; onSettle: (row: Unproven) => void }) {
  return (
    <DataTable
      list={list}
      caption={t("arb.unproven")}
      columns={[
        t("common.finished"),
        t("common.name"),
        t("common.number"),
        { num: t("common.amount") },
        t("arb.evidenceCount"),
        t("common.actions"),
      ]}
      row={(r) => (
        <tr key={r.operation_id}>
          <td>
            {dateTime(r.finished_at)}
            {r.self_resolving && <small> · {t("arb.selfResolving")}</small>}
            {r.contradicting_message_id && <strong> · {t("arb.contradicted")}</strong>}
          </td>
          <td>{r.dest_name}</td>
          <td>{r.msisdn_dest}</td>
          <td class="num">{fcfa(r.montant)}</td>
          <td>{r.evidence_count}</td>
          <td>
            {!r.contradicting_message_id && (
              <RowAction label={t("arb.settle")} of={`${r.dest_name} ${fcfa(r.montant)}`} onClick={() => onSettle(r)} />
            )}
          </td>
        </tr>
      )}
    />
  );
}

/** Operations settled on someone's word: who, when, and why. */
function SettledTable({ list }: { list: LiveList<SettledOnWord> }) {
  return (
    <DataTable
      list={list}
      caption={t("arb.settled")}
      columns={[t("common.finished"), t("common.name"), { num: t("common.amount") }, t("arb.by"), t("common.note")]}
      row={(r) => (
        <tr key={r.operation_id}>
          <td>{dateTime(r.arbitrated_at)}</td>
          <td>
            {r.dest_name} · {r.msisdn_dest}
          </td>
          <td class="num">{fcfa(r.montant)}</td>
          <td>{r.arbitrated_by_name}</td>
          <td>{r.arbitration_note}</td>
        </tr>
      )}
    />
  );
}

function Settle(props: { row: Unproven; onClose: () => void; onSettled: (o: Outcome) => void }) {
  const [arrived, setArrived] = useState<"arrived" | "did_not_arrive">("arrived");
  const [note, setNote] = useState("");
  const [outcome, setOutcome] = useState<Outcome>();
  // What the handset last saw: the operation's last USSD screen and its outcome, to decide on.
  const [operation, setOperation] = useState<Operation>();
  useEffect(() => {
    void call(() =>
      api.GET("/v1/operations/{operation_id}", { params: { path: { operation_id: props.row.operation_id } } }),
    ).then((r) => r.data && setOperation(r.data));
  }, [props.row.operation_id]);
  const submit = async (e: Event) => {
    e.preventDefault();
    const r = await call(() =>
      api.POST("/v1/operations/{operation_id}/settle", {
        params: { path: { operation_id: props.row.operation_id } },
        body: { outcome: arrived, note: note.trim() },
      }),
    );
    if (r.outcome) return setOutcome(r.outcome);
    props.onSettled({ ok: true, message: t("arb.done", { status: status(r.data.status) }) });
  };
  return (
    <Dialog title={`${t("arb.settle")} · ${props.row.dest_name} · ${fcfa(props.row.montant)}`} onClose={props.onClose}>
      {operation && (
        <section aria-label={t("arb.lastScreen")}>
          <h4>{t("arb.lastScreen")}</h4>
          <p>{t("arb.handsetSaid", { outcome: operation.failure_reason ?? operation.status })}</p>
          {operation.ussd_response ? <pre>{operation.ussd_response}</pre> : <p>{t("arb.noScreen")}</p>}
        </section>
      )}
      <form onSubmit={submit}>
        <fieldset>
          <legend>{t("arb.outcome")}</legend>
          <label>
            <input type="radio" name="outcome" checked={arrived === "arrived"} onChange={() => setArrived("arrived")} />
            {t("arb.arrived")}
          </label>
          <label>
            <input
              type="radio"
              name="outcome"
              checked={arrived === "did_not_arrive"}
              onChange={() => setArrived("did_not_arrive")}
            />
            {t("arb.notArrived")}
          </label>
        </fieldset>
        <Field label={t("common.note")} hint={t("v.max", { n: 500 })}>
          <textarea required maxLength={500} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
        </Field>
        <button type="submit" class="primary" disabled={!note.trim()}>
          {t("arb.settle")}
        </button>
      </form>
      <Answer outcome={outcome} />
    </Dialog>
  );
}
