// The strings of the Matching operations page, in English and French: the French
// catalogue is typed by the English keys, so a key missing from it (or one it adds) does not compile.
export const en = {
  "mo.title": "Matching operations",
  "mo.why": "Record a transfer before dialling it by hand: the operator's SMS will prove it.",
  "mo.record": "Record",
  "mo.recorded": "Recorded: dial {amount} to {msisdn} from SIM {sim}.",
  "mo.sim": "Dial from SIM",
  "mo.change": "Change",
  "mo.changed": "Matching operation changed.",
  "mo.cancel": "Cancel",
  "mo.cancelled": "Matching operation cancelled.",
} as const;

export const fr: Record<keyof typeof en, string> = {
  "mo.title": "Opérations manuelles",
  "mo.why": "Enregistrez un transfert avant de le composer à la main : le SMS de l'opérateur le prouvera.",
  "mo.record": "Enregistrer",
  "mo.recorded": "Enregistrée : composez {amount} vers {msisdn} depuis la SIM {sim}.",
  "mo.sim": "SIM à utiliser",
  "mo.change": "Modifier",
  "mo.changed": "Opération manuelle modifiée.",
  "mo.cancel": "Annuler",
  "mo.cancelled": "Opération manuelle annulée.",
};
