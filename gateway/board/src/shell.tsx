import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import "./style.css";
import APP, { separate } from "virtual:board-app";
import { closeSessionChannel, currentSession, onSession } from "./api.ts";
import { lang, setLang, t, type Lang } from "./i18n.ts";
import { Frame } from "./frame.tsx";
import { SignIn } from "./pages/SignIn.tsx";

// The page: built inline into index.html with the style sheet (vite.config.ts), so that the
// sign-in form is usable once the one HTML response has arrived, with no request for a
// script, a style sheet or the API first. Everything after sign-in is the app (main.tsx, a
// file of its own, fetched while the form is filled in: index.html preloads it). With a
// session (signed in here, in another tab, or before a reload of this tab) the page loads
// the app, which takes the page's place (#app).

function Shell() {
  const [signedIn, setSignedIn] = useState(Boolean(currentSession()));
  const [failed, setFailed] = useState(false);
  const [, setLangTick] = useState<Lang>(lang());
  useEffect(() => {
    const off = onSession((s) => setSignedIn(Boolean(s)));
    // Another tab may have answered before this listener existed.
    setSignedIn(Boolean(currentSession()));
    return off;
  }, []);
  useEffect(() => {
    if (!signedIn) return;
    // The app keeps the session from here on (sessionStorage, its own channel to the other tabs).
    if (separate) closeSessionChannel();
    import(/* @vite-ignore */ APP).catch(() => setFailed(true));
  }, [signedIn]);
  const chooseLang = (l: Lang) => {
    setLang(l);
    setLangTick(l);
  };
  return (
    <Frame onLang={chooseLang}>
      {!signedIn ? (
        <SignIn onSignedIn={() => undefined} />
      ) : failed ? (
        <p role="alert">{t("err.network")}</p>
      ) : (
        <p role="status">{t("common.loading")}</p>
      )}
    </Frame>
  );
}

render(<Shell />, document.getElementById("app")!);
