import { lang, known, t } from "./i18n.ts";

// Amounts in FCFA as people in Cameroon write them ("25 000 FCFA"), times in Africa/Douala
// whatever the browser's zone, in the user's language.
const money = new Map<string, Intl.NumberFormat>();
export function fcfa(amount: number | null | undefined): string {
  if (amount === null || amount === undefined) return "—";
  const l = lang();
  let f = money.get(l);
  if (!f) {
    f = new Intl.NumberFormat(l === "fr" ? "fr-CM" : "en-CM", {
      style: "currency",
      currency: "XAF",
      maximumFractionDigits: 0,
    });
    money.set(l, f);
  }
  // Narrow no-break spaces read as odd gaps on some phones; plain no-break spaces do not.
  return f.format(amount).replace(/\u202f/g, "\u00a0");
}

export function dateTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  return new Intl.DateTimeFormat(lang() === "fr" ? "fr-CM" : "en-GB", {
    timeZone: "Africa/Douala",
    dateStyle: "short",
    timeStyle: "medium",
  }).format(new Date(iso));
}

/** A day (an ISO datetime or date) as the user's language writes it, in Douala: "29/11/2026". */
export function day(iso: string | null | undefined): string {
  if (!iso) return "—";
  return new Intl.DateTimeFormat(lang() === "fr" ? "fr-CM" : "en-GB", {
    timeZone: "Africa/Douala",
    dateStyle: "short",
  }).format(new Date(iso));
}

/** A decimal figure (a rate) as the user's language writes it: "656,00" in French. */
export function decimal(value: number, digits = 2): string {
  return new Intl.NumberFormat(lang() === "fr" ? "fr-CM" : "en-GB", {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  }).format(value);
}

export function time(d: Date): string {
  return new Intl.DateTimeFormat(lang() === "fr" ? "fr-CM" : "en-GB", {
    timeZone: "Africa/Douala",
    timeStyle: "medium",
  }).format(d);
}

/** "4 h 59 min" / "12 min 03 s" until a moment. */
export function countdown(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h} h ${String(m).padStart(2, "0")} min` : `${m} min ${String(s % 60).padStart(2, "0")} s`;
}

/** A status in the user's language (the raw value when the catalogues do not know it). */
export function status(s: string | null | undefined): string {
  const key = `st.${s}`;
  return known(key) ? t(key) : (s ?? "—");
}

/** Today's date in Africa/Douala, as the routes' `day` and `from`/`to` take it (YYYY-MM-DD). */
export function today(offsetDays = 0): string {
  return new Intl.DateTimeFormat("en-CA", { timeZone: "Africa/Douala" }).format(Date.now() + offsetDays * 86_400_000);
}
