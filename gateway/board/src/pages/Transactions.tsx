import { useRef, useState } from "preact/hooks";
import { api, call, type Outcome } from "../api.ts";
import { t } from "../i18n.ts";
import { dateTime, fcfa, status } from "../format.ts";
import type { Operation, Transaction, TransactionRow } from "../types.ts";
import { Answer, Badge, DataTable, Dialog, Field, ListHead, RowAction, useHashItem, useLiveList } from "../ui.tsx";

const byPendingFirst = (a: TransactionRow, b: TransactionRow) =>
  Number(b.state === "pending") - Number(a.state === "pending") ||
  Date.parse(b.created_at ?? "") - Date.parse(a.created_at ?? "");

export function Transactions() {
  const [open, setOpen] = useHashItem("transactions");
  const list = useLiveList<TransactionRow>(
    async () => {
      const r = await call(() => api.GET("/v1/transactions", { params: { query: { limit: 250 } } }));
      return r.data ? { data: [...r.data].sort(byPendingFirst) } : r;
    },
    (x) => x.id,
    ["transaction"],
    [],
  );
  return (
    <section>
      <h2>{t("tx.title")}</h2>
      <DataTable
        list={list}
        caption={t("tx.title")}
        columns={[
          t("tx.state"),
          t("tx.receiver"),
          t("common.number"),
          { num: t("common.amount") },
          t("tx.payment"),
          t("tx.date"),
          t("common.actions"),
        ]}
        row={(x) => (
          <tr key={x.id}>
            <td>
              <Badge state={x.state} />
            </td>
            <td>{x.receiver_name}</td>
            <td>{x.receiver_phone}</td>
            <td class="num">{fcfa(x.received_amount_xaf)}</td>
            <td>{x.payment_confirmed_at ? t("tx.paid") : t("tx.unpaid")}</td>
            <td>{dateTime(x.transaction_date)}</td>
            <td>
              <RowAction
                label={t("common.details")}
                of={`${x.receiver_name} ${fcfa(x.received_amount_xaf)}`}
                onClick={() => setOpen(x.id)}
              />
            </td>
          </tr>
        )}
      />
      {open && <TransactionDetail id={open} onClose={() => setOpen(undefined)} onChanged={() => void list.reload()} />}
    </section>
  );
}

type Form = "correct" | "cancel" | undefined;

function TransactionDetail(props: { id: string; onClose: () => void; onChanged: () => void }) {
  const path = { params: { path: { transaction_id: props.id } } };
  // An agent sees pending transactions and those it launched: one it cancels or closes leaves
  // its view (404 on the next read). The action's answer is then what the dialog shows.
  const answered = useRef<Transaction | undefined>(undefined);
  const list = useLiveList<Transaction>(
    async () => {
      const r = await call(() => api.GET("/v1/transactions/{transaction_id}", path));
      if (r.data) return { data: [r.data] };
      return answered.current ? { data: [answered.current] } : { outcome: r.outcome };
    },
    (x) => x.id,
    ["transaction"],
    [props.id],
  );
  const [outcome, setOutcome] = useState<Outcome>();
  const [form, setForm] = useState<Form>();
  const x = list.rows[0];

  /** Runs one action, shows the API's answer, and refetches the transaction and the board. */
  const act = async (run: () => Promise<{ data?: unknown; error?: unknown; response: Response }>, done: string) => {
    const r = await call(run);
    if ((r.data as Transaction | undefined)?.state) answered.current = r.data as Transaction;
    setOutcome(r.outcome ?? { ok: true, message: done });
    if (!r.outcome) setForm(undefined);
    void list.reload();
    props.onChanged();
    return r;
  };
  const launch = async () => {
    const r = await act(() => api.POST("/v1/transactions/{transaction_id}/launch", path), "");
    const launched = r.data as { operation_id?: string } | undefined;
    if (launched?.operation_id) setOutcome({ ok: true, message: t("tx.launched", { id: launched.operation_id }) });
  };

  return (
    <Dialog
      title={x ? `${x.receiver_name} · ${fcfa(x.received_amount_xaf)}` : t("common.loading")}
      onClose={props.onClose}
    >
      <ListHead list={list} />
      {x && (
        <>
          <p>
            <Badge state={x.state} />
          </p>
          <TxFacts x={x} />
          <TxChanges x={x} />
          {x.operation_id && <FollowOperation id={x.operation_id} />}
          {x.state === "pending" && <TxActions x={x} path={path} act={act} launch={launch} setForm={setForm} />}
          <TxForm form={form} x={x} path={path} act={act} />
        </>
      )}
      <Answer outcome={outcome} />
    </Dialog>
  );
}

/** A transaction's route path. */
type TxPath = { params: { path: { transaction_id: string } } };
/** Runs one action on the transaction, shows the API's answer and refetches. */
type Act = (
  run: () => Promise<{ data?: unknown; error?: unknown; response: Response }>,
  done: string,
) => Promise<unknown>;

/** The receiver (and whether the partner checked the name), the customer, the amount, the payment. */
function TxFacts({ x }: { x: Transaction }) {
  return (
    <dl class="facts">
      <dt>{t("tx.receiver")}</dt>
      <dd>
        {x.receiver_name} · {x.receiver_phone} · {x.operator}
      </dd>
      <dt>{t("tx.nameCheck")}</dt>
      <dd>{x.partner_verify && x.receiver_verified ? t("tx.nameVerified") : t("tx.nameUnverified")}</dd>
      <dt>{t("tx.customer")}</dt>
      <dd>
        {x.customer_name ?? "—"} {x.customer_phone ?? ""}
      </dd>
      <dt>{t("common.amount")}</dt>
      <dd>{fcfa(x.received_amount_xaf)}</dd>
      <dt>{t("tx.payment")}</dt>
      <dd>{x.payment_confirmed_at ? `${t("tx.paid")} · ${dateTime(x.payment_confirmed_at)}` : t("tx.unpaid")}</dd>
      {x.cancelled_reason && (
        <>
          <dt>{t("common.reason")}</dt>
          <dd>{x.cancelled_reason}</dd>
        </>
      )}
    </dl>
  );
}

