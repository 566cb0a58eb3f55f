import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, currentSession, onSession, setSession, type Session } from "./api.ts";
import { lang, setLang, t, type Key, type Lang } from "./i18n.ts";
import { Frame } from "./frame.tsx";
import { countdown } from "./format.ts";
import { startLive, stopLive } from "./live.ts";
import { useWaiting, type WaitingPage } from "./waiting.ts";
import { hashPath } from "./ui.tsx";
import { ROLES, type Role } from "./rules.ts";
import { ChangePassword, SignIn } from "./pages/SignIn.tsx";
import { Operations } from "./pages/Operations.tsx";
import { Transactions } from "./pages/Transactions.tsx";
import { Arbitration } from "./pages/Arbitration.tsx";
import { Messages } from "./pages/Messages.tsx";
import { Matching } from "./pages/Matching.tsx";
import { Handsets } from "./pages/Handsets.tsx";
import { Sims } from "./pages/Sims.tsx";
import { Alerts } from "./pages/Alerts.tsx";
import { People } from "./pages/People.tsx";
import { Fleet } from "./pages/Fleet.tsx";
import { Money } from "./pages/Money.tsx";
import { Analytics } from "./pages/Analytics.tsx";
import { Audit } from "./pages/Audit.tsx";
import { Wording } from "./pages/Wording.tsx";
import { Teach } from "./pages/Teach.tsx";

// Pages by hash (#/operations): the gateway serves one index.html, and a link to a page
// works without any server-side route. `admin` pages call routes the contract keeps to
// admins (devices, SIMs, notifications, agents, the audit log, the wording rules): the menu shows them to admins only, and a
// direct link shows "not allowed" to the others (the server refuses their calls anyway).
// The reconciliations are supervisors' and admins' (FLEET_READS); analytics every role's
// (an agent's own work).
const WORK: readonly Role[] = ROLES;
const ADMIN: readonly Role[] = ["admin"];
const FLEET_READS: readonly Role[] = ["supervisor", "admin"];
const PAGES = {
  operations: { label: "nav.operations", page: Operations, roles: WORK },
  transactions: { label: "nav.transactions", page: Transactions, roles: WORK },
  arbitration: { label: "nav.arbitration", page: Arbitration, roles: WORK },
  messages: { label: "nav.messages", page: Messages, roles: WORK },
  matching: { label: "nav.matching", page: Matching, roles: WORK },
  analytics: { label: "nav.analytics", page: Analytics, roles: WORK },
  money: { label: "nav.money", page: Money, roles: FLEET_READS },
  handsets: { label: "nav.handsets", page: Handsets, roles: ADMIN },
  sims: { label: "nav.sims", page: Sims, roles: ADMIN },
  alerts: { label: "nav.alerts", page: Alerts, roles: ADMIN },
  people: { label: "nav.people", page: People, roles: ADMIN },
  fleet: { label: "nav.fleet", page: Fleet, roles: ADMIN },
  audit: { label: "nav.audit", page: Audit, roles: ADMIN },
  wording: { label: "nav.wording", page: Wording, roles: ADMIN },
  teach: { label: "nav.teach", page: Teach, roles: ADMIN },
} satisfies Record<string, { label: Key; page: () => preact.JSX.Element; roles: readonly Role[] }>;
type PageName = keyof typeof PAGES;

function pageOfHash(): PageName | undefined {
  const [name] = hashPath();
  if (!name) return "transactions";
  return name in PAGES ? (name as PageName) : undefined;
}

const allowed = (name: PageName, role: string) => (PAGES[name].roles as readonly string[]).includes(role);

function App() {
  const [session, setLocal] = useState<Session | undefined>(currentSession());
  const [page, setPage] = useState(pageOfHash());
  const [, setLangTick] = useState<Lang>(lang());
  const [notice, setNotice] = useState<string>();

  useEffect(() => {
    const off = onSession((s, expired) => {
      if (expired) setNotice(t("session.expired"));
      setLocal(s);
    });
    // Another tab may have answered before this listener existed.
    setLocal(currentSession());
    return off;
  }, []);
  useEffect(() => {
    const onHash = () => setPage(pageOfHash());
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);
  useEffect(() => {
    if (session && !session.mustChangePassword) startLive();
    else stopLive();
  }, [session?.token, session?.mustChangePassword]);

  const chooseLang = (l: Lang) => {
    setLang(l);
    setLangTick(l);
  };
  const role = session?.role ?? "";
  const working = Boolean(session && !session.mustChangePassword);
  const waiting = useWaiting(role, working);
  const Page = page === undefined ? NotFound : allowed(page, role) ? PAGES[page].page : NotAllowed;
  const nav = session && !session.mustChangePassword && (
    <nav aria-label={t("nav.label")}>
      <ul>
        {(Object.keys(PAGES) as PageName[])
          .filter((name) => allowed(name, role))
          .map((name) => {
            const w = waiting[name as WaitingPage];
            return (
              <li key={name}>
                <a
                  href={`#/${name}`}
                  aria-current={name === page ? "page" : undefined}
                  aria-describedby={w?.n ? `waiting-${name}` : undefined}
                >
                  {t(PAGES[name].label)}
                </a>
                {w?.n ? (
                  <span class="count" id={`waiting-${name}`}>
                    {w.atLimit ? `${w.n}+` : w.n}
                    <span class="sr-only"> {t("nav.waiting")}</span>
                  </span>
                ) : null}
              </li>
            );
          })}
      </ul>
    </nav>
  );
  return (
    <Frame onLang={chooseLang} top={session && <SessionClock session={session} />} nav={nav}>
      {!session ? (
        <SignIn notice={notice} onSignedIn={() => setNotice(undefined)} />
      ) : session.mustChangePassword ? (
        <ChangePassword onChanged={(message) => setNotice(message)} />
      ) : (
        <Page />
      )}
    </Frame>
  );
}

function NotAllowed() {
  return (
    <section>
      <h2>{t("page.notAllowed")}</h2>
      <p>{t("page.notAllowedWhy")}</p>
      <p>
        <a href="#/transactions">{t("page.backHome")}</a>
      </p>
    </section>
  );
}

function NotFound() {
  return (
    <section>
      <h2>{t("page.notFound")}</h2>
      <p>
        <a href="#/transactions">{t("page.backHome")}</a>
      </p>
    </section>
  );
}

function SessionClock({ session }: { session: Session }) {
  const [now, setNow] = useState(Date.now());
  const left = Date.parse(session.expiresAt) - now;
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  useEffect(() => {
    if (left <= 0) setSession(undefined, true);
  }, [left <= 0]);
  const signOut = async () => {
    await api.POST("/v1/agents/logout").catch(() => undefined);
    setSession(undefined);
  };
  return (
    <div class="session">
      <span role="timer" aria-live="off">
        {t("session.expires", { time: countdown(left) })}
      </span>
      <button type="button" onClick={() => void signOut()}>
        {t("session.signOut")}
      </button>
    </div>
  );
}

// The app: the page (shell.tsx, inline in index.html) imports this module once there is a
// session, after it has drawn the sign-in form by itself; the page carries the style sheet.
// The app draws into an element of its own that takes the page's place.
const root = document.createElement("div");
root.id = "app";
render(<App />, root);
document.getElementById("app")!.replaceWith(root);
