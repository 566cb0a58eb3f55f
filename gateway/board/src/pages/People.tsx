import { useEffect, useState } from "preact/hooks";
import { api, call, type Outcome } from "../api.ts";
import { t } from "../i18n.ts";
import { dateTime } from "../format.ts";
import { amountProblem, OP_TYPES, ROLES, type OpType, type Role } from "../rules.ts";
import type { Agent, Sim } from "../types.ts";
import { Answer, Confirm, DataTable, Dialog, Field, Once, RowAction, useLiveList, type LiveList } from "../ui.tsx";

/** The grant body's defaults in the contract: deposits and balance checks, 500 000 FCFA per operation. */
const DEFAULT_OP_TYPES: OpType[] = ["deposit", "balance"];
const DEFAULT_MAX_AMOUNT = "500000";

/** An action on a person that needs a confirmation saying what it does. */
type Pending =
  | { kind: "role"; agent: Agent; role: Role }
  | { kind: "temporary"; agent: Agent }
  | { kind: "deactivate"; agent: Agent };

/** What the page does to people: each action reports its outcome and reads the list again. */
function usePeopleActions(h: {
  reload: () => void;
  setOutcome: (o: Outcome) => void;
  setPassword: (p: { login: string; password: string }) => void;
  setConfirming: (p: Pending | undefined) => void;
}) {
  const act = async (run: () => Promise<{ data?: unknown; error?: unknown; response: Response }>, message: string) => {
    const r = await call(run);
    h.setOutcome(r.outcome ?? { ok: true, message });
    h.reload();
    return r;
  };
  const path = (a: Agent) => ({ params: { path: { agent_id: a.agent_id } } });
  const temporary = async (a: Agent, message = t("people.tempIssued", { name: a.full_name })) => {
    const r = await act(() => api.POST("/v1/agents/admin/{agent_id}/temporary-password", path(a)), message);
    const d = r.data as { login: string; temporary_password: string } | undefined;
    if (d) h.setPassword({ login: d.login, password: d.temporary_password });
    return r.outcome;
  };
  /** Runs the confirmed action: its refusal stays in the dialog, a success closes it. */
  const confirmed = async (p: Pending): Promise<Outcome | undefined> => {
    const a = p.agent;
    const r =
      p.kind === "temporary"
        ? await temporary(a)
        : p.kind === "deactivate"
          ? (
              await act(
                () => api.POST("/v1/agents/admin/{agent_id}/deactivate", path(a)),
                t("people.deactivated", { name: a.full_name }),
              )
            ).outcome
          : (
              await act(
                () => api.PATCH("/v1/agents/admin/{agent_id}", { ...path(a), body: { role: p.role } }),
                t("people.roleSet", { name: a.full_name, role: t(`role.${p.role}`) }),
              )
            ).outcome;
    if (!r) h.setConfirming(undefined);
    return r;
  };
  // A new person gets a password nobody sees (random, in this page's memory only), then at
  // once a temporary one from the server, shown once: they must change it at first sign-in.
  const create = async (body: { login: string; full_name: string; role: Role }) => {
    const random = crypto.getRandomValues(new Uint8Array(24));
    const r = await call(() =>
      api.POST("/v1/agents/admin", { body: { ...body, password: btoa(String.fromCharCode(...random)) } }),
    );
    if (r.outcome) {
      h.setOutcome(r.outcome);
      return false;
    }
    await temporary(r.data, t("people.created", { name: r.data.full_name }));
    return true;
  };
  return { act, path, confirmed, create };
}

export function People() {
  const [outcome, setOutcome] = useState<Outcome>();
  const [password, setPassword] = useState<{ login: string; password: string }>();
  const [granting, setGranting] = useState<Agent>();
  const [confirming, setConfirming] = useState<Pending>();
  const list = useLiveList<Agent>(
    () => call(() => api.GET("/v1/agents/admin")),
    (a) => a.agent_id,
    [],
    [],
  );
  const { act, path, confirmed, create } = usePeopleActions({
    reload: () => void list.reload(),
    setOutcome,
    setPassword,
    setConfirming,
  });

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
      <PeopleTable
        list={list}
        onConfirm={setConfirming}
        onGrant={setGranting}
        onReactivate={(a) =>
          void act(
            () => api.PATCH("/v1/agents/admin/{agent_id}", { ...path(a), body: { is_active: true } }),
            t("people.reactivated", { name: a.full_name }),
          )
        }
      />
      {confirming && <ConfirmAction pending={confirming} run={confirmed} onClose={() => setConfirming(undefined)} />}
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

/** Every person: role (changed after a confirmation), state, and what may be done to them. */
function PeopleTable(p: {
  list: LiveList<Agent>;
  onConfirm: (p: Pending) => void;
  onGrant: (a: Agent) => void;
  onReactivate: (a: Agent) => void;
}) {
  return (
    <DataTable
      list={p.list}
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
            <RoleSelect agent={a} onPick={(role) => p.onConfirm({ kind: "role", agent: a, role })} />
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
                onClick={() => p.onConfirm({ kind: "deactivate", agent: a })}
              />
            ) : (
              <RowAction label={t("people.reactivate")} of={a.full_name} onClick={() => p.onReactivate(a)} />
            )}
            <RowAction
              label={t("people.temp")}
              of={a.full_name}
              onClick={() => p.onConfirm({ kind: "temporary", agent: a })}
            />
            <RowAction label={t("people.access")} of={a.full_name} onClick={() => p.onGrant(a)} />
          </td>
        </tr>
      )}
    />
  );
}

