import { useEffect, useState } from "preact/hooks";
import { api, call, type Outcome } from "../api.ts";
import { t } from "../i18n.ts";
import { dateTime } from "../format.ts";
import { amountProblem, OP_TYPES } from "../rules.ts";
import type { Agent, Sim } from "../types.ts";
import { Answer, DataTable, Dialog, Field, Once, RowAction, useLiveList } from "../ui.tsx";

const ROLES = ["agent", "supervisor", "admin"] as const;
type Role = (typeof ROLES)[number];

export function People() {
  const [outcome, setOutcome] = useState<Outcome>();
  const [password, setPassword] = useState<{ login: string; password: string }>();
  const [granting, setGranting] = useState<Agent>();
  const list = useLiveList<Agent>(
    () => call(() => api.GET("/v1/agents/admin")),
    (a) => a.agent_id,
    [],
    [],
  );
  const act = async (run: () => Promise<{ data?: unknown; error?: unknown; response: Response }>, message: string) => {
    const r = await call(run);
    setOutcome(r.outcome ?? { ok: true, message });
    void list.reload();
    return r.data;
  };
  const path = (a: Agent) => ({ params: { path: { agent_id: a.agent_id } } });
  const temporary = async (a: Agent, message = t("people.tempIssued", { name: a.full_name })) => {
    const r = (await act(() => api.POST("/v1/agents/admin/{agent_id}/temporary-password", path(a)), message)) as
      { login: string; temporary_password: string } | undefined;
    if (r) setPassword({ login: r.login, password: r.temporary_password });
  };
  // A new person gets a password nobody sees (random, in this page's memory only), then at
  // once a temporary one from the server, shown once: they must change it at first sign-in.
  const create = async (body: { login: string; full_name: string; role: Role }) => {
    const random = crypto.getRandomValues(new Uint8Array(24));
    const r = await call(() =>
      api.POST("/v1/agents/admin", { body: { ...body, password: btoa(String.fromCharCode(...random)) } }),
    );
    if (r.outcome) {
      setOutcome(r.outcome);
      return false;
    }
    await temporary(r.data, t("people.created", { name: r.data.full_name }));
    return true;
  };

  return (
    <section>
      <h2>{t("people.title")}</h2>
      {password && (
        <Once
          text={t("people.tempOnce", { login: password.login })}
          secret={password.password}
          done={t("people.tempNoted")}
          onDone={() => setPassword(undefined)}
        />
      )}
      <Answer outcome={outcome} />
      <NewPerson onSubmit={create} />
      <DataTable
        list={list}
        caption={t("people.title")}
        columns={[
          t("common.name"),
          t("signIn.login"),
          t("people.role"),
          t("common.status"),
          t("common.created"),
          t("common.actions"),
        ]}
        row={(a) => (
          <tr key={a.agent_id}>
            <th scope="row">{a.full_name}</th>
            <td>{a.login}</td>
            <td>
              <select
                aria-label={t("people.roleOf", { name: a.full_name })}
                value={a.role}
                onChange={(e) => {
                  const role = e.currentTarget.value as Role;
                  void act(
                    () => api.PATCH("/v1/agents/admin/{agent_id}", { ...path(a), body: { role } }),
                    t("people.roleSet", { name: a.full_name, role: t(`role.${role}`) }),
                  );
                }}
              >
                {ROLES.map((r) => (
                  <option key={r} value={r}>
                    {t(`role.${r}`)}
                  </option>
                ))}
              </select>
            </td>
            <td>
              {a.is_active ? t("people.active") : t("people.inactive")}
              {a.must_change_password && <small> · {t("people.mustChange")}</small>}
            </td>
            <td>{dateTime(a.created_at)}</td>
            <td class="actions">
              {a.is_active ? (
                <RowAction
                  label={t("people.deactivate")}
                  of={a.full_name}
                  onClick={() =>
                    void act(
                      () => api.POST("/v1/agents/admin/{agent_id}/deactivate", path(a)),
                      t("people.deactivated", { name: a.full_name }),
                    )
                  }
                />
              ) : (
                <RowAction
                  label={t("people.reactivate")}
                  of={a.full_name}
                  onClick={() =>
                    void act(
                      () => api.PATCH("/v1/agents/admin/{agent_id}", { ...path(a), body: { is_active: true } }),
                      t("people.reactivated", { name: a.full_name }),
                    )
                  }
                />
              )}
              <RowAction label={t("people.temp")} of={a.full_name} onClick={() => void temporary(a)} />
              <RowAction label={t("people.access")} of={a.full_name} onClick={() => setGranting(a)} />
            </td>
          </tr>
        )}
      />
      {granting && (
        <Access
          agent={granting}
          onClose={() => setGranting(undefined)}
          onDone={() => {
            setOutcome({ ok: true, message: t("people.accessSet", { name: granting.full_name }) });
            setGranting(undefined);
          }}
        />
      )}
    </section>
  );
}

