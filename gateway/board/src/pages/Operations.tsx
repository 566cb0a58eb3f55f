import { useState } from "preact/hooks";
import { api, call, currentSession, pendingOutcome, pendingRequest, sendOnce, type Outcome } from "../api.ts";
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

/** The query of the list route: only the filters given (an empty one is not a filter). */
function queryOf(f: Filters) {
  const q: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(f)) if (v.trim() !== "") q[k] = k === "limit" ? Number(v) : v.trim();
  return q as { status?: string; limit?: number };
}

export function Operations() {
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
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
  const set = (k: keyof Filters) => (e: Event) => setDraft({ ...draft, [k]: (e.target as HTMLInputElement).value });

  return (
    <section>
      <h2>{t("ops.title")}</h2>
      <button type="button" class="primary" onClick={() => setCreating(true)}>
        {t("ops.create")}
      </button>
      <Answer outcome={outcome} />
      <details class="filters">
        <summary>{t("ops.filters")}</summary>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            setFilters(draft);
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

/** The create form, with the contract's checks shown as the user types (the server checks again). */
function CreateOperation({ onCreated }: { onCreated: (message: string) => void }) {
  // A sending whose outcome is unknown (5xx, no answer) comes back with its form as sent.
  const pending = pendingRequest(CREATE_KIND)?.values;
  const [operator, setOperator] = useState<Operator>((pending?.operator as Operator) ?? "operator_b");
  const [type, setType] = useState<OpType>((pending?.type as OpType) ?? DEFAULT_OP_TYPE);
  const [msisdn, setMsisdn] = useState(pending?.msisdn ?? "");
  const [name, setName] = useState(pending?.name ?? "");
  const [amount, setAmount] = useState(pending?.amount ?? "");
  const [merchant, setMerchant] = useState(pending?.merchant ?? "");
  const [contact, setContact] = useState(pending?.contact ?? "");
  const [touched, setTouched] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | undefined>(pending ? pendingOutcome() : undefined);
  const [unknown, setUnknown] = useState(Boolean(pending));
  const [busy, setBusy] = useState(false);
  const noRecipient = dialsNoRecipient(type);
  const problems = {
    msisdn: noRecipient ? undefined : msisdnProblem(msisdn, operator),
    name: noRecipient || name.trim() ? undefined : t("v.required"),
    amount: noRecipient ? undefined : amountProblem(amount),
    merchant: needsMerchantCode(operator, type) && !merchant.trim() ? t("v.merchant") : undefined,
  };
  const invalid = Object.values(problems).some(Boolean);
  const show = (p?: string) => (touched ? p : undefined);

  const submit = async (e: Event) => {
    e.preventDefault();
    setTouched(true);
    if (invalid || busy) return;
    setBusy(true);
    const r = await sendOnce(
      CREATE_KIND,
      { operator, type, msisdn, name, amount, merchant, contact },
      (requestId) =>
        api.POST("/v1/operations", {
          body: {
            request_id: requestId,
            operator,
            type_op: type,
            client: { msisdn: noRecipient ? "" : localDigits(msisdn), nom: noRecipient ? "" : name.trim() },
            montant: noRecipient ? 1 : Number(amount),
            merchant_code: merchant.trim() || null,
            contact_id: contact.trim() || null,
          },
        }),
      isOperation,
    );
    setBusy(false);
    if (r.outcome) {
      setUnknown(r.unknown);
      return setOutcome(r.outcome);
    }
    onCreated(t(r.earlier ? "ops.createdEarlier" : "ops.created", { id: r.data.operation_id }));
  };
  return (
    <form onSubmit={submit} noValidate>
      <Field label={t("common.operator")}>
        <select value={operator} onChange={(e) => setOperator(e.currentTarget.value as Operator)}>
          <option value="operator_a">operator_a</option>
          <option value="operator_b">operator_b</option>
        </select>
      </Field>
      <Field label={t("ops.type")}>
        <select value={type} onChange={(e) => setType(e.currentTarget.value as OpType)}>
          {OP_TYPES.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </Field>
      {!noRecipient && (
        <>
          <Field label={t("common.number")} error={show(problems.msisdn)}>
            <input
              inputMode="tel"
              value={msisdn}
              aria-invalid={Boolean(show(problems.msisdn))}
              onInput={(e) => setMsisdn(e.currentTarget.value)}
              onBlur={() => setTouched(true)}
            />
          </Field>
          <Field label={t("ops.recipient")} error={show(problems.name)}>
            <input
              value={name}
              maxLength={200}
              aria-invalid={Boolean(show(problems.name))}
              onInput={(e) => setName(e.currentTarget.value)}
            />
          </Field>
          <Field label={t("common.amount")} error={show(problems.amount)}>
            <input
              inputMode="numeric"
              value={amount}
              aria-invalid={Boolean(show(problems.amount))}
              onInput={(e) => setAmount(e.currentTarget.value)}
            />
          </Field>
        </>
      )}
      {needsMerchantCode(operator, type) && (
        <Field label={t("ops.merchant")} error={show(problems.merchant)}>
          <input value={merchant} maxLength={100} onInput={(e) => setMerchant(e.currentTarget.value)} />
        </Field>
      )}
      <Field label={t("common.contact")}>
        <input value={contact} maxLength={200} onInput={(e) => setContact(e.currentTarget.value)} />
      </Field>
      <button type="submit" class="primary" disabled={busy}>
        {unknown ? t("send.again") : t("common.send")}
      </button>
      <Answer outcome={outcome} />
    </form>
  );
}

/** One operation: its fields, its proof, its history; cancel while queued or running, retry when allowed. */
export function OperationDetail(props: { id: string; onClose: () => void; onChanged: () => void }) {
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
  const [outcome, setOutcome] = useState<Outcome>();
  const [confirmRetry, setConfirmRetry] = useState(false);
  // A retry whose outcome is unknown: sending it again reuses its request id.
  const [retryUnknown, setRetryUnknown] = useState(Boolean(pendingRequest(`operation.retry.${props.id}`)));
  const op = list.rows[0];

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
            <dd>{op.sim_id || "—"}</dd>
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
