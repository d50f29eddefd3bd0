import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmdirSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";

/** The files a run writes into its output folder (`--out`). */
export const OUTPUT_FILES = ["findings.jsonl", "summary.json", "report.html", "report.md", "traces.csv", "groups.csv", "interventions.csv"] as const;

const STAGING_MARK = ".faultline-tmp-";

/** Whether a process id is alive (a signal 0 probe; EPERM means alive but not ours). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * A run's output folder, written atomically: every file goes into a hidden sibling folder
 * (`.<out>.faultline-tmp-<pid>-…`) and appears in `out` only when the run is done ({@link commit}), so `out` never
 * holds a new partial findings.jsonl beside an old report.html. A run that is killed leaves `out` as it was (its
 * staging folder is removed by the next run once its process is gone); a run that reads nothing writes nothing.
 *
 * Committing: when `out` does not exist, or holds nothing but faultline's own outputs, the staging folder is renamed
 * into place (the old folder is moved aside first, then removed). When `out` holds anything else (a store, the user's
 * files) or is the working directory, each finished file is renamed into it: nothing of the user's is touched.
 */
export class OutputDir {
  /** The folder the outputs end up in (resolved). */
  readonly dir: string;
  private staging?: string;
  private committed = false;

  constructor(out: string) {
    this.dir = resolve(out);
    if (existsSync(this.dir) && !statSync(this.dir).isDirectory()) throw new Error(`${out}: exists and is not a folder (--out names the folder the outputs go to)`);
  }

  /** Where a file is written now (inside the staging folder, created on first use). */
  path(name: string): string {
    if (this.committed) throw new Error(`${this.dir}: the outputs were already committed`);
    if (!this.staging) {
      const parent = dirname(this.dir);
      mkdirSync(parent, { recursive: true });
      this.removeStale(parent);
      this.staging = mkdtempSync(join(parent, `.${basename(this.dir)}${STAGING_MARK}${process.pid}-`));
    }
    return join(this.staging, name);
  }

  /** Where a file will be once committed. */
  finalPath(name: string): string {
    return join(this.dir, name);
  }

  /** The staging folder (created on first use). */
  get stagingDir(): string {
    return dirname(this.path(OUTPUT_FILES[0]));
  }

  /** Moves the finished outputs into place. */
  commit(): void {
    if (!this.staging || this.committed) return;
    const staging = this.staging;
    this.committed = true;
    if (!existsSync(this.dir)) {
      renameSync(staging, this.dir);
      return;
    }
    const cwd = resolve(process.cwd());
    const holdsCwd = cwd === this.dir || cwd.startsWith(this.dir + sep);
    const onlyOurs = readdirSync(this.dir).every((e) => (OUTPUT_FILES as readonly string[]).includes(e));
    if (onlyOurs && !holdsCwd) {
      const aside = `${staging}-old`;
      renameSync(this.dir, aside);
      renameSync(staging, this.dir);
      rmSync(aside, { recursive: true, force: true });
      return;
    }
    for (const f of readdirSync(staging)) renameSync(join(staging, f), join(this.dir, f));
    rmdirSync(staging);
  }

  /** Removes what was staged and not committed (an error midway, or nothing to write). */
  discard(): void {
    if (this.staging && !this.committed) rmSync(this.staging, { recursive: true, force: true });
    this.staging = undefined;
  }

  /** Staging folders of this output folder left by runs whose process is gone (killed midway). */
  private removeStale(parent: string): void {
    const prefix = `.${basename(this.dir)}${STAGING_MARK}`;
    let entries: string[];
    try {
      entries = readdirSync(parent);
    } catch {
      return;
    }
    for (const e of entries) {
      if (!e.startsWith(prefix)) continue;
      const pid = Number(/^(\d+)-/.exec(e.slice(prefix.length))?.[1]);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !alive(pid)) rmSync(join(parent, e), { recursive: true, force: true });
    }
  }
}
