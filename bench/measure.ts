/** Runs a command as a child process and measures its wall time and peak RSS (Linux: VmHWM from /proc, polled). */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

export interface Measured {
  seconds: number;
  /** Peak resident set of the child (MB); NaN where /proc is not readable. */
  peakRssMB: number;
  stdout: string;
  stderr: string;
  code: number | null;
}

function hwm(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

export function measure(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Measured> {
  return new Promise((resolvePromise, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    let peak = NaN;
    const poll = setInterval(() => {
      const h = hwm(child.pid!);
      if (!Number.isNaN(h)) peak = Number.isNaN(peak) ? h : Math.max(peak, h);
    }, 10);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.on("error", (e) => {
      clearInterval(poll);
      reject(e);
    });
    child.on("close", (code) => {
      clearInterval(poll);
      resolvePromise({ seconds: (performance.now() - t0) / 1000, peakRssMB: peak, stdout, stderr, code });
    });
  });
}

/** measure(), failing on a non-zero exit. */
export async function measureOk(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Measured> {
  const m = await measure(cmd, args, opts);
  if (m.code !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${m.code}: ${m.stderr.slice(-2000)}`);
  return m;
}
