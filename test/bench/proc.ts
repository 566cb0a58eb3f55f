// What the benchmarks read of the machine (from /proc, Linux) and when PostgreSQL's statistics hold it.
import { readFileSync } from "node:fs";

/** A process's CPU time so far, user and system, in ticks (10 ms); 0 once it is gone. */
export function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/**
 * Sectors (512 bytes) read from the machine's disks so far, whole disks only (not their
 * partitions, not loop or ram devices); undefined where /proc/diskstats does not exist.
 */
export function diskSectorsRead(): number | undefined {
  try {
    let sectors = 0;
    for (const line of readFileSync("/proc/diskstats", "utf8").split("\n")) {
      const f = line.trim().split(/\s+/);
      if (f.length < 6 || !/^(sd[a-z]+|vd[a-z]+|xvd[a-z]+|nvme\d+n\d+)$/.test(f[2])) continue;
      sectors += Number(f[5]);
    }
    return sectors;
  } catch {
    return undefined;
  }
}

/**
 * Waits until PostgreSQL's statistics hold a window's work. A backend adds its counts to
 * pg_stat_database at most once a second while it works, and one that goes idle with some
 * unreported reports them only 10 s later (PGSTAT_IDLE_INTERVAL): a count read at once misses
 * the last second of every backend that just went idle (a phase's end), and a window that
 * follows a busy moment (a vacuum, a phase) counts that moment's late.
 */
export const statsReported = () => new Promise((res) => setTimeout(res, 11_000));