/** A person's role; picking another asks first, the menu shows the current role until it is confirmed. */
function RoleSelect({ agent: a, onPick }: { agent: Agent; onPick: (role: Role) => void }) {
  return (
    <select
      aria-label={t("people.roleOf", { name: a.full_name })}
      value={a.role}
      onChange={(e) => {
        // Picking asks first; the menu shows the current role until it is confirmed.
        const role = e.currentTarget.value as Role;
        e.currentTarget.value = a.role;
        if (role !== a.role) onPick(role);
      }}
    >
      {ROLES.map((r) => (
        <option key={r} value={r}>
          {t(`role.${r}`)}
        </option>
      ))}
    </select>
  );
}

/** What each action on a person does, said before it is done. */
function ConfirmAction(props: {
  pending: Pending;
  run: (p: Pending) => Promise<Outcome | undefined>;
  onClose: () => void;
}) {
  const p = props.pending;
  const name = p.agent.full_name;
  const [title, what, confirm] =
    p.kind === "temporary"
      ? [t("people.temp"), t("people.tempWhat", { name }), t("people.tempConfirm")]
      : p.kind === "deactivate"
        ? [t("people.deactivate"), t("people.deactivateWhat", { name }), t("people.deactivateConfirm", { name })]
        : [
            t("people.roleOf", { name }),
            p.role === "admin"
              ? t("people.adminWhat", { name })
              : t("people.roleWhat", { name, role: t(`role.${p.role}`) }),
            t("people.roleConfirm", { name, role: t(`role.${p.role}`) }),
          ];
  return (
    <Confirm title={`${title} · ${name}`} confirm={confirm} run={() => props.run(p)} onClose={props.onClose}>
      <p>{what}</p>
    </Confirm>
  );
}

/** Every SIM, and the agent's grant being edited (the contract's defaults when there is none yet). */
function useGrant(agentId: string) {
  const [sims, setSims] = useState<Sim[]>([]);
  const [simIds, setSimIds] = useState<string[]>([]);
  const [types, setTypes] = useState<string[]>(DEFAULT_OP_TYPES);
  const [max, setMax] = useState(DEFAULT_MAX_AMOUNT);
  useEffect(() => {
    void call(() => api.GET("/v1/sims")).then((r) => r.data && setSims(r.data));
    void call(() => api.GET("/v1/admin/agents/{agent_id}/access", { params: { path: { agent_id: agentId } } })).then(
      (r) => {
        // No grant yet (404, or empty lists: a new agent's) starts from the contract's defaults.
        if (!r.data || r.data.allowed_op_types.length === 0) return;
        setSimIds(r.data.allowed_sim_ids);
        setTypes(r.data.allowed_op_types);
        setMax(r.data.max_amount?.toString() ?? "");
      },
    );
  }, []);
  return { sims, simIds, setSimIds, types, setTypes, max, setMax };
}

/** The agent's grant: which SIMs, which operation types, up to which amount (an admin bypasses it). */
function Access(props: { agent: Agent; onClose: () => void; onDone: () => void }) {
  const { sims, simIds, setSimIds, types, setTypes, max, setMax } = useGrant(props.agent.agent_id);
  const [touched, setTouched] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>();
  const toggle = (list: string[], v: string) => (list.includes(v) ? list.filter((x) => x !== v) : [...list, v]);
  const maxProblem = max.trim() ? amountProblem(max) : undefined;
  // The contract wants at least one SIM and one type: said here, before sending.
  const simProblem = touched && simIds.length === 0 ? t("people.needSim") : undefined;
  const typeProblem = touched && types.length === 0 ? t("people.needType") : undefined;
  const submit = async (e: Event) => {
    e.preventDefault();
    setTouched(true);
    if (simIds.length === 0 || types.length === 0 || maxProblem) return;
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
          {simProblem && <p class="error">{simProblem}</p>}
        </fieldset>
        <fieldset>
          <legend>{t("people.types")}</legend>
          {OP_TYPES.map((ty) => (
            <label key={ty}>
              <input type="checkbox" checked={types.includes(ty)} onChange={() => setTypes(toggle(types, ty))} />
              {ty}
            </label>
          ))}
          {typeProblem && <p class="error">{typeProblem}</p>}
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
