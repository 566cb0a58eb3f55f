import {
  Announcements,
  FORGET_ALL,
  type AnnouncementBatch,
  type Database,
  type EntityManager,
  type Logger,
} from "@transferops/kit";

/**
 * PostgreSQL channel announcing that an authenticated answer stopped being true (payload:
 * `agent:<id>`, `session:<id>`, `device:<id>`, or `*` for all of them).
 */
export const CREDENTIALS_CHANNEL = "fleet_credentials";

/** What a credential change names: every session of an agent, one session, one device's token. */
export const credentialKey = {
  agent: (agentId: string) => `agent:${agentId}`,
  session: (sessionId: string) => `session:${sessionId}`,
  device: (deviceId: string) => `device:${deviceId}`,
  all: FORGET_ALL,
};

/**
 * Announces, in the caller's transaction, that these credentials changed: every replica's
 * watchers hear it when the transaction commits (NOTIFY is delivered on commit, and not at
 * all on rollback).
 */
export async function announceCredentials(em: EntityManager, keys: string[]): Promise<void> {
  for (const key of keys) await em.execute(`select pg_notify(?, ?)`, [CREDENTIALS_CHANNEL, key]);
}

/** One batch of a watch, by kind of credential. */
export interface CredentialBatch {
  agentIds: string[];
  sessionIds: string[];
  deviceIds: string[];
  forgetAll: boolean;
}

function byKind(b: AnnouncementBatch): CredentialBatch {
  const out: CredentialBatch = { agentIds: [], sessionIds: [], deviceIds: [], forgetAll: b.forgetAll };
  for (const key of b.keys) {
    const at = key.indexOf(":");
    const id = key.slice(at + 1);
    if (key.startsWith("agent:")) out.agentIds.push(id);
    else if (key.startsWith("session:")) out.sessionIds.push(id);
    else if (key.startsWith("device:")) out.deviceIds.push(id);
  }
  return out;
}

/**
 * This replica's LISTEN on `fleet_credentials`, served as the WatchCredentials stream: every
 * credential change any replica commits reaches every watcher of every replica. A change waits (`announced`)
 * until this replica heard its own announcement before answering, so its watchers were told
 * before the caller learns of the change.
 */
export class CredentialChanges {
  private readonly heard: Announcements;

  constructor(
    private readonly db: Database,
    url: string,
    log: Logger,
  ) {
    this.heard = new Announcements({ url, channel: CREDENTIALS_CHANNEL, log });
  }

  get live(): boolean {
    return this.heard.live;
  }

  start(): Promise<void> {
    return this.heard.start();
  }

  /**
   * Runs `work` in a transaction that announces `keys` (the credentials it ends), then waits
   * until this replica heard the announcement (at most 2 s), so its watchers were told first.
   */
  async change<T>(keys: string[], work: (em: EntityManager) => Promise<T>): Promise<T> {
    const waits = keys.map((k) => this.heard.hearing(k));
    try {
      const result = await this.db.tx(async (em) => {
        const r = await work(em);
        await announceCredentials(em, keys);
        return r;
      });
      await Promise.all(waits.map((w) => w.heard));
      return result;
    } finally {
      for (const w of waits) w.cancel();
    }
  }

  async *watch(signal: AbortSignal): AsyncGenerator<CredentialBatch> {
    for await (const b of this.heard.watch(signal)) yield byKind(b);
  }

  stop(): Promise<void> {
    return this.heard.stop();
  }
}
