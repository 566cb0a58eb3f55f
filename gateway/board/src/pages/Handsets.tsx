import { useState } from "preact/hooks";
import { api, call, type Outcome } from "../api.ts";
import { t } from "../i18n.ts";
import { dateTime, fcfa } from "../format.ts";
import type { Device, DeviceHealth, Operation } from "../types.ts";
import { Answer, Confirm, DataTable, Dialog, Field, Once, RowAction, useLiveList } from "../ui.tsx";

/** A handset as the page shows it: the list's row, its issues as derived on this read, what it runs. */
interface Row {
  device: Device;
  health?: DeviceHealth;
  running: Operation[];
}

// The list carries an issue summary only; each handset's health read names its issues
// (offline, silent, accessibility off…), derived by the fleet service on that read.
async function loadHandsets(): Promise<{ data?: Row[]; outcome?: Outcome }> {
  const [devices, running] = await Promise.all([
    call(() => api.GET("/v1/devices")),
    call(() => api.GET("/v1/operations", { params: { query: { status: "running", limit: 250 } } })),
  ]);
  if (!devices.data) return { outcome: devices.outcome };
  const health = await Promise.all(
    devices.data.map((d) =>
      call(() => api.GET("/v1/devices/{device_id}/health", { params: { path: { device_id: d.device_id } } })),
    ),
  );
  return {
    data: devices.data.map((device, i) => ({
      device,
      health: health[i]!.data,
      running: (running.data ?? []).filter((o) => o.device_id === device.device_id),
    })),
  };
}

export function Handsets() {
  const [outcome, setOutcome] = useState<Outcome>();
  const [token, setToken] = useState<{ label: string; token: string }>();
  const [label, setLabel] = useState("");
  const [renaming, setRenaming] = useState<Device>();
  const [deleting, setDeleting] = useState<Device>();
  const [replacing, setReplacing] = useState<Device>();
  const list = useLiveList<Row>(loadHandsets, (r) => r.device.device_id, ["alert", "operation"], []);

  const done = (message: string) => {
    setOutcome({ ok: true, message });
    void list.reload();
  };
  const create = async (e: Event) => {
    e.preventDefault();
    const r = await call(() => api.POST("/v1/devices", { body: { label: label.trim() } }));
    if (r.outcome) return setOutcome(r.outcome);
    setLabel("");
    setToken({ label: r.data.label, token: r.data.device_token });
    done(t("dev.created", { label: r.data.label }));
  };
  const newToken = async (d: Device) => {
    const r = await call(() =>
      api.POST("/v1/devices/{device_id}/token", { params: { path: { device_id: d.device_id } } }),
    );
    if (r.outcome) return r.outcome;
    setReplacing(undefined);
    setToken({ label: d.label, token: r.data.device_token });
    setOutcome(undefined);
    return undefined;
  };

  return (
    <section>
      <h2>{t("dev.title")}</h2>
      <form class="inline" onSubmit={create}>
        <Field label={t("dev.newLabel")} hint={t("v.max", { n: 200 })}>
          <input required maxLength={200} value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
        </Field>
        <button type="submit" class="primary" disabled={!label.trim()}>
          {t("dev.create")}
        </button>
      </form>
      {token && (
        <Once
          text={t("dev.tokenOnce", { label: token.label })}
          secret={token.token}
          done={t("dev.tokenNoted")}
          onDone={() => setToken(undefined)}
        />
      )}
      <Answer outcome={outcome} />
      <DataTable
        list={list}
        caption={t("dev.title")}
        columns={[
          t("dev.label"),
          t("dev.health"),
          t("dev.battery"),
          t("dev.network"),
          t("dev.lastSeen"),
          t("dev.app"),
          t("dev.sims"),
          t("dev.running"),
          t("common.actions"),
        ]}
        row={({ device: d, health, running }) => (
          <tr key={d.device_id}>
            <th scope="row">{d.label}</th>
            <td>
              {health ? (
                health.issues.length === 0 ? (
                  t("dev.healthy")
                ) : (
                  <ul class="plain">
                    {health.issues.map((i) => (
                      <li key={i.code} class={i.severity === "critical" ? "critical" : undefined}>
                        {t("dev.issue", { code: i.code, message: i.message })}
                      </li>
                    ))}
                  </ul>
                )
              ) : (
                "—"
              )}
            </td>
            <td>{d.battery === null ? "—" : `${d.battery} %`}</td>
            <td>{d.network ?? "—"}</td>
            <td>{dateTime(d.last_seen_at)}</td>
            <td>{d.app_version ?? "—"}</td>
            <td>
              <ul class="plain">
                {d.sims.map((s) => (
                  <li key={s.id}>
                    {t("dev.sim", { slot: s.subscription_slot + 1, operator: s.operator, msisdn: s.msisdn })}
                  </li>
                ))}
              </ul>
            </td>
            <td>
              {running.length === 0
                ? t("dev.idle")
                : running.map((o) => (
                    <div key={o.operation_id}>
                      {o.dest_name ?? o.msisdn_dest} · {fcfa(o.montant)}
                    </div>
                  ))}
            </td>
            <td class="actions">
              <RowAction label={t("dev.rename")} of={d.label} onClick={() => setRenaming(d)} />
              <RowAction label={t("dev.newToken")} of={d.label} onClick={() => setReplacing(d)} />
              <RowAction label={t("dev.delete")} of={d.label} onClick={() => setDeleting(d)} />
            </td>
          </tr>
        )}
      />
      {renaming && (
        <Rename
          device={renaming}
          onClose={() => setRenaming(undefined)}
          onDone={(label) => {
            setRenaming(undefined);
            done(t("dev.renamed", { label }));
          }}
        />
      )}
      {replacing && (
        <Confirm
          title={`${t("dev.newToken")} · ${replacing.label}`}
          confirm={t("dev.newTokenConfirm")}
          run={() => newToken(replacing)}
          onClose={() => setReplacing(undefined)}
        >
          <p>{t("dev.newTokenWhat", { label: replacing.label })}</p>
        </Confirm>
      )}
      {deleting && (
        <Delete
          device={deleting}
          onClose={() => setDeleting(undefined)}
          onDone={() => {
            setDeleting(undefined);
            done(t("dev.deleted", { label: deleting.label }));
          }}
        />
      )}
    </section>
  );
}

