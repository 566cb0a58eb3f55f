// Reset of production data: exactly this phrase or nothing is touched.
export const RESET_PHRASE = "RESET SERVICE PRODUCTION DATA";

export const isResetConfirmed = (confirm: string) => confirm === RESET_PHRASE;

/** What the reset deletes in fleet (the other tables of the contract's list live in dispatch and evidence). */
export const FLEET_DELETED = ["notifications", "webhook_deliveries", "devices", "sims", "sessions", "agents"] as const;
/** What it preserves: access profiles, limits, the audit log, every admin (and the webhook endpoints). */
export const FLEET_PRESERVED = ["access_profiles", "limits", "audit_log", "admin_agents", "webhooks"] as const;

export const RESET_NOTES = [
  "Devices and SIMs must be re-provisioned: register each handset again and create its SIMs with their PINs.",
  "Run a balance check on every SIM: a new SIM is unmeasured and is selected for nothing but a balance check.",
  "Access profiles were kept and may name SIM ids that no longer exist; grant the new SIMs.",
];
