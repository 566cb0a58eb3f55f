// The strings of the Limits and breaker page, in English and French: the French
// catalogue is typed by the English keys, so a key missing from it (or one it adds) does not compile.
export const en = {
  "fleet.title": "Limits and circuit breaker",
  "fleet.breaker": "Circuit breaker",
  "fleet.breakerOn": "Tripped: creating an operation is refused (423).",
  "fleet.breakerOff": "Not tripped: operations are created as usual.",
  "fleet.frozen": "Frozen handsets ({n}): {devices}",
  "fleet.noHandset": "none",
  "fleet.trip": "Trip the breaker",
  "fleet.resetOnly": "Reset the breaker only",
  "fleet.lift": "Lift the breaker and restore the handsets",
  "fleet.tripTitle": "Trip the circuit breaker",
  "fleet.resetTitle": "Reset the circuit breaker",
  "fleet.liftTitle": "Lift the circuit breaker",
  "fleet.tripConfirm": "Trip the breaker now",
  "fleet.resetConfirm": "Reset the breaker, handsets stay frozen",
  "fleet.liftConfirm": "Lift and restore the handsets",
  "fleet.tripWhat":
    "Every new operation will be refused (423), and the {n} active handsets will be frozen, so they get no queued work: {devices}. Operations already running continue.",
  "fleet.resetWhat":
    "Operations can be created again, but the {n} frozen handsets stay frozen and get no work until the breaker is lifted: {devices}.",
  "fleet.liftWhat":
    "The breaker will be reset and the {n} frozen handsets set back to active, so they get work again: {devices}. This is written in the audit log.",
  "fleet.tripped": "Breaker tripped. Handsets frozen: {devices}.",
  "fleet.reset": "Breaker reset. Handsets still frozen until lifted: {devices}.",
  "fleet.lifted": "Breaker lifted. Handsets restored: {devices}.",
  "fleet.limits": "Fleet limits",
  "fleet.notEnforced": "Limits are recorded, not enforced by the server yet: they are the fleet's written rule.",
  "fleet.everyOperator": "Every operator",
  "fleet.maxAmount": "Maximum per operation (FCFA)",
  "fleet.maxDailyAgent": "Maximum a day per agent (FCFA)",
  "fleet.maxDailySim": "Maximum a day per SIM (FCFA)",
  "fleet.since": "In force since",
  "fleet.newLimit": "Record a limit",
  "fleet.record": "Record…",
  "fleet.recordTitle": "Record a fleet limit",
  "fleet.recordConfirm": "Record the limit",
  "fleet.recordWhat":
    "{operator}, {type}: at most {max} per operation, {agent} a day per agent, {sim} a day per SIM. It replaces the current limit for {operator} and {type}, if any.",
  "fleet.recorded": "Limit recorded.",
} as const;

export const fr: Record<keyof typeof en, string> = {
  "fleet.title": "Limites et disjoncteur",
  "fleet.breaker": "Disjoncteur",
  "fleet.breakerOn": "Déclenché : toute création d'opération est refusée (423).",
  "fleet.breakerOff": "Non déclenché : les opérations sont créées normalement.",
  "fleet.frozen": "Téléphones gelés ({n}) : {devices}",
  "fleet.noHandset": "aucun",
  "fleet.trip": "Déclencher le disjoncteur",
  "fleet.resetOnly": "Réarmer le disjoncteur seulement",
  "fleet.lift": "Lever le disjoncteur et rétablir les téléphones",
  "fleet.tripTitle": "Déclencher le disjoncteur",
  "fleet.resetTitle": "Réarmer le disjoncteur",
  "fleet.liftTitle": "Lever le disjoncteur",
  "fleet.tripConfirm": "Déclencher maintenant",
  "fleet.resetConfirm": "Réarmer, les téléphones restent gelés",
  "fleet.liftConfirm": "Lever et rétablir les téléphones",
  "fleet.tripWhat":
    "Toute nouvelle opération sera refusée (423), et les {n} téléphones actifs seront gelés, sans travail de la file : {devices}. Les opérations en cours continuent.",
  "fleet.resetWhat":
    "Les opérations pourront de nouveau être créées, mais les {n} téléphones gelés le restent, sans travail, jusqu'à la levée : {devices}.",
  "fleet.liftWhat":
    "Le disjoncteur sera réarmé et les {n} téléphones gelés redeviendront actifs et recevront du travail : {devices}. C'est inscrit au journal d'audit.",
  "fleet.tripped": "Disjoncteur déclenché. Téléphones gelés : {devices}.",
  "fleet.reset": "Disjoncteur réarmé. Téléphones gelés jusqu'à la levée : {devices}.",
  "fleet.lifted": "Disjoncteur levé. Téléphones rétablis : {devices}.",
  "fleet.limits": "Limites de la flotte",
  "fleet.notEnforced":
    "Les limites sont enregistrées, pas encore appliquées par le serveur : c'est la règle écrite de la flotte.",
  "fleet.everyOperator": "Tous les opérateurs",
  "fleet.maxAmount": "Maximum par opération (FCFA)",
  "fleet.maxDailyAgent": "Maximum par jour et par agent (FCFA)",
  "fleet.maxDailySim": "Maximum par jour et par SIM (FCFA)",
  "fleet.since": "En vigueur depuis",
  "fleet.newLimit": "Enregistrer une limite",
  "fleet.record": "Enregistrer…",
  "fleet.recordTitle": "Enregistrer une limite de flotte",
  "fleet.recordConfirm": "Enregistrer la limite",
  "fleet.recordWhat":
    "{operator}, {type} : au plus {max} par opération, {agent} par jour et par agent, {sim} par jour et par SIM. Elle remplace la limite en vigueur pour {operator} et {type}, s'il y en a une.",
  "fleet.recorded": "Limite enregistrée.",
};
