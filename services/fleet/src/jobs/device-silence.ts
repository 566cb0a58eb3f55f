import type { Database, Logger } from "@transferops/kit";
import { deviceSilent } from "../domain/alerts.ts";
import { raiseAlert } from "../events/alerts.ts";
import { claimSilentDevices } from "../store/devices.ts";

/**
 * Looks for handsets silent longer than the contract's 5 minutes and raises one
 * `device_silent` alert per silence (a heartbeat re-arms it). Devices that never sent a
 * heartbeat are not watched: they are not deployed yet.
 */
export class DeviceSilenceMonitor {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly options: { silentAfterS: number; checkMs: number },
    private readonly published: () => void,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.check()
        .then(() => undefined)
        .catch((err: unknown) => this.log.warn({ err }, "device silence check failed; will retry"))
        .finally(() => {
          this.running = undefined;
          this.schedule();
        });
    }, this.options.checkMs);
    this.timer.unref();
  }

  /** One check; returns the devices alerted. */
  async check(): Promise<string[]> {
    const now = new Date();
    const silent = await this.db.tx(async (em) => {
      const devices = await claimSilentDevices(em, this.options.silentAfterS);
      for (const d of devices)
        await raiseAlert(em, deviceSilent({ device_id: d.id, label: d.label, last_seen_at: d.last_seen_at }, now));
      return devices;
    });
    if (silent.length) {
      this.log.warn({ device_ids: silent.map((d) => d.id) }, "devices silent");
      this.published();
    }
    return silent.map((d) => d.id);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
