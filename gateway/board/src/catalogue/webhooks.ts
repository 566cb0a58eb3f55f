// The strings of the Webhooks page, in English and French: the French
// catalogue is typed by the English keys, so a key missing from it (or one it adds) does not compile.
export const en = {
  "hook.title": "Webhooks",
  "hook.url": "Address (https://…)",
  "hook.events": "Events",
  "hook.add": "Register",
  "hook.added": "Webhook {url} registered.",
  "hook.secretOnce": "The signing secret of {url}, shown this once: enter it in the receiver now.",
  "hook.secretNoted": "I have entered it",
  "hook.createdBy": "Registered by",
  "hook.deliveries": "Deliveries",
  "hook.deliveriesOf": "Deliveries to {url}",
  "hook.event": "Event",
  "hook.attempts": "Attempts",
  "hook.last": "Last attempt",
  "hook.delivered": "Delivered",
  "hook.remove": "Remove",
  "hook.removeWhat": "{url} will receive nothing more, and its deliveries and their attempts will be deleted.",
  "hook.removeConfirm": "Remove the webhook",
  "hook.removed": "Webhook {url} removed.",
} as const;

export const fr: Record<keyof typeof en, string> = {
  "hook.title": "Webhooks",
  "hook.url": "Adresse (https://…)",
  "hook.events": "Événements",
  "hook.add": "Enregistrer",
  "hook.added": "Webhook {url} enregistré.",
  "hook.secretOnce":
    "Le secret de signature de {url}, affiché cette seule fois : saisissez-le maintenant chez le destinataire.",
  "hook.secretNoted": "Je l'ai saisi",
  "hook.createdBy": "Enregistré par",
  "hook.deliveries": "Envois",
  "hook.deliveriesOf": "Envois vers {url}",
  "hook.event": "Événement",
  "hook.attempts": "Tentatives",
  "hook.last": "Dernière tentative",
  "hook.delivered": "Remis",
  "hook.remove": "Retirer",
  "hook.removeWhat": "{url} ne recevra plus rien, et ses envois et leurs tentatives seront supprimés.",
  "hook.removeConfirm": "Retirer le webhook",
  "hook.removed": "Webhook {url} retiré.",
};
