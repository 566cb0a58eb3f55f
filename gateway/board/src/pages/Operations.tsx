import { useState } from "preact/hooks";
import { api, call, currentSession, pendingOutcome, pendingRequest, sendOnce, type Outcome } from "../api.ts";
import { useSimNames } from "../sim-names.ts";
import { t } from "../i18n.ts";
import { dateTime, fcfa, status } from "../format.ts";
import {
  amountProblem,
  DEFAULT_OP_TYPE,
  dialsNoRecipient,
  localDigits,
  msisdnProblem,
  needsMerchantCode,
  OP_TYPES,
  OPERATION_STATUSES,
  OPERATORS,
  type Operator,
  type OpType,
} from "../rules.ts";
import type { Operation } from "../types.ts";
import { Answer, Badge, DataTable, Dialog, Field, ListHead, RowAction, useHashItem, useLiveList } from "../ui.tsx";

interface Filters {
  status: string;
  sim_id: string;
  agent_id: string;
  date: string;
  date_from: string;
  date_to: string;
  search: string;
  limit: string;
}
const NO_FILTERS: Filters = {
  status: "",
  sim_id: "",
  agent_id: "",
  date: "",
  date_from: "",
  date_to: "",
  search: "",
  limit: "50",
};

/** The list's filters: those applied and the draft being typed, applied on submit. */
function useFilters() {
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const set = (k: keyof Filters) => (e: Event) => setDraft({ ...draft, [k]: (e.target as HTMLInputElement).value });
  return { filters, draft, set, apply: () => setFilters(draft) };
}

/** The query of the list route: only the filters given (an empty one is not a filter). */
function queryOf(f: Filters) {
  const q: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(f)) if (v.trim() !== "") q[k] = k === "limit" ? Number(v) : v.trim();
  return q as { status?: string; limit?: number };
}

/** The list's filters, applied on submit. */
function OperationFilters(p: Omit<ReturnType<typeof useFilters>, "filters"> & { isAdmin: boolean }) {
  const { draft, set, apply, isAdmin } = p;
  return (
    <details class="filters">
      <summary>{t("ops.filters")}</summary>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          apply();
        }}
      >
        <Field label={t("common.status")}>
          <select value={draft.status} onChange={set("status")}>
            <option value="">{t("ops.any")}</option>
            {OPERATION_STATUSES.map((s) => (
              <option key={s} value={s}>
                {status(s)}
              </option>
            ))}
          </select>
        </Field>
        <Field label={t("ops.search")}>
          <input type="search" value={draft.search} maxLength={200} onInput={set("search")} />
        </Field>
        <Field label={t("common.sim")}>
          <input value={draft.sim_id} maxLength={100} onInput={set("sim_id")} />
        </Field>
        {isAdmin && (
          <Field label={t("ops.agent")}>
            <input value={draft.agent_id} onInput={set("agent_id")} />
          </Field>
        )}
        <Field label={t("ops.date")}>
          <input type="date" value={draft.date} onInput={set("date")} />
        </Field>
        <Field label={t("ops.dateFrom")}>
          <input type="date" value={draft.date_from} onInput={set("date_from")} />
        </Field>
        <Field label={t("ops.dateTo")}>
          <input type="date" value={draft.date_to} onInput={set("date_to")} />
        </Field>
        <Field label={t("ops.limit")}>
          <input type="number" min={1} max={250} value={draft.limit} onInput={set("limit")} />
        </Field>
        <button type="submit">{t("ops.apply")}</button>
      </form>
    </details>
  );
}

export function Operations() {
  const { filters, draft, set, apply } = useFilters();
  const [open, setOpen] = useHashItem("operations");
  const [creating, setCreating] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>();
  const list = useLiveList<Operation>(
    () => call(() => api.GET("/v1/operations", { params: { query: queryOf(filters) } })),
    (o) => o.operation_id,
    ["operation"],
    [filters],
  );
  const isAdmin = currentSession()?.role === "admin";

  return (
    <section>
      <h2>{t("ops.title")}</h2>
      <button type="button" class="primary" onClick={() => setCreating(true)}>
        {t("ops.create")}
      </button>
      <Answer outcome={outcome} />
      <OperationFilters draft={draft} set={set} apply={apply} isAdmin={isAdmin} />
      <DataTable
        list={list}
        caption={t("ops.title")}
        columns={[
          t("common.created"),
          t("common.status"),
          t("common.name"),
          t("common.number"),
          { num: t("common.amount") },
          t("common.actions"),
        ]}
        row={(o) => (
          <tr key={o.operation_id}>
            <td>{dateTime(o.created_at)}</td>
            <td>
              <Badge state={o.status} />
            </td>
            <td>{o.dest_name}</td>
            <td>{o.msisdn_dest}</td>
            <td class="num">{fcfa(o.montant)}</td>
            <td>
              <RowAction
                label={t("common.details")}
                of={`${o.dest_name} ${fcfa(o.montant)}`}
                onClick={() => setOpen(o.operation_id)}
              />
            </td>
          </tr>
        )}
      />
      {open && <OperationDetail id={open} onClose={() => setOpen(undefined)} onChanged={() => void list.reload()} />}
      {creating && (
        <Dialog title={t("ops.create")} onClose={() => setCreating(false)}>
          <CreateOperation
            onCreated={(message) => {
              setCreating(false);
              setOutcome({ ok: true, message });
              void list.reload();
            }}
          />
        </Dialog>
      )}
    </section>
  );
}

