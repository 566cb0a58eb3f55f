import { useState } from "preact/hooks";
import { api, call, setSession, type Outcome } from "../api.ts";
import { t } from "../i18n.ts";
import { Answer, Field } from "../ui.tsx";

export function SignIn({ notice, onSignedIn }: { notice?: string; onSignedIn: () => void }) {
  const [login, setLogin] = useState("");
  const [password, setPassword] = useState("");
  const [outcome, setOutcome] = useState<Outcome | undefined>(notice ? { ok: true, message: notice } : undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const r = await call(() => api.POST("/v1/agents/login", { body: { login, password } }));
    setBusy(false);
    if (!r.data) return setOutcome(r.outcome);
    onSignedIn();
    setSession({
      token: r.data.token,
      agentId: r.data.agent_id,
      role: r.data.role,
      expiresAt: r.data.expires_at ?? new Date(Date.now() + 5 * 3600_000).toISOString(),
      mustChangePassword: r.data.must_change_password,
    });
  };
  return (
    <section class="narrow">
      <h2>{t("signIn.title")}</h2>
      <form onSubmit={submit}>
        <Field label={t("signIn.login")}>
          <input
            name="login"
            autocomplete="username"
            required
            maxLength={100}
            value={login}
            onInput={(e) => setLogin(e.currentTarget.value)}
          />
        </Field>
        <Field label={t("signIn.password")}>
          <input
            name="password"
            type="password"
            autocomplete="current-password"
            required
            maxLength={100}
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        <button type="submit" disabled={busy}>
          {t("signIn.submit")}
        </button>
      </form>
      <Answer outcome={outcome} />
    </section>
  );
}

/** A temporary password must be replaced before anything else; the change revokes every session. */
export function ChangePassword({ onChanged }: { onChanged: (message: string) => void }) {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [repeat, setRepeat] = useState("");
  const [outcome, setOutcome] = useState<Outcome>();
  const mismatch = repeat !== "" && next !== repeat;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (mismatch) return;
    const r = await call(() =>
      api.PATCH("/v1/agents/me/password", { body: { current_password: current, new_password: next } }),
    );
    if (r.outcome) return setOutcome(r.outcome);
    onChanged(t("password.done"));
    setSession(undefined);
  };
  return (
    <section class="narrow">
      <h2>{t("password.title")}</h2>
      <p>{t("password.why")}</p>
      <form onSubmit={submit}>
        <Field label={t("password.current")}>
          <input
            type="password"
            autocomplete="current-password"
            required
            maxLength={100}
            value={current}
            onInput={(e) => setCurrent(e.currentTarget.value)}
          />
        </Field>
        <Field label={t("password.new")}>
          <input
            type="password"
            autocomplete="new-password"
            required
            maxLength={100}
            value={next}
            onInput={(e) => setNext(e.currentTarget.value)}
          />
        </Field>
        <Field label={t("password.repeat")} error={mismatch ? t("password.mismatch") : undefined}>
          <input
            type="password"
            autocomplete="new-password"
            required
            maxLength={100}
            value={repeat}
            aria-invalid={mismatch}
            onInput={(e) => setRepeat(e.currentTarget.value)}
          />
        </Field>
        <button type="submit" disabled={mismatch}>
          {t("password.submit")}
        </button>
      </form>
      <Answer outcome={outcome} />
    </section>
  );
}
