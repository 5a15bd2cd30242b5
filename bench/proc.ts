import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'

/** Memory of a process, from /proc/<pid>/status, in MiB. */
export interface Memory {
  /** Resident set size now (VmRSS). */
  rssMiB: number
  /** Highest resident set size since start or since the last resetPeakRss (VmHWM). */
  peakMiB: number
}

export function readMemory(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return { rssMiB: statusKb(status, 'VmRSS') / 1024, peakMiB: statusKb(status, 'VmHWM') / 1024 }
}

function statusKb(status: string, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)
  if (!match) throw new Error(`/proc status has no ${field}`)
  return Number(match[1])
}

/**
 * Makes VmHWM start again from the current RSS (clear_refs 5, Linux 4.0+), so that a peak can
 * be told per scenario. False where the kernel or permissions refuse: VmHWM is then the
 * peak since the process started.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

let ticks: number | undefined

function ticksPerSecond(): number {
  ticks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  return ticks
}

/** CPU time (user + system) a process has used so far, in seconds; 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name, which is in parentheses and may itself hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond()
  } catch {
    return 0
  }
}

/** CPU time every process of the machine has used so far, in seconds (/proc/stat). */
export function machineCpuSeconds(): number {
  // cpu  user nice system idle iowait irq softirq steal ...: all but idle and iowait are busy.
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.split(/\s+/).slice(1)
  const busy = [0, 1, 2, 5, 6, 7].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0)
  return busy / ticksPerSecond()
}

/** CPU time of the PostgreSQL server's processes, which work for the server under test. */
export function postgresCpuSeconds(): number {
  let total = 0
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') {
        total += cpuSeconds(Number(entry))
      }
    } catch {
      // ended meanwhile
    }
  }
  return total
}

/** What was used while a server was watched; CPU as a share of one core (100 = one core). */
export interface Usage {
  /** Highest RSS of the server among the samples taken (every 200 ms), in MiB. */
  sampledMaxRssMiB: number
  serverCpuPercent: number
  /**
   * CPU the machine used beyond the server, the load generator, this process and PostgreSQL:
   * someone else's work, which makes the window's figures suspect when it is large.
   */
  foreignCpuPercent: number
}

/** Samples a server's RSS and measures CPU use until the returned function is called. */
export function watchServer(serverPid: number, loadPid: number, intervalMs = 200): () => Usage {
  const cpu = () => ({
    server: cpuSeconds(serverPid),
    ours: cpuSeconds(serverPid) + cpuSeconds(loadPid) + cpuSeconds(process.pid),
    postgres: postgresCpuSeconds(),
    machine: machineCpuSeconds(),
  })
  const startedAt = performance.now()
  const before = cpu()
  let maxRss = readMemory(serverPid).rssMiB
  const timer = setInterval(() => {
    try {
      maxRss = Math.max(maxRss, readMemory(serverPid).rssMiB)
    } catch {
      // the server ended; whoever waits on it reports that
    }
  }, intervalMs)
  return () => {
    clearInterval(timer)
    const after = cpu()
    const percent = (seconds: number) => (100 * seconds) / ((performance.now() - startedAt) / 1000)
    maxRss = Math.max(maxRss, readMemory(serverPid).rssMiB)
    return {
      sampledMaxRssMiB: maxRss,
      serverCpuPercent: percent(after.server - before.server),
      foreignCpuPercent: Math.max(
        0,
        percent(
          after.machine -
            before.machine -
            (after.ours - before.ours) -
            (after.postgres - before.postgres),
        ),
      ),
    }
  }
}
