// The strings of the Teach page, in English and French: the French
// catalogue is typed by the English keys, so a key missing from it (or one it adds) does not compile.
export const en = {
  "teach.title": "Texts no rule reads",
  "teach.why":
    "The fleet's texts that no rule reads, or reads only partly, grouped by their shape (values masked), the groups with the most money and operations waiting first. Choose one to propose a rule from it.",
  "teach.groups": "Unknown wordings",
  "teach.reason": "Why listed",
  "teach.count": "Texts",
  "teach.sims": "{n} SIM(s)",
  "teach.waiting": "Operations waiting",
  "teach.money": "Money waiting",
  "teach.seen": "First and last seen",
  "teach.sample": "Newest text",
  "teach.why.unread": "read by no rule",
  "teach.why.kind_without_amount": "kind without its amount",
  "teach.why.deposit_without_ref": "deposit without its reference",
  "teach.propose": "Propose a rule",
  "teach.proposal": "Proposed rule",
  "teach.example": "The text, its values highlighted",
  "teach.slots": "Slots: {amount} {fee} {balance} {ref} {phone} {name} {date} {number} {any}",
  "teach.problem": "Cannot be added as it is: {reason}.",
  "teach.reads":
    "It reads {n} stored text(s) differently from today ({otherwise} read as another kind today), of {scanned} read.",
  "teach.proposed": "Rule proposed: it reads {n} stored text(s) differently from today.",
  "teach.added": "Draft {kind} added.",
  "teach.activated": "Rule activated: the operator's unmatched texts are read again.",
} as const;

export const fr: Record<keyof typeof en, string> = {
  "teach.title": "Textes qu'aucune règle ne lit",
  "teach.why":
    "Les textes de la flotte qu'aucune règle ne lit, ou ne lit qu'en partie, groupés par forme (valeurs masquées), d'abord les groupes où attendent le plus d'argent et d'opérations. Choisissez-en un pour proposer une règle.",
  "teach.groups": "Libellés inconnus",
  "teach.reason": "Pourquoi listé",
  "teach.count": "Textes",
  "teach.sims": "{n} SIM",
  "teach.waiting": "Opérations en attente",
  "teach.money": "Argent en attente",
  "teach.seen": "Vu la première et la dernière fois",
  "teach.sample": "Texte le plus récent",
  "teach.why.unread": "lu par aucune règle",
  "teach.why.kind_without_amount": "type sans son montant",
  "teach.why.deposit_without_ref": "dépôt sans sa référence",
  "teach.propose": "Proposer une règle",
  "teach.proposal": "Règle proposée",
  "teach.example": "Le texte, ses valeurs surlignées",
  "teach.slots": "Champs : {amount} {fee} {balance} {ref} {phone} {name} {date} {number} {any}",
  "teach.problem": "Ne peut pas être ajoutée telle quelle : {reason}.",
  "teach.reads":
    "Elle lit {n} texte(s) stocké(s) autrement qu'aujourd'hui ({otherwise} lus aujourd'hui comme un autre type), sur {scanned} lus.",
  "teach.proposed": "Règle proposée : elle lit {n} texte(s) stocké(s) autrement qu'aujourd'hui.",
  "teach.added": "Brouillon {kind} ajouté.",
  "teach.activated": "Règle activée : les textes non rapprochés de l'opérateur sont relus.",
};
