import type { InputHTMLAttributes } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, call, setSession, type Outcome } from "../api.ts";
import { t } from "../i18n.ts";
import { Answer, Field } from "../ui.tsx";

export function SignIn({ notice, onSignedIn }: { notice?: string; onSignedIn: () => void }) {
  const [login, setLogin] = useState("");
  const [password, setPassword] = useState("");
  const [outcome, setOutcome] = useState<Outcome | undefined>(notice ? { ok: true, message: notice } : undefined);
  const [busy, setBusy] = useState(false);
  // A notice that comes while the page is shown (the session ended in another tab first).
  useEffect(() => {
    if (notice) setOutcome({ ok: true, message: notice });
  }, [notice]);
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
        <Credential label={t("signIn.login")} name="login" autocomplete="username" value={login} onValue={setLogin} />
        <Credential
          label={t("signIn.password")}
          name="password"
          type="password"
          autocomplete="current-password"
          value={password}
          onValue={setPassword}
        />
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
        <Credential
          label={t("password.current")}
          type="password"
          autocomplete="current-password"
          value={current}
          onValue={setCurrent}
        />
        <Credential
          label={t("password.new")}
          type="password"
          autocomplete="new-password"
          value={next}
          onValue={setNext}
        />
        <Credential
          label={t("password.repeat")}
          error={mismatch ? t("password.mismatch") : undefined}
          type="password"
          autocomplete="new-password"
          value={repeat}
          onValue={setRepeat}
          aria-invalid={mismatch}
        />
        <button type="submit" disabled={mismatch}>
          {t("password.submit")}
        </button>
      </form>
      <Answer outcome={outcome} />
    </section>
  );
}

/** A required credential field (a login or a password) of at most 100 characters. */
function Credential({
  label,
  error,
  onValue,
  ...input
}: { label: string; error?: string; onValue: (value: string) => void } & InputHTMLAttributes) {
  return (
    <Field label={label} error={error}>
      <input {...input} required maxLength={100} onInput={(e) => onValue(e.currentTarget.value)} />
    </Field>
  );
}