function Rename(props: { device: Device; onClose: () => void; onDone: (label: string) => void }) {
  const [label, setLabel] = useState(props.device.label);
  const [outcome, setOutcome] = useState<Outcome>();
  const submit = async (e: Event) => {
    e.preventDefault();
    const r = await call(() =>
      api.PATCH("/v1/devices/{device_id}", {
        params: { path: { device_id: props.device.device_id } },
        body: { label: label.trim() },
      }),
    );
    if (r.outcome) return setOutcome(r.outcome);
    props.onDone(r.data.label);
  };
  return (
    <Dialog title={`${t("dev.rename")} · ${props.device.label}`} onClose={props.onClose}>
      <form onSubmit={submit}>
        <Field label={t("dev.label")} hint={t("v.max", { n: 200 })}>
          <input required maxLength={200} value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
        </Field>
        <button type="submit" class="primary" disabled={!label.trim()}>
          {t("dev.rename")}
        </button>
      </form>
      <Answer outcome={outcome} />
    </Dialog>
  );
}

/** Deleting says what it does before doing it: the SIMs go back to the unassigned pool. */
function Delete(props: { device: Device; onClose: () => void; onDone: () => void }) {
  const run = async () => {
    const r = await call(() =>
      api.DELETE("/v1/devices/{device_id}", { params: { path: { device_id: props.device.device_id } } }),
    );
    if (!r.outcome) props.onDone();
    return r.outcome;
  };
  return (
    <Confirm
      title={`${t("dev.delete")} · ${props.device.label}`}
      confirm={t("dev.deleteConfirm")}
      run={run}
      onClose={props.onClose}
    >
      <p>{t("dev.deleteWhat", { n: props.device.sims.length })}</p>
    </Confirm>
  );
}
