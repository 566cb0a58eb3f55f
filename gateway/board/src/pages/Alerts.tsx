import { useState } from "preact/hooks";
import { Webhooks } from "./Webhooks.tsx";
import { api, call, type Outcome } from "../api.ts";
import { t } from "../i18n.ts";
import { dateTime } from "../format.ts";
import type { Notification } from "../types.ts";
import { Answer, DataTable, type LiveList, RowAction, useLiveList } from "../ui.tsx";

// The fleet's notifications: the open ones follow the stream's `alert` hints (raised or
// acknowledged anywhere), the acknowledged ones below for the record.
const load = (acknowledged: "true" | "false") => () =>
  call(() => api.GET("/v1/admin/notifications", { params: { query: { acknowledged, limit: 100 } } }));

export function Alerts() {
  const [outcome, setOutcome] = useState<Outcome>();
  const open = useLiveList<Notification>(load("false"), (n) => n.notification_id, ["alert"], []);
  const done = useLiveList<Notification>(load("true"), (n) => n.notification_id, ["alert"], []);
  const acknowledge = async (n: Notification) => {
    const r = await call(() =>
      api.POST("/v1/admin/notifications/{notification_id}/ack", {
        params: { path: { notification_id: n.notification_id } },
      }),
    );
    setOutcome(r.outcome ?? { ok: true, message: t("alert.acked", { message: n.message }) });
    void open.reload();
    void done.reload();
  };
  return (
    <section>
      <h2>{t("alert.title")}</h2>
      <Answer outcome={outcome} />
      <h3>{t("alert.open")}</h3>
      <Notifications list={open} caption={t("alert.open")} onAck={acknowledge} />
      <h3>{t("alert.acknowledged")}</h3>
      <Notifications list={done} caption={t("alert.acknowledged")} />
      <Webhooks />
    </section>
  );
}

function Notifications(props: { list: LiveList<Notification>; caption: string; onAck?: (n: Notification) => void }) {
  const { list, onAck } = props;
  return (
    <>
      <DataTable
        list={list}
        caption={props.caption}
        columns={[
          t("alert.raised"),
          t("alert.severity"),
          t("alert.message"),
          onAck ? t("common.actions") : t("alert.ackedAt"),
        ]}
        row={(n) => (
          <tr key={n.notification_id}>
            <td>{dateTime(n.raised_at)}</td>
            <td>
              <span class={`badge ${n.severity}`}>{n.severity}</span>
            </td>
            <td>{n.message}</td>
            <td>
              {onAck ? (
                <RowAction label={t("alert.ack")} of={n.message} onClick={() => onAck(n)} />
              ) : (
                dateTime(n.acknowledged_at)
              )}
            </td>
          </tr>
        )}
      />
    </>
  );
}
