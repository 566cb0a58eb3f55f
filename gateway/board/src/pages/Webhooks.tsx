import { useState } from "preact/hooks";
import { api, call, type Outcome } from "../api.ts";
import { t } from "../i18n.ts";
import { dateTime } from "../format.ts";
import type { Webhook, WebhookDelivery } from "../types.ts";
import { WEBHOOK_EVENTS as EVENTS } from "../../../../services/fleet/src/domain/webhook-events.ts";
import {
  Answer,
  Badge,
  Confirm,
  DataTable,
  Dialog,
  Field,
  Once,
  RowAction,
  useLiveList,
  type LiveList,
} from "../ui.tsx";

// The fleet's webhooks (admin): registered endpoints, never their secrets but at
// registration, shown once; each endpoint's deliveries with their attempts; removal names
// what it deletes first.

export function Webhooks() {
  const [outcome, setOutcome] = useState<Outcome>();
  const [secret, setSecret] = useState<{ url: string; secret: string }>();
  const [removing, setRemoving] = useState<Webhook>();
  const [viewing, setViewing] = useState<Webhook>();
  const [names, setNames] = useState<Record<string, string>>({});
  const list = useLiveList<Webhook>(
    async () => {
      // Who registered each one, by name (the route gives the agent's id).
      const [hooks, agents] = await Promise.all([
        call(() => api.GET("/v1/admin/webhooks")),
        call(() => api.GET("/v1/agents/admin")),
      ]);
      if (agents.data) setNames(Object.fromEntries(agents.data.map((a) => [a.agent_id, a.full_name])));
      return hooks;
    },
    (w) => w.webhook_id,
    [],
    [],
  );
  const add = async (url: string, events: string[]) => {
    const r = await call(() => api.POST("/v1/admin/webhooks", { body: { url, events } }));
    if (r.outcome) {
      setOutcome(r.outcome);
      return false;
    }
    setOutcome({ ok: true, message: t("hook.added", { url }) });
    setSecret({ url, secret: r.data.secret });
    void list.reload();
    return true;
  };
  return (
    <>
      <h3>{t("hook.title")}</h3>
      {secret && (
        <Once
          text={t("hook.secretOnce", { url: secret.url })}
          secret={secret.secret}
          done={t("hook.secretNoted")}
          onDone={() => setSecret(undefined)}
        />
      )}
      <Answer outcome={outcome} />
      <NewWebhook onSubmit={add} />
      <WebhooksTable list={list} names={names} onView={setViewing} onRemove={setRemoving} />
      {removing && (
        <RemoveWebhook
          webhook={removing}
          onClose={() => setRemoving(undefined)}
          onRemoved={() => {
            setOutcome({ ok: true, message: t("hook.removed", { url: removing.url }) });
            setRemoving(undefined);
            void list.reload();
          }}
        />
      )}
      {viewing && (
        <Dialog title={t("hook.deliveriesOf", { url: viewing.url })} onClose={() => setViewing(undefined)}>
          <Deliveries webhook={viewing} />
        </Dialog>
      )}
    </>
  );
}

/** The registered endpoints, who registered each, their deliveries, removal. */
function WebhooksTable(p: {
  list: LiveList<Webhook>;
  names: Record<string, string>;
  onView: (w: Webhook) => void;
  onRemove: (w: Webhook) => void;
}) {
  return (
    <DataTable
      list={p.list}
      caption={t("hook.title")}
      columns={[t("hook.url"), t("hook.events"), t("common.created"), t("hook.createdBy"), t("common.actions")]}
      row={(w) => (
        <tr key={w.webhook_id}>
          <th scope="row" class="mono">
            {w.url}
          </th>
          <td>{w.events.join(", ")}</td>
          <td>{dateTime(w.created_at)}</td>
          <td>{p.names[w.created_by] ?? w.created_by}</td>
          <td class="actions">
            <RowAction label={t("hook.deliveries")} of={w.url} onClick={() => p.onView(w)} />
            <RowAction label={t("hook.remove")} of={w.url} onClick={() => p.onRemove(w)} />
          </td>
        </tr>
      )}
    />
  );
}

/** Says what removing an endpoint deletes, then removes it. */
function RemoveWebhook(p: { webhook: Webhook; onClose: () => void; onRemoved: () => void }) {
  return (
    <Confirm
      title={`${t("hook.remove")} · ${p.webhook.url}`}
      confirm={t("hook.removeConfirm")}
      onClose={p.onClose}
      run={async () => {
        const r = await call(() =>
          api.DELETE("/v1/admin/webhooks/{webhook_id}", {
            params: { path: { webhook_id: p.webhook.webhook_id } },
          }),
        );
        if (r.outcome) return r.outcome;
        p.onRemoved();
      }}
    >
      <p>{t("hook.removeWhat", { url: p.webhook.url })}</p>
    </Confirm>
  );
}

function NewWebhook(props: { onSubmit: (url: string, events: string[]) => Promise<boolean> }) {
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<string[]>([...EVENTS]);
  return (
    <form
      class="inline"
      aria-label={t("hook.title")}
      onSubmit={async (e) => {
        e.preventDefault();
        if (await props.onSubmit(url.trim(), events)) setUrl("");
      }}
    >
      <Field label={t("hook.url")}>
        <input type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      </Field>
      <fieldset>
        <legend>{t("hook.events")}</legend>
        {EVENTS.map((ev) => (
          <label key={ev}>
            <input
              type="checkbox"
              checked={events.includes(ev)}
              onChange={() => setEvents(events.includes(ev) ? events.filter((x) => x !== ev) : [...events, ev])}
            />
            {ev}
          </label>
        ))}
      </fieldset>
      <button type="submit" class="primary" disabled={!url.trim() || events.length === 0}>
        {t("hook.add")}
      </button>
    </form>
  );
}

function Deliveries({ webhook }: { webhook: Webhook }) {
  const list = useLiveList<WebhookDelivery>(
    () =>
      call(() =>
        api.GET("/v1/admin/webhooks/{webhook_id}/deliveries", {
          params: { path: { webhook_id: webhook.webhook_id }, query: { limit: 50 } },
        }),
      ),
    (d) => d.delivery_id,
    ["alert", "operation"],
    [],
  );
  const last = (d: WebhookDelivery) => {
    const a = d.attempts[d.attempts.length - 1];
    return a ? `${dateTime(a.attempted_at)} · ${a.status_code ?? a.error ?? "—"}` : "—";
  };
  return (
    <DataTable
      list={list}
      caption={t("hook.deliveries")}
      columns={[
        t("common.created"),
        t("hook.event"),
        t("common.status"),
        { num: t("hook.attempts") },
        t("hook.last"),
        t("hook.delivered"),
      ]}
      row={(d) => (
        <tr key={d.delivery_id}>
          <td>{dateTime(d.created_at)}</td>
          <td>{d.event_type}</td>
          <td>
            <Badge state={d.status} />
          </td>
          <td class="num">{d.attempt_count}</td>
          <td>{last(d)}</td>
          <td>{dateTime(d.delivered_at)}</td>
        </tr>
      )}
    />
  );
}
