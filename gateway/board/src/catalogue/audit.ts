// The strings of the Audit page, in English and French: the French
// catalogue is typed by the English keys, so a key missing from it (or one it adds) does not compile.
export const en = {
  "audit.title": "Audit log",
  "audit.at": "When",
  "audit.actor": "Who",
  "audit.action": "Action",
  "audit.target": "Subject",
  "audit.details": "Details",
  "audit.system": "System",
  "audit.filterAction": "Action (exact, or a prefix ending in *: sim.*)",
  "audit.days": "Days",
  "audit.apply": "Filter",
  "audit.older": "Older entries",
  "audit.newest": "Newest entries",
} as const;

export const fr: Record<keyof typeof en, string> = {
  "audit.title": "Journal d'audit",
  "audit.at": "Quand",
  "audit.actor": "Qui",
  "audit.action": "Action",
  "audit.target": "Objet",
  "audit.details": "Détails",
  "audit.system": "Système",
  "audit.filterAction": "Action (exacte, ou un début finissant par * : sim.*)",
  "audit.days": "Jours",
  "audit.apply": "Filtrer",
  "audit.older": "Entrées plus anciennes",
  "audit.newest": "Entrées les plus récentes",
};