const CREATE_KIND = "operation.create";

/** An operation in a 409's body: the request was made before (the body of another 409 is an error). */
const isOperation = (b: unknown): b is { operation_id: string } =>
  typeof b === "object" && b !== null && typeof (b as { operation_id?: unknown }).operation_id === "string";

/** The create form's values; a sending whose outcome is unknown (5xx, no answer) comes back as sent. */
interface Draft {
  operator: Operator;
  type: OpType;
  msisdn: string;
  name: string;
  amount: string;
  merchant: string;
  contact: string;
}

function useDraft(pending: Record<string, string> | undefined) {
  const [draft, setDraft] = useState<Draft>(() => ({
    operator: (pending?.operator as Operator) ?? "operator_b",
    type: (pending?.type as OpType) ?? DEFAULT_OP_TYPE,
    msisdn: pending?.msisdn ?? "",
    name: pending?.name ?? "",
    amount: pending?.amount ?? "",
    merchant: pending?.merchant ?? "",
    contact: pending?.contact ?? "",
  }));
  const set =
    <K extends keyof Draft>(k: K) =>
    (v: Draft[K]) =>
      setDraft((d) => ({ ...d, [k]: v }));
  return { draft, set };
}

/** A sending: busy while it runs, its outcome, and whether an earlier one's is unknown (send again). */
function useSending(pending: boolean) {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | undefined>(pending ? pendingOutcome() : undefined);
  const [unknown, setUnknown] = useState(pending);
  return { busy, setBusy, outcome, setOutcome, unknown, setUnknown };
}

/** The contract's checks of a draft (the server checks again). */
function problemsOf(d: Draft) {
  const noRecipient = dialsNoRecipient(d.type);
  return {
    msisdn: noRecipient ? undefined : msisdnProblem(d.msisdn, d.operator),
    name: noRecipient || d.name.trim() ? undefined : t("v.required"),
    amount: noRecipient ? undefined : amountProblem(d.amount),
    merchant: needsMerchantCode(d.operator, d.type) && !d.merchant.trim() ? t("v.merchant") : undefined,
  };
}

function createBody(d: Draft, requestId: string) {
  const noRecipient = dialsNoRecipient(d.type);
  return {
    request_id: requestId,
    operator: d.operator,
    type_op: d.type,
    client: { msisdn: noRecipient ? "" : localDigits(d.msisdn), nom: noRecipient ? "" : d.name.trim() },
    montant: noRecipient ? 1 : Number(d.amount),
    merchant_code: d.merchant.trim() || null,
    contact_id: d.contact.trim() || null,
  };
}

