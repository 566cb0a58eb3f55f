import { useEffect, useState } from "preact/hooks";
import { Webhooks } from "./Webhooks.tsx";
import { api, call, type Outcome } from "../api.ts";
import { known, t } from "../i18n.ts";
import { dateTime } from "../format.ts";
import type { Device, Notification } from "../types.ts";
import { useSimNames, type SimName } from "../sim-names.ts";
import { Answer, DataTable, type LiveList, RowAction, useLiveList } from "../ui.tsx";

// The fleet's notifications: the open ones follow the stream's `alert` hints (raised or
// acknowledged anywhere), the acknowledged ones below for the record.
const load = (acknowledged: "true" | "false") => () =>
  call(() => api.GET("/v1/admin/notifications", { params: { query: { acknowledged, limit: 100 } } }));

/** Who an alert is about, by the names people use: a SIM's number, a handset's label. */
interface Names {
  sims: SimName;
  devices: Map<string, string>;
}

function useNames(): Names {
  const sims = useSimNames();
  const [devices, setDevices] = useState<Map<string, string>>(new Map());
  useEffect(() => {
    void call(() => api.GET("/v1/devices")).then((r) =>
      setDevices(new Map((r.data ?? []).map((d: Device) => [d.device_id, d.label]))),
    );
  }, []);
  return { sims, devices };
}

/** An alert's kind in the user's language (the server's message, in English, stays beside it). */
function title(n: Notification): string {
  const key = `alert.kind.${n.kind}`;
  return known(key) ? t(key) : n.kind;
}

function severity(s: string): string {
  const key = `sev.${s}`;
  return known(key) ? t(key) : s;
}

/** What the alert is about: the SIM by number, the handset by label, the operation by a link. */
function Subject({ n, names }: { n: Notification; names: Names }) {
  const sim = n.sim_id ? names.sims(n.sim_id) : undefined;
  const device = n.device_id ? (names.devices.get(n.device_id) ?? n.device_id) : undefined;
  return (
    <>
      {sim && <span>{t("alert.onSim", { sim })} </span>}
      {device && <span>{t("alert.onDevice", { device })} </span>}
      {n.operation_id && <a href={`#/operations/${n.operation_id}`}>{t("alert.openOperation")}</a>}
      {typeof n.context?.sample_message_id === "string" && (
        <a href={`#/teach/${n.context.sample_message_id}`}>{t("alert.teach")}</a>
      )}
    </>
  );
}

/** The label of an alert for a button and an answer: its kind and its SIM or handset. */
function named(n: Notification, names: Names): string {
  const about = n.sim_id ? names.sims(n.sim_id) : n.device_id ? names.devices.get(n.device_id) : undefined;
  return about ? `${title(n)} · ${about}` : title(n);
}

export function Alerts() {
  const [outcome, setOutcome] = useState<Outcome>();
  const names = useNames();
  const open = useLiveList<Notification>(load("false"), (n) => n.notification_id, ["alert"], []);
  const done = useLiveList<Notification>(load("true"), (n) => n.notification_id, ["alert"], []);
  const acknowledge = async (n: Notification) => {
    const r = await call(() =>
      api.POST("/v1/admin/notifications/{notification_id}/ack", {
        params: { path: { notification_id: n.notification_id } },
      }),
    );
    setOutcome(r.outcome ?? { ok: true, message: t("alert.acked", { message: named(n, names) }) });
    void open.reload();
    void done.reload();
  };
  return (
    <section>
      <h2>{t("alert.title")}</h2>
      <Answer outcome={outcome} />
      <h3>{t("alert.open")}</h3>
      <Notifications list={open} caption={t("alert.open")} names={names} onAck={acknowledge} />
      <h3>{t("alert.acknowledged")}</h3>
      <Notifications list={done} caption={t("alert.acknowledged")} names={names} />
      <Webhooks />
    </section>
  );
}

function Notifications(props: {
  list: LiveList<Notification>;
  caption: string;
  names: Names;
  onAck?: (n: Notification) => void;
}) {
  const { list, onAck, names } = props;
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
              <span class={`badge ${n.severity}`}>{severity(n.severity)}</span>
            </td>
            <td>
              <strong>{title(n)}</strong> <Subject n={n} names={names} />
              <p class="detail" lang="en">
                {n.message}
              </p>
            </td>
            <td>
              {onAck ? (
                <RowAction label={t("alert.ack")} of={named(n, names)} onClick={() => onAck(n)} />
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
