import { lstat, readdir, readlink, stat } from "node:fs/promises";
import type { Dirent, Stats } from "node:fs";
import { join } from "node:path";
import type { Diagnostic } from "./types.js";

const SKIP_DIRS = new Set(["node_modules", ".git", ".faultline"]);

/** The file-system calls the walker makes; tests inject failing ones (EACCES cannot be simulated as root). */
export interface WalkFs {
  stat(path: string): Promise<Stats>;
  lstat(path: string): Promise<Stats>;
  readdir(path: string, opts: { withFileTypes: true }): Promise<Dirent[]>;
  readlink(path: string): Promise<string>;
}

const nodeFs: WalkFs = { stat, lstat, readdir, readlink };

export interface WalkResult {
  /** Files to read, in a stable order (so trace ids are stable), each real file once. */
  files: string[];
  /** Paths given that do not exist (also reported in `diagnostics`). */
  missing: string[];
  /**
   * Named pipes and devices given explicitly (`faultline inspect <(cat run.jsonl)`, `/dev/stdin`): they are in
   * `files` too, and can be read once only, as a stream.
   */
  streams: string[];
  /**
   * What the walk met besides files: missing paths and unreadable folders (errors), symlink loops (warnings), pipes,
   * sockets and devices inside folders and paths that lead to a file or folder already read (notices).
   */
  diagnostics: Diagnostic[];
}

const key = (st: Stats) => `${st.dev}:${st.ino}`;
const errText = (e: unknown) => (e as Error).message ?? String(e);

function specialKind(st: Stats): string | undefined {
  if (st.isFIFO()) return "named pipe (FIFO)";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice()) return "character device";
  if (st.isBlockDevice()) return "block device";
  return undefined;
}

/**
 * Expands files and folders into a sorted list of files (deterministic order, so trace ids are stable). Each real
 * file and folder (by device and inode) is visited once: a symlink back to a folder being walked is a loop, named in
 * a warning and not followed. A folder that cannot be listed is one error; the rest is still walked. Pipes met inside
 * a folder are skipped with a notice (reading one could block forever); a pipe given explicitly is read.
 */
export async function walkFiles(paths: string[], fs: WalkFs = nodeFs): Promise<WalkResult> {
  const files: string[] = [];
  const missing: string[] = [];
  const streams: string[] = [];
  const diagnostics: Diagnostic[] = [];
  /** First path of every file and folder visited, by dev:ino. */
  const seen = new Map<string, string>();
  /** Folders on the current walk path, by dev:ino (a symlink to one of them is a loop). */
  const active = new Map<string, string>();

  const explain = async (p: string, e: unknown, explicit: boolean): Promise<void> => {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      // a dangling symlink inside a folder is named as one
      const link = await fs.lstat(p).then((l) => (l.isSymbolicLink() ? fs.readlink(p) : undefined), () => undefined);
      if (link !== undefined) {
        diagnostics.push({ level: "error", file: p, message: `broken symbolic link: its target ${link} does not exist`, skipped: "file" });
        return;
      }
      missing.push(p);
      diagnostics.push({ level: "error", file: p, message: "no such file or folder", skipped: "file" });
      return;
    }
    if (code === "ELOOP") {
      diagnostics.push({ level: "warning", file: p, message: "symlink loop: the path never resolves; not followed" });
      return;
    }
    diagnostics.push({ level: "error", file: p, message: `cannot read${explicit ? "" : " (inside a folder)"}: ${errText(e)}`, skipped: "file" });
  };

  const visit = async (p: string, explicit: boolean): Promise<void> => {
    let st: Stats;
    try {
      st = await fs.stat(p);
    } catch (e) {
      await explain(p, e, explicit);
      return;
    }
    const k = key(st);
    if (st.isDirectory()) {
      const ancestor = active.get(k);
      if (ancestor !== undefined) {
        diagnostics.push({ level: "warning", file: p, message: `symlink loop: ${p} leads back to ${ancestor}, which is being read; not followed` });
        return;
      }
      const first = seen.get(k);
      if (first !== undefined) {
        diagnostics.push({ level: "notice", file: p, message: `same folder as ${first}, already read; not read again` });
        return;
      }
      seen.set(k, p);
      let entries: Dirent[];
      try {
        entries = await fs.readdir(p, { withFileTypes: true });
      } catch (e) {
        diagnostics.push({ level: "error", file: p, message: `cannot read folder: ${errText(e)}; its files are not read`, skipped: "file" });
        return;
      }
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      active.set(k, p);
      for (const e of entries) {
        if (e.isDirectory() && (SKIP_DIRS.has(e.name) || e.name.startsWith("."))) continue;
        if (e.isFile() && e.name.startsWith(".")) continue;
        await visit(join(p, e.name), false);
      }
      active.delete(k);
      return;
    }
    if (st.isFile()) {
      const first = seen.get(k);
      if (first !== undefined) {
        diagnostics.push({ level: "notice", file: p, message: `same file as ${first}, already read; not read again` });
        return;
      }
      seen.set(k, p);
      files.push(p);
      return;
    }
    const kind = specialKind(st) ?? "special file";
    if (explicit && (st.isFIFO() || st.isCharacterDevice())) {
      // process substitution (/dev/fd/63) and named pipes given by name are read once, as a stream
      streams.push(p);
      files.push(p);
      return;
    }
    diagnostics.push({
      level: "notice",
      file: p,
      message: `skipped: ${kind}${explicit ? "" : " inside a folder (reading it could block); give its path as an argument to read it"}`,
    });
  };

  for (const p of paths) await visit(p, true);
  return { files, missing, streams, diagnostics };
}
