// The strings of the Arbitration page, in English and French: the French
// catalogue is typed by the English keys, so a key missing from it (or one it adds) does not compile.
export const en = {
  "arb.title": "Arbitration",
  "arb.unproven": "Dialled without proof",
  "arb.settled": "Settled on word",
  "arb.settle": "Settle",
  "arb.outcome": "Outcome",
  "arb.arrived": "The money arrived",
  "arb.notArrived": "The money did not arrive",
  "arb.selfResolving": "may still be proved",
  "arb.contradicted": "decided failed, but the operator's message proves it went: do not retry",
  "arb.evidenceCount": "SMS seen",
  "arb.by": "Settled by",
  "arb.done": "Operation settled: {status}.",
  "arb.lastScreen": "The handset's last USSD screen",
  "arb.handsetSaid": "The handset reported: {outcome}.",
  "arb.noScreen": "No screen came back (the dialog stalled before any answer).",
} as const;

export const fr: Record<keyof typeof en, string> = {
  "arb.title": "Arbitrage",
  "arb.unproven": "Composées sans preuve",
  "arb.settled": "Réglées sur parole",
  "arb.settle": "Régler",
  "arb.outcome": "Issue",
  "arb.arrived": "L'argent est arrivé",
  "arb.notArrived": "L'argent n'est pas arrivé",
  "arb.selfResolving": "peut encore être prouvée",
  "arb.contradicted": "déclarée échouée, mais le message de l'opérateur prouve qu'elle est passée : ne pas relancer",
  "arb.evidenceCount": "SMS vus",
  "arb.by": "Réglée par",
  "arb.done": "Opération réglée : {status}.",
  "arb.lastScreen": "Dernier écran USSD du téléphone",
  "arb.handsetSaid": "Le téléphone a signalé : {outcome}.",
  "arb.noScreen": "Aucun écran n'est revenu (le dialogue s'est arrêté avant toute réponse).",
};