/** Who changed the receiver, when, from what to what (nothing when nobody did). */
function TxChanges({ x }: { x: Transaction }) {
  if (x.receiver_changes.length === 0) return null;
  return (
    <section aria-label={t("tx.changes")}>
      <h3>{t("tx.changes")}</h3>
      <ol>
        {x.receiver_changes.map((c, i) => (
          <li key={`${c.changed_at}-${i}`}>
            {t("tx.change", {
              when: dateTime(c.changed_at),
              who: c.agent_name,
              before: `${c.before.receiver_name} ${c.before.receiver_phone}`,
              after: `${c.after.receiver_name} ${c.after.receiver_phone}`,
            })}
          </li>
        ))}
      </ol>
    </section>
  );
}

/** What a pending transaction allows: (un)confirm the payment, launch, correct, cancel, close. */
function TxActions(p: {
  x: Transaction;
  path: TxPath;
  act: Act;
  launch: () => Promise<void>;
  setForm: (form: Form) => void;
}) {
  const { x } = p;
  return (
    <div class="actions">
      {x.payment_confirmed_at ? (
        <button
          type="button"
          onClick={() =>
            void p.act(
              () => api.DELETE("/v1/transactions/{transaction_id}/payment-confirmation", p.path),
              t("tx.updated"),
            )
          }
        >
          {t("tx.undoPayment")}
        </button>
      ) : (
        <button
          type="button"
          onClick={() =>
            void p.act(
              () => api.POST("/v1/transactions/{transaction_id}/payment-confirmation", p.path),
              t("tx.updated"),
            )
          }
        >
          {t("tx.confirmPayment")}
        </button>
      )}
      <button type="button" class="primary" onClick={() => void p.launch()}>
        {t("tx.launch")}
      </button>
      <button type="button" onClick={() => p.setForm("correct")}>
        {t("tx.correct")}
      </button>
      <button type="button" onClick={() => p.setForm("cancel")}>
        {t("tx.cancel")}
      </button>
      <button
        type="button"
        onClick={() =>
          void p.act(() => api.POST("/v1/transactions/{transaction_id}/close-by-receipt", p.path), t("tx.updated"))
        }
      >
        {t("tx.close")}
      </button>
    </div>
  );
}

/** The form asked for: correct the receiver, or cancel with a reason. */
function TxForm(p: { form: Form; x: Transaction; path: TxPath; act: Act }) {
  return (
    <>
      {p.form === "correct" && (
        <CorrectReceiver
          tx={p.x}
          onSubmit={(body) =>
            void p.act(
              () => api.PATCH("/v1/transactions/{transaction_id}/receiver", { ...p.path, body }),
              t("tx.updated"),
            )
          }
        />
      )}
      {p.form === "cancel" && (
        <ReasonForm
          label={t("common.reason")}
          submit={t("tx.cancel")}
          onSubmit={(reason) =>
            void p.act(
              () => api.POST("/v1/transactions/{transaction_id}/cancel", { ...p.path, body: { reason } }),
              t("tx.updated"),
            )
          }
        />
      )}
    </>
  );
}

function CorrectReceiver(props: {
  tx: Transaction;
  onSubmit: (body: { receiver_name?: string; receiver_phone?: string }) => void;
}) {
  const [name, setName] = useState(props.tx.receiver_name);
  const [phone, setPhone] = useState(props.tx.receiver_phone);
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit({
          ...(name !== props.tx.receiver_name ? { receiver_name: name } : {}),
          ...(phone !== props.tx.receiver_phone ? { receiver_phone: phone } : {}),
        });
      }}
    >
      <Field label={t("common.name")}>
        <input value={name} maxLength={200} required onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <Field label={t("common.number")}>
        <input value={phone} maxLength={20} inputMode="tel" required onInput={(e) => setPhone(e.currentTarget.value)} />
      </Field>
      <button type="submit">{t("common.send")}</button>
    </form>
  );
}

/** A required free-text reason or note (up to 500 characters, as the contract says). */
export function ReasonForm(props: { label: string; submit: string; onSubmit: (text: string) => void }) {
  const [text, setText] = useState("");
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (text.trim()) props.onSubmit(text.trim());
      }}
    >
      <Field label={props.label} hint={t("v.max", { n: 500 })}>
        <textarea value={text} maxLength={500} required onInput={(e) => setText(e.currentTarget.value)} />
      </Field>
      <button type="submit">{props.submit}</button>
    </form>
  );
}

/** The operation a launch created, followed live until it ends. */
function FollowOperation({ id }: { id: string }) {
  const list = useLiveList<Operation>(
    async () => {
      const r = await call(() => api.GET("/v1/operations/{operation_id}", { params: { path: { operation_id: id } } }));
      return r.data ? { data: [r.data] } : { outcome: r.outcome };
    },
    (o) => o.operation_id,
    ["operation"],
    [id],
  );
  const op = list.rows[0];
  return (
    <p class="follow" aria-live="polite">
      {op ? t("tx.follow", { id: id.slice(0, 8), status: status(op.status) }) : t("common.loading")}{" "}
      <a href={`#/operations/${id}`}>{t("tx.openOperation")}</a>
    </p>
  );
}
