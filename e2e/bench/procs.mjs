// What a browser profile's processes use, read from Linux's /proc: every
// process whose command line names the profile's folder (the browser, its
// renderers, GPU and utility processes). A process that ended meanwhile
// is no longer counted.
import { execFileSync } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';

/** Clock ticks per second, the unit of /proc's CPU times. */
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

async function overProfile(profile, read, type) {
  let total = 0;
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmdline.includes(profile)) continue;
      // Chromium rewrites its processes' command lines with spaces.
      if (type && !cmdline.includes(`--type=${type}`)) continue;
      total += await read(pid);
    } catch {
      // The process ended meanwhile.
    }
  }
  return total;
}

/** Resident memory, KB. */
export function rssKb(profile) {
  return overProfile(profile, async (pid) => {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  });
}

/** CPU time so far, user and system, ms, of the renderer processes: the
 * page's (its main thread, its workers, V8's compiler threads) and any
 * other, idle by then. The browser process's own start, still going on in
 * the first second, is left out, and with it IndexedDB's work. */
export function rendererCpuMs(profile) {
  const cpu = async (pid) => {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command's name, which may itself hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS;
  };
  return overProfile(profile, cpu, 'renderer');
}
