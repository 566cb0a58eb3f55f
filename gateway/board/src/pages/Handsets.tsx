import { useState } from "preact/hooks";
import { api, call, type Outcome } from "../api.ts";
import { t } from "../i18n.ts";
import { dateTime, fcfa } from "../format.ts";
import type { Device, DeviceHealth, Operation } from "../types.ts";
import { Answer, Confirm, DataTable, Dialog, Field, Once, RowAction, useLiveList, type LiveList } from "../ui.tsx";

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
  const [renaming, setRenaming] = useState<Device>();
  const [deleting, setDeleting] = useState<Device>();
  const [replacing, setReplacing] = useState<Device>();
  const list = useLiveList<Row>(loadHandsets, (r) => r.device.device_id, ["alert", "operation"], []);

  const done = (message: string) => {
    setOutcome({ ok: true, message });
    void list.reload();
  };

  return (
    <section>
      <h2>{t("dev.title")}</h2>
      <NewHandset
        onOutcome={setOutcome}
        onCreated={(created) => {
          setToken(created);
          done(t("dev.created", { label: created.label }));
        }}
      />
      {token && (
        <Once
          text={t("dev.tokenOnce", { label: token.label })}
          secret={token.token}
          done={t("dev.tokenNoted")}
          onDone={() => setToken(undefined)}
        />
      )}
      <Answer outcome={outcome} />
      <HandsetsTable list={list} onRename={setRenaming} onReplace={setReplacing} onDelete={setDeleting} />
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
        <ReplaceToken
          device={replacing}
          onClose={() => setReplacing(undefined)}
          onReplaced={(replaced) => {
            setReplacing(undefined);
            setToken(replaced);
            setOutcome(undefined);
          }}
        />
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

/** Asks before replacing a handset's token, then replaces it (the page shows the new one once). */
function ReplaceToken(p: {
  device: Device;
  onClose: () => void;
  onReplaced: (replaced: { label: string; token: string }) => void;
}) {
  const d = p.device;
  const newToken = async () => {
    const r = await call(() =>
      api.POST("/v1/devices/{device_id}/token", { params: { path: { device_id: d.device_id } } }),
    );
    if (r.outcome) return r.outcome;
    p.onReplaced({ label: d.label, token: r.data.device_token });
    return undefined;
  };
  return (
    <Confirm
      title={`${t("dev.newToken")} · ${d.label}`}
      confirm={t("dev.newTokenConfirm")}
      run={newToken}
      onClose={p.onClose}
    >
      <p>{t("dev.newTokenWhat", { label: d.label })}</p>
    </Confirm>
  );
}

/** The form that creates a handset; its token is shown once by the page. */
function NewHandset(props: {
  onOutcome: (o: Outcome) => void;
  onCreated: (created: { label: string; token: string }) => void;
}) {
  const [label, setLabel] = useState("");
  const create = async (e: Event) => {
    e.preventDefault();
    const r = await call(() => api.POST("/v1/devices", { body: { label: label.trim() } }));
    if (r.outcome) return props.onOutcome(r.outcome);
    setLabel("");
    props.onCreated({ label: r.data.label, token: r.data.device_token });
  };
  return (
    <form class="inline" onSubmit={create}>
      <Field label={t("dev.newLabel")} hint={t("v.max", { n: 200 })}>
        <input required maxLength={200} value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
      </Field>
      <button type="submit" class="primary" disabled={!label.trim()}>
        {t("dev.create")}
      </button>
    </form>
  );
}

/** Every handset: its health, battery, network, SIMs, what it runs, and what may be done to it. */
function HandsetsTable(p: {
  list: LiveList<Row>;
  onRename: (d: Device) => void;
  onReplace: (d: Device) => void;
  onDelete: (d: Device) => void;
}) {
  return (
    <DataTable
      list={p.list}
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
            <HealthCell health={health} />
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
            <RowAction label={t("dev.rename")} of={d.label} onClick={() => p.onRename(d)} />
            <RowAction label={t("dev.newToken")} of={d.label} onClick={() => p.onReplace(d)} />
            <RowAction label={t("dev.delete")} of={d.label} onClick={() => p.onDelete(d)} />
          </td>
        </tr>
      )}
    />
  );
}

/** A handset's issues as derived on this read ("—" when the read failed). */
function HealthCell({ health }: { health?: DeviceHealth }) {
  return (
    <>
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
    </>
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
