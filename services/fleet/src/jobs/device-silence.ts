import { PeriodicJob, type Database, type Logger } from "@transferops/kit";
import { deviceSilent } from "../domain/alerts.ts";
import { raiseAlert } from "../events/alerts.ts";
import { claimSilentDevices } from "../store/devices.ts";

/**
 * Looks for handsets silent longer than the contract's 5 minutes and raises one
 * `device_silent` alert per silence (a heartbeat re-arms it). A device that never sent a
 * heartbeat is watched from its registration once it holds a SIM (work can sit queued on
 * it); without a SIM it is not deployed yet.
 */
export class DeviceSilenceMonitor {
  private readonly job: PeriodicJob;

  constructor(
    private readonly db: Database,
    private readonly options: { silentAfterS: number; checkMs: number },
    private readonly published: () => void,
    private readonly log: Logger,
  ) {
    this.job = new PeriodicJob("device silence check", options.checkMs, () => this.check(), log);
  }

  start(): void {
    this.job.start();
  }

  /** One check; returns the devices alerted. */
  async check(): Promise<string[]> {
    const now = new Date();
    const silent = await this.db.tx(async (em) => {
      const devices = await claimSilentDevices(em, this.options.silentAfterS);
      for (const d of devices)
        await raiseAlert(
          em,
          deviceSilent(
            { device_id: d.id, label: d.label, last_seen_at: d.last_seen_at, silent_since: d.silent_since },
            now,
          ),
        );
      return devices;
    });
    if (silent.length) {
      this.log.warn({ device_ids: silent.map((d) => d.id) }, "devices silent");
      this.published();
    }
    return silent.map((d) => d.id);
  }

  stop(): Promise<void> {
    return this.job.stop();
  }
}