/** The create form, with the contract's checks shown as the user types (the server checks again). */
function CreateOperation({ onCreated }: { onCreated: (message: string) => void }) {
  const pending = pendingRequest(CREATE_KIND)?.values;
  const { draft, set } = useDraft(pending);
  const sending = useSending(Boolean(pending));
  const [touched, setTouched] = useState(false);
  const problems = problemsOf(draft);
  const invalid = Object.values(problems).some(Boolean);
  const show = (p?: string) => (touched ? p : undefined);

  const submit = async (e: Event) => {
    e.preventDefault();
    setTouched(true);
    if (invalid || sending.busy) return;
    sending.setBusy(true);
    const r = await sendOnce(
      CREATE_KIND,
      { ...draft },
      (requestId) => api.POST("/v1/operations", { body: createBody(draft, requestId) }),
      isOperation,
    );
    sending.setBusy(false);
    if (r.outcome) {
      sending.setUnknown(r.unknown);
      return sending.setOutcome(r.outcome);
    }
    onCreated(t(r.earlier ? "ops.createdEarlier" : "ops.created", { id: r.data.operation_id }));
  };
  return (
    <form onSubmit={submit} noValidate>
      <Field label={t("common.operator")}>
        <select value={draft.operator} onChange={(e) => set("operator")(e.currentTarget.value as Operator)}>
          {OPERATORS.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </Field>
      <Field label={t("ops.type")}>
        <select value={draft.type} onChange={(e) => set("type")(e.currentTarget.value as OpType)}>
          {OP_TYPES.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </Field>
      {!dialsNoRecipient(draft.type) && (
        <RecipientFields draft={draft} set={set} show={show} problems={problems} onBlur={() => setTouched(true)} />
      )}
      {needsMerchantCode(draft.operator, draft.type) && (
        <Field label={t("ops.merchant")} error={show(problems.merchant)}>
          <input value={draft.merchant} maxLength={100} onInput={(e) => set("merchant")(e.currentTarget.value)} />
        </Field>
      )}
      <Field label={t("common.contact")}>
        <input value={draft.contact} maxLength={200} onInput={(e) => set("contact")(e.currentTarget.value)} />
      </Field>
      <button type="submit" class="primary" disabled={sending.busy}>
        {sending.unknown ? t("send.again") : t("common.send")}
      </button>
      <Answer outcome={sending.outcome} />
    </form>
  );
}

/** The number, name and amount of an operation that dials a recipient. */
function RecipientFields(p: {
  draft: Draft;
  set: ReturnType<typeof useDraft>["set"];
  show: (problem?: string) => string | undefined;
  problems: ReturnType<typeof problemsOf>;
  onBlur: () => void;
}) {
  const { draft, set, show, problems } = p;
  return (
    <>
      <Field label={t("common.number")} error={show(problems.msisdn)}>
        <input
          inputMode="tel"
          value={draft.msisdn}
          aria-invalid={Boolean(show(problems.msisdn))}
          onInput={(e) => set("msisdn")(e.currentTarget.value)}
          onBlur={p.onBlur}
        />
      </Field>
      <Field label={t("ops.recipient")} error={show(problems.name)}>
        <input
          value={draft.name}
          maxLength={200}
          aria-invalid={Boolean(show(problems.name))}
          onInput={(e) => set("name")(e.currentTarget.value)}
        />
      </Field>
      <Field label={t("common.amount")} error={show(problems.amount)}>
        <input
          inputMode="numeric"
          value={draft.amount}
          aria-invalid={Boolean(show(problems.amount))}
          onInput={(e) => set("amount")(e.currentTarget.value)}
        />
      </Field>
    </>
  );
}

/**
 * A retry's state: asked for confirmation (a retry that may pay twice), and unknown (sent with
 * no definite answer: sending it again reuses its request id).
 */
function useRetry(operationId: string) {
  const [confirmRetry, setConfirmRetry] = useState(false);
  const [retryUnknown, setRetryUnknown] = useState(Boolean(pendingRequest(`operation.retry.${operationId}`)));
  return { confirmRetry, setConfirmRetry, retryUnknown, setRetryUnknown };
}

/** What the detail does to an operation: cancel it, retry it (asking first when it may pay twice). */
function useOperationActions(
  props: { id: string; onChanged: () => void },
  op: Operation | undefined,
  list: { reload: () => unknown },
) {
  const [outcome, setOutcome] = useState<Outcome>();
  const { confirmRetry, setConfirmRetry, retryUnknown, setRetryUnknown } = useRetry(props.id);

  const cancel = async () => {
    const r = await call(() =>
      api.POST("/v1/operations/{operation_id}/cancel", { params: { path: { operation_id: props.id } } }),
    );
    setOutcome(r.outcome ?? { ok: true, message: t("ops.cancelled") });
    void list.reload();
    props.onChanged();
  };
  const retry = async () => {
    if (!op) return;
    if (op.retry_requires_confirmation && !confirmRetry) return setConfirmRetry(true);
    setConfirmRetry(false);
    const r = await sendOnce(
      `operation.retry.${op.operation_id}`,
      {},
      (requestId) =>
        api.POST("/v1/operations", {
          body: {
            request_id: requestId,
            parent_operation_id: op.operation_id,
            operator: op.operator as Operator,
            type_op: op.op_type as OpType,
            client: { msisdn: op.msisdn_dest ?? "", nom: op.dest_name ?? "" },
            montant: op.montant,
            contact_id: op.contact_id || null,
          },
        }),
      isOperation,
    );
    setRetryUnknown(Boolean(r.outcome && r.unknown));
    setOutcome(
      r.outcome ?? {
        ok: true,
        message: t(r.earlier ? "ops.retriedEarlier" : "ops.retried", { id: r.data.operation_id }),
      },
    );
    void list.reload();
    props.onChanged();
  };
  return { outcome, confirmRetry, setConfirmRetry, retryUnknown, cancel, retry };
}

/** One operation: its fields, its proof, its history; cancel while queued or running, retry when allowed. */
export function OperationDetail(props: { id: string; onClose: () => void; onChanged: () => void }) {
  const simName = useSimNames();
  const list = useLiveList<Operation>(
    async () => {
      const r = await call(() =>
        api.GET("/v1/operations/{operation_id}", { params: { path: { operation_id: props.id } } }),
      );
      return r.data ? { data: [r.data] } : { outcome: r.outcome };
    },
    (o) => o.operation_id,
    ["operation"],
    [props.id],
  );
  const op = list.rows[0];
  const { outcome, confirmRetry, setConfirmRetry, retryUnknown, cancel, retry } = useOperationActions(props, op, list);

  return (
    <Dialog
      title={op ? `${op.dest_name || op.op_type} · ${fcfa(op.montant)}` : t("common.loading")}
      onClose={props.onClose}
    >
      <ListHead list={list} />
      {op && (
        <>
          <p>
            <Badge state={op.status} />
          </p>
          <OperationFacts op={op} simName={simName} />
          <OperationHistory op={op} />
          <OperationEvidence op={op} />
          <div class="actions">
            {(op.status === "queued" || op.status === "running") && (
              <button type="button" onClick={() => void cancel()}>
                {t("ops.cancel")}
              </button>
            )}
            {(op.retry_allowed || retryUnknown) && (
              <button type="button" onClick={() => void retry()}>
                {retryUnknown ? t("send.again") : t("ops.retry")}
              </button>
            )}
          </div>
          {confirmRetry && (
            <div role="alertdialog" aria-labelledby="retry-q" class="confirm">
              <p id="retry-q">{t("ops.retryConfirm")}</p>
              <button type="button" onClick={() => void retry()}>
                {t("ops.retry")}
              </button>
              <button type="button" onClick={() => setConfirmRetry(false)}>
                {t("common.cancel")}
              </button>
            </div>
          )}
        </>
      )}
      <Answer outcome={outcome} />
    </Dialog>
  );
}

/** An operation's fields. */
function OperationFacts({ op, simName }: { op: Operation; simName: ReturnType<typeof useSimNames> }) {
  return (
    <dl class="facts">
      <dt>{t("common.number")}</dt>
      <dd>{op.msisdn_dest}</dd>
      <dt>{t("common.operator")}</dt>
      <dd>{op.operator}</dd>
      <dt>{t("ops.type")}</dt>
      <dd>{op.op_type}</dd>
      <dt>{t("ops.origin")}</dt>
      <dd>{op.origin}</dd>
      <dt>{t("common.sim")}</dt>
      <dd>{simName(op.sim_id)}</dd>
      <dt>{t("ops.device")}</dt>
      <dd>{op.device_label || "—"}</dd>
      <dt>{t("ops.request")}</dt>
      <dd class="mono">{op.request_id}</dd>
      {op.reject_reason && (
        <>
          <dt>{t("ops.rejectReason")}</dt>
          <dd>{op.reject_reason}</dd>
        </>
      )}
      {op.failure_reason && (
        <>
          {/* A confirmed operation's reason is what the handset reported, not a failure. */}
          <dt>{t(op.status === "confirmed" ? "ops.handsetReported" : "ops.failureReason")}</dt>
          <dd>{op.failure_reason}</dd>
        </>
      )}
    </dl>
  );
}

/** When an operation was created, started and finished. */
function OperationHistory({ op }: { op: Operation }) {
  return (
    <>
      <h3>{t("ops.history")}</h3>
      <ol class="history">
        <li>
          {t("ops.h.created")}: {dateTime(op.created_at)}
        </li>
        {op.started_at && (
          <li>
            {t("ops.h.started")}: {dateTime(op.started_at)}
          </li>
        )}
        {op.finished_at && (
          <li>
            {t("ops.h.finished")} ({status(op.status)}): {dateTime(op.finished_at)}
          </li>
        )}
      </ol>
    </>
  );
}

/** The SMS that proves an operation, or that none has come. */
function OperationEvidence({ op }: { op: Operation }) {
  return (
    <>
      <h3>{t("ops.evidence")}</h3>
      {op.evidence ? (
        <dl class="facts">
          <dt>{t("ops.ref")}</dt>
          <dd>{op.evidence.operator_ref}</dd>
          <dt>{t("common.amount")}</dt>
          <dd>{fcfa(op.evidence.amount)}</dd>
          <dt>{t("ops.fee")}</dt>
          <dd>{fcfa(op.evidence.fee)}</dd>
          <dt>{t("ops.balanceAfter")}</dt>
          <dd>{fcfa(op.evidence.balance_after)}</dd>
          <dt>{t("common.received")}</dt>
          <dd>{dateTime(op.evidence.received_at)}</dd>
          <dt>{t("msg.text")}</dt>
          <dd class="sms">{op.evidence.raw_text}</dd>
        </dl>
      ) : (
        <p>{t("ops.noEvidence")}</p>
      )}
    </>
  );
}
