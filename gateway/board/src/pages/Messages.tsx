import { useState } from "preact/hooks";
import { api, call, type Outcome } from "../api.ts";
import { known, t } from "../i18n.ts";
import { dateTime, fcfa, status } from "../format.ts";
import type { Evidence, Movement, Operation } from "../types.ts";
import { localDigits, PROVABLE_OPERATION_STATUSES } from "../rules.ts";
import { DISMISS_REASONS, type DismissReason } from "../../../../services/evidence/src/domain/dismiss-reasons.ts";
import { useSimNames, type SimName } from "../sim-names.ts";
import { Answer, DataTable, Dialog, Field, ListHead, RowAction, useLiveList, type LiveList } from "../ui.tsx";

/** Statuses an SMS can still prove (attach confirms a non-terminal or no_evidence operation): the kit's list. */
const PROVABLE = new Set<string>(PROVABLE_OPERATION_STATUSES);

export function Messages() {
  const simName = useSimNames();
  const [open, setOpen] = useState<Evidence>();
  const [outcome, setOutcome] = useState<Outcome>();
  const orphans = useLiveList<Evidence>(
    () => call(() => api.GET("/v1/evidences", { params: { query: { unmatched: "true", all: "true", limit: 250 } } })),
    (e) => e.id,
    ["message", "operation"],
    [],
  );
  const movements = useLiveList<Movement>(
    () => call(() => api.GET("/v1/evidences/movements", { params: { query: { limit: 100 } } })),
    (e) => e.id,
    ["message"],
    [],
  );
  return (
    <section>
      <h2>{t("msg.title")}</h2>
      <Answer outcome={outcome} />
      <h3>{t("msg.unmatched")}</h3>
      <OrphansTable list={orphans} simName={simName} onOpen={setOpen} />
      <h3>{t("msg.movements")}</h3>
      <MovementsTable list={movements} />
      {open && (
        <Orphan
          evidence={open}
          simName={simName}
          onClose={() => setOpen(undefined)}
          onDone={(o) => {
            setOpen(undefined);
            setOutcome(o);
            void orphans.reload();
          }}
        />
      )}
    </section>
  );
}

/** The SMS no operation claimed, each opened to attach or dismiss. */
function OrphansTable(p: { list: LiveList<Evidence>; simName: SimName; onOpen: (e: Evidence) => void }) {
  return (
    <DataTable
      list={p.list}
      caption={t("msg.unmatched")}
      columns={[
        t("common.received"),
        t("msg.kind"),
        { num: t("common.amount") },
        t("msg.counterparty"),
        t("common.sim"),
        t("msg.sender"),
        t("msg.proves"),
        t("common.actions"),
      ]}
      row={(e) => (
        <tr key={e.id}>
          <td>{dateTime(e.received_at)}</td>
          <td>
            {e.kind ?? "—"}
            {e.is_ambiguous && <small> · {t("msg.ambiguous")}</small>}
          </td>
          <td class="num">{fcfa(e.amount)}</td>
          <td>
            {e.counterparty_name} {e.counterparty_msisdn}
          </td>
          <td>{p.simName(e.sim_id)}</td>
          <td title={e.sender}>{e.sender_is_operator ? t("msg.senderOperator") : t("msg.senderUnknown")}</td>
          <td>{e.can_prove ? t("msg.provesYes") : t("msg.provesNo")}</td>
          <td>
            <RowAction label={t("common.details")} of={fcfa(e.amount)} onClick={() => p.onOpen(e)} />
          </td>
        </tr>
      )}
    />
  );
}

/** The money movements the SMS reported. */
function MovementsTable({ list }: { list: LiveList<Movement> }) {
  return (
    <DataTable
      list={list}
      caption={t("msg.movements")}
      columns={[
        t("common.received"),
        t("msg.kind"),
        t("msg.direction"),
        { num: t("common.amount") },
        t("msg.counterparty"),
      ]}
      row={(e) => (
        <tr key={e.id}>
          <td>{dateTime(e.received_at)}</td>
          <td>{e.kind}</td>
          <td>{e.direction}</td>
          <td class="num">{fcfa(e.amount)}</td>
          <td>
            {e.counterparty_name} {e.counterparty_msisdn}
          </td>
        </tr>
      )}
    />
  );
}

/** Why an SMS can prove nothing, in the user's language. */
function cannotProve(reason: string): string {
  const key = `msg.cannot.${reason}`;
  return known(key) ? t(key) : reason;
}

/**
 * What the SMS says that the operation does not, named before anyone attaches: the amount, and
 * the number when the SMS gives one in full. The server decides (an attach with a different
 * amount or number is refused, in the user's language); this only says it beforehand.
 */
function Differences({ evidence: e, operation: o }: { evidence: Evidence; operation: Operation }) {
  const named: string[] = [];
  if (e.amount !== null && e.amount !== undefined && e.amount !== o.montant) {
    const gap = fcfa(Math.abs(e.amount - o.montant));
    named.push(t(e.amount > o.montant ? "msg.diff.more" : "msg.diff.less", { gap }));
  }
  // The number rules of the kit (rules.ts): a masked or partial number names nothing.
  const smsNumber = localDigits(e.counterparty_msisdn ?? "");
  if (/^\d{9}$/.test(smsNumber) && smsNumber !== localDigits(o.msisdn_dest ?? ""))
    named.push(t("msg.diff.number", { number: e.counterparty_msisdn ?? "" }));
  if (named.length === 0) return <span class="same">{t("msg.diff.none")}</span>;
  return <span class="diff">{named.join(" · ")}</span>;
}