/** The agent's grant: which SIMs, which operation types, up to which amount (an admin bypasses it). */
function Access(props: { agent: Agent; onClose: () => void; onDone: () => void }) {
  const [sims, setSims] = useState<Sim[]>([]);
  const [simIds, setSimIds] = useState<string[]>([]);
  const [types, setTypes] = useState<string[]>([...OP_TYPES]);
  const [max, setMax] = useState("");
  const [outcome, setOutcome] = useState<Outcome>();
  useEffect(() => {
    void call(() => api.GET("/v1/sims")).then((r) => r.data && setSims(r.data));
    void call(() =>
      api.GET("/v1/admin/agents/{agent_id}/access", { params: { path: { agent_id: props.agent.agent_id } } }),
    ).then((r) => {
      // No grant yet (404) is an empty one.
      if (!r.data) return;
      setSimIds(r.data.allowed_sim_ids);
      setTypes(r.data.allowed_op_types);
      setMax(r.data.max_amount?.toString() ?? "");
    });
  }, []);
  const toggle = (list: string[], v: string) => (list.includes(v) ? list.filter((x) => x !== v) : [...list, v]);
  const maxProblem = max.trim() ? amountProblem(max) : undefined;
  const submit = async (e: Event) => {
    e.preventDefault();
    const r = await call(() =>
      api.PATCH("/v1/admin/agents/{agent_id}/access", {
        params: { path: { agent_id: props.agent.agent_id } },
        body: { allowed_sim_ids: simIds, allowed_op_types: types, ...(max.trim() ? { max_amount: Number(max) } : {}) },
      }),
    );
    if (r.outcome) return setOutcome(r.outcome);
    props.onDone();
  };
  return (
    <Dialog title={`${t("people.access")} · ${props.agent.full_name}`} onClose={props.onClose}>
      <form onSubmit={submit}>
        <fieldset>
          <legend>{t("people.sims")}</legend>
          {sims.map((s) => (
            <label key={s.sim_id}>
              <input
                type="checkbox"
                checked={simIds.includes(s.sim_id)}
                onChange={() => setSimIds(toggle(simIds, s.sim_id))}
              />
              {s.msisdn} · {s.operator}
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>{t("people.types")}</legend>
          {OP_TYPES.map((ty) => (
            <label key={ty}>
              <input type="checkbox" checked={types.includes(ty)} onChange={() => setTypes(toggle(types, ty))} />
              {ty}
            </label>
          ))}
        </fieldset>
        <Field label={t("people.max")} hint={t("people.maxHint")} error={maxProblem}>
          <input inputMode="numeric" value={max} onInput={(e) => setMax(e.currentTarget.value)} />
        </Field>
        <button type="submit" class="primary" disabled={!!maxProblem}>
          {t("common.send")}
        </button>
      </form>
      <Answer outcome={outcome} />
    </Dialog>
  );
}

function NewPerson(props: { onSubmit: (p: { login: string; full_name: string; role: Role }) => Promise<boolean> }) {
  const [login, setLogin] = useState("");
  const [name, setName] = useState("");
  const [role, setRole] = useState<Role>("agent");
  return (
    <form
      class="inline"
      aria-label={t("people.new")}
      onSubmit={async (e) => {
        e.preventDefault();
        if (await props.onSubmit({ login: login.trim(), full_name: name.trim(), role })) {
          setLogin("");
          setName("");
        }
      }}
    >
      <Field label={t("people.newLogin")}>
        <input required maxLength={100} value={login} onInput={(e) => setLogin(e.currentTarget.value)} />
      </Field>
      <Field label={t("people.newName")}>
        <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <Field label={t("people.role")}>
        <select value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {t(`role.${r}`)}
            </option>
          ))}
        </select>
      </Field>
      <button type="submit" class="primary" disabled={!login.trim() || !name.trim()}>
        {t("people.create")}
      </button>
    </form>
  );
}
