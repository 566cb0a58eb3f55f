import type { ComponentChildren } from "preact";
import { lang, t, type Lang } from "./i18n.ts";

/**
 * What every screen of the board shows around its content: the skip link, the title, the
 * language menu (and what the caller adds to the top bar, the menu), and the main region.
 * The page (shell.tsx) and the app (main.tsx) both draw it, so that the sign-in form looks
 * the same before and after the app has loaded. `onLang` re-renders the caller, whose
 * texts are in the new language (main is keyed by it: every page draws again).
 */
export function Frame(props: {
  onLang: (l: Lang) => void;
  top?: ComponentChildren;
  nav?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <>
      <a class="skip" href="#main" onClick={skipToMain}>
        {t("app.skip")}
      </a>
      <header class="top">
        <h1>{t("app.title")}</h1>
        <label class="lang">
          <span>{t("lang.label")}</span>
          <select value={lang()} onChange={(e) => props.onLang((e.target as HTMLSelectElement).value as Lang)}>
            <option value="fr">Français</option>
            <option value="en">English</option>
          </select>
        </label>
        {props.top}
      </header>
      {props.nav}
      <main id="main" key={lang()} tabIndex={-1}>
        {props.children}
      </main>
    </>
  );
}

/**
 * The skip link moves focus to the page's content. Pages are chosen by the hash, so following
 * `#main` as a link would leave the page for one that does not exist: it focuses instead.
 */
function skipToMain(e: Event) {
  e.preventDefault();
  const main = document.getElementById("main");
  main?.focus();
  main?.scrollIntoView();
}