/** One orphan SMS: its parsed fields, the operations it could prove (same SIM, closest amount first), attach or dismiss. */
function Orphan(props: { evidence: Evidence; simName: SimName; onClose: () => void; onDone: (o: Outcome) => void }) {
  const e = props.evidence;
  const [reason, setReason] = useState<DismissReason>("not_ours");
  const [outcome, setOutcome] = useState<Outcome>();
  const candidates = useCandidates(e);
  const attach = async (operationId: string) => {
    const r = await call(() =>
      api.POST("/v1/operations/{operation_id}/evidence", {
        params: { path: { operation_id: operationId } },
        body: { evidence_id: e.id },
      }),
    );
    if (r.outcome) return setOutcome(r.outcome);
    props.onDone({ ok: true, message: t("msg.attached") });
  };
  const dismiss = async (ev: Event) => {
    ev.preventDefault();
    const r = await call(() =>
      api.POST("/v1/evidences/{evidence_id}/dismiss", { params: { path: { evidence_id: e.id } }, body: { reason } }),
    );
    if (r.outcome) return setOutcome(r.outcome);
    props.onDone({ ok: true, message: t("msg.dismissed") });
  };
  return (
    <Dialog title={`${e.kind ?? "SMS"} · ${fcfa(e.amount)}`} onClose={props.onClose}>
      <OrphanFacts evidence={e} simName={props.simName} />
      <h3>{t("msg.candidates")}</h3>
      {e.cannot_prove_reason ? (
        <p>{cannotProve(e.cannot_prove_reason)}</p>
      ) : (
        <>
          <ListHead list={candidates} />
          {candidates.rows.length === 0 && !candidates.loading && <p>{t("msg.noCandidates")}</p>}
        </>
      )}
      <Candidates evidence={e} rows={candidates.rows} onAttach={(id) => void attach(id)} />
      <DismissForm reason={reason} setReason={setReason} onSubmit={dismiss} />
      <Answer outcome={outcome} />
    </Dialog>
  );
}

/**
 * The operations an orphan SMS could prove: same SIM, still provable, closest amount first (an
 * SMS is an orphan because it matched nothing exactly); none for a text that proves nothing.
 */
function useCandidates(e: Evidence) {
  return useLiveList<Operation>(
    async () => {
      // A text that could prove nothing by itself (an unknown sender's, a refusal) is offered to no operation.
      if (!e.can_prove) return { data: [] };
      const r = await call(() => api.GET("/v1/operations", { params: { query: { sim_id: e.sim_id, limit: 250 } } }));
      if (!r.data) return r;
      // Closest amount first: an SMS is an orphan because it matched nothing exactly.
      const gap = (o: Operation) => Math.abs(o.montant - (e.amount ?? 0));
      return {
        data: r.data
          .filter((o) => PROVABLE.has(o.status))
          .sort((a, b) => gap(a) - gap(b))
          .slice(0, 20),
      };
    },
    (o) => o.operation_id,
    ["operation"],
    [e.id],
  );
}

/** An orphan SMS's parsed fields, its SIM and sender, and its text. */
function OrphanFacts({ evidence: e, simName }: { evidence: Evidence; simName: SimName }) {
  return (
    <dl class="facts">
      <dt>{t("common.received")}</dt>
      <dd>{dateTime(e.received_at)}</dd>
      <dt>{t("ops.ref")}</dt>
      <dd>{e.operator_ref || "—"}</dd>
      <dt>{t("ops.fee")}</dt>
      <dd>{fcfa(e.fee)}</dd>
      <dt>{t("ops.balanceAfter")}</dt>
      <dd>{fcfa(e.balance_after)}</dd>
      <dt>{t("msg.counterparty")}</dt>
      <dd>
        {e.counterparty_name} {e.counterparty_msisdn}
      </dd>
      <dt>{t("common.sim")}</dt>
      <dd>{simName(e.sim_id)}</dd>
      <dt>{t("msg.sender")}</dt>
      <dd>
        {e.sender_is_operator ? t("msg.senderOperator") : t("msg.senderUnknown")} ({e.sender})
      </dd>
      <dt>{t("msg.text")}</dt>
      <dd class="sms">{e.raw_text}</dd>
    </dl>
  );
}

/** The operations an SMS could prove, with what differs, each with its attach button. */
function Candidates(p: { evidence: Evidence; rows: Operation[]; onAttach: (operationId: string) => void }) {
  return (
    <ul class="candidates">
      {p.rows.map((o) => (
        <li key={o.operation_id}>
          <span>
            {o.dest_name} · {o.msisdn_dest} · {fcfa(o.montant)} · {status(o.status)} · {dateTime(o.created_at)}
          </span>
          <Differences evidence={p.evidence} operation={o} />
          <button
            type="button"
            aria-label={t("msg.attachTo", {
              operation: `${o.dest_name ?? ""} · ${o.msisdn_dest ?? ""} · ${fcfa(o.montant)} · ${dateTime(o.created_at)}`,
            })}
            onClick={() => p.onAttach(o.operation_id)}
          >
            {t("msg.attach")}
          </button>
        </li>
      ))}
    </ul>
  );
}

/** Dismisses an SMS for a reason. */
function DismissForm(p: {
  reason: DismissReason;
  setReason: (r: DismissReason) => void;
  onSubmit: (ev: Event) => void;
}) {
  return (
    <form onSubmit={p.onSubmit} class="inline">
      <Field label={t("common.reason")}>
        <select value={p.reason} onChange={(ev) => p.setReason(ev.currentTarget.value as DismissReason)}>
          {DISMISS_REASONS.map((r) => {
            const key = `dr.${r}`;
            return (
              <option key={r} value={r}>
                {known(key) ? t(key) : r}
              </option>
            );
          })}
        </select>
      </Field>
      <button type="submit">{t("msg.dismiss")}</button>
    </form>
  );
}
