import type { Step } from "../trace/index.js";
import { argsObject, isFailedOutcome, isShellTool } from "../trace/actions.js";

/**
 * Rebuilds a deliverable file (ITBench `agent_output.json`) from the run's own write actions when the file itself is
 * not beside the trace: `apply_patch` envelopes (`*** Add File:` / `*** Update File:`), shell heredocs and redirects
 * (`cat > f <<EOF`, `cat <<'EOF' > f`, `echo '…' > f`, `printf`, `tee`, `jq . > f`), Python `open(f, 'w')` writes
 * (`json.dump(<literal or variable>, fh)`, `fh.write(…)`, `Path(f).write_text(…)`), `cp`/`mv` of a file the run
 * wrote, and editor tools (`create` with the file text). Only writes whose result reports success count; the last
 * successful write wins (appends and patch updates apply on top of what came before).
 *
 * Nothing is executed: the shell and Python are read, not run. What cannot be rebuilt (content computed at run
 * time, an unquoted heredoc's expansions) is said in `problems` / `notes`. When the last write's content is unknown,
 * a later successful read-back of the whole file (`cat f`, `jq . f`) stands in for it.
 */

export type WriteVia = "apply_patch" | "shell heredoc" | "shell echo" | "shell printf" | "shell pipe" | "shell copy" | "python" | "editor tool" | "read-back";

export interface DeliverableWrite {
  /** Index of the tool_call step. */
  step: number;
  via: WriteVia;
  op: "write" | "append" | "update" | "delete";
  /** The call's result reported success (a write without a recorded result does not count). */
  ok: boolean;
  /** Why the content of this write could not be rebuilt. */
  problem?: string;
}

export interface ReconstructedDeliverable {
  /** Base name looked for, e.g. `agent_output.json`. */
  name: string;
  /** The file's content after the last successful write; undefined when nothing wrote it or it could not be rebuilt. */
  content?: string;
  /** Step of the write (or read-back) the content comes from. */
  step?: number;
  via?: WriteVia;
  /** Every attempt to write the file, in order. */
  writes: DeliverableWrite[];
  /** Leniencies of the reconstruction (e.g. an unquoted heredoc taken verbatim). */
  notes: string[];
  /** Why no content is given although the run wrote the file. */
  problem?: string;
}

// ---------------------------------------------------------------------------------------------------------------
// File operations a call performs
// ---------------------------------------------------------------------------------------------------------------

interface FileOp {
  /** Base name of the file. */
  file: string;
  op: "write" | "append" | "update" | "delete";
  via: WriteVia;
  /** New content (write/append), when known. */
  text?: string;
  /** For updates: turns the previous content into the new one (undefined result: the update did not apply). */
  update?: (prev: string) => string | undefined;
  problem?: string;
  note?: string;
}

const baseName = (p: string) => p.replace(/\\/g, "/").replace(/\/+$/, "").split("/").pop() ?? p;

/** Files the run wrote so far, by base name (for `cp`, `mv`, `cat f`, `python3 script.py`). */
type Files = Map<string, string>;

// --- apply_patch ---------------------------------------------------------------------------------------------------

interface PatchHunk {
  context?: string;
  lines: string[];
}

/** Parses a Codex `*** Begin Patch` envelope into file operations. */
export function parsePatch(text: string): FileOp[] {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const ops: FileOp[] = [];
  let i = 0;
  const isHeader = (l: string) => /^\*\*\* (Add|Update|Delete) File: /.test(l) || /^\*\*\* End Patch/.test(l);
  while (i < lines.length) {
    const l = lines[i]!;
    const add = l.match(/^\*\*\* Add File: (.+?)\s*$/);
    const upd = l.match(/^\*\*\* Update File: (.+?)\s*$/);
    const del = l.match(/^\*\*\* Delete File: (.+?)\s*$/);
    i++;
    if (add) {
      const body: string[] = [];
      while (i < lines.length && !isHeader(lines[i]!)) {
        const b = lines[i]!;
        if (b.startsWith("+")) body.push(b.slice(1));
        i++;
      }
      ops.push({ file: baseName(add[1]!), op: "write", via: "apply_patch", text: body.length ? `${body.join("\n")}\n` : "" });
    } else if (upd) {
      let file = baseName(upd[1]!);
      const hunks: PatchHunk[] = [];
      let cur: PatchHunk | undefined;
      while (i < lines.length && !isHeader(lines[i]!)) {
        const b = lines[i]!;
        const move = b.match(/^\*\*\* Move to: (.+?)\s*$/);
        if (move) file = baseName(move[1]!);
        else if (b.startsWith("@@")) {
          cur = { context: b.slice(2).trim() || undefined, lines: [] };
          hunks.push(cur);
        } else if (!/^\*\*\* End of File/.test(b)) {
          if (!cur) {
            cur = { lines: [] };
            hunks.push(cur);
          }
          cur.lines.push(b);
        }
        i++;
      }
      ops.push({ file, op: "update", via: "apply_patch", update: (prev) => applyHunks(prev, hunks) });
    } else if (del) {
      ops.push({ file: baseName(del[1]!), op: "delete", via: "apply_patch" });
    }
  }
  return ops;
}

function findSeq(hay: string[], needle: string[], from: number, norm: (s: string) => string): number {
  for (let i = from; i + needle.length <= hay.length; i++) {
    let ok = true;
    for (let j = 0; j < needle.length && ok; j++) ok = norm(hay[i + j]!) === norm(needle[j]!);
    if (ok) return i;
  }
  return -1;
}

/** Applies update hunks (context ` `, removal `-`, addition `+`) the way Codex does: in order, exact match first. */
function applyHunks(prev: string, hunks: PatchHunk[]): string | undefined {
  const trailing = prev.endsWith("\n");
  const lines = (trailing ? prev.slice(0, -1) : prev).split("\n");
  let cursor = 0;
  for (const h of hunks) {
    // a trailing empty line of the hunk is the patch's own line break, not content
    const body = h.lines.length && h.lines[h.lines.length - 1] === "" ? h.lines.slice(0, -1) : h.lines;
    const old = body.filter((l) => !l.startsWith("+")).map((l) => l.slice(1));
    const neu = body.filter((l) => !l.startsWith("-")).map((l) => l.slice(1));
    if (h.context) {
      const c = lines.findIndex((l, i) => i >= cursor && l.trim() === h.context!.trim());
      if (c >= 0) cursor = c + 1;
    }
    if (old.length === 0) {
      lines.splice(h.context ? cursor : lines.length, 0, ...neu);
      cursor += neu.length;
      continue;
    }
    let at = -1;
    for (const norm of [(s: string) => s, (s: string) => s.trimEnd(), (s: string) => s.trim()]) {
      at = findSeq(lines, old, cursor, norm);
      if (at < 0 && cursor > 0) at = findSeq(lines, old, 0, norm);
      if (at >= 0) break;
    }
    if (at < 0) return undefined;
    lines.splice(at, old.length, ...neu);
    cursor = at + neu.length;
  }
  return lines.join("\n") + (trailing ? "\n" : "");
}

// --- shell -------------------------------------------------------------------------------------------------------

interface Redirect {
  op: ">" | ">>";
  target: string;
}

interface ShellCommand {
  words: string[];
  redirects: Redirect[];
  /** Standard input given by a heredoc or here-string. */
  stdin?: string;
  /** The heredoc delimiter was unquoted: the shell expanded `$…` and backquotes in the body. */
  expandedHeredoc?: boolean;
  /** Joined to the previous command by `|`. */
  piped: boolean;
  /** A word holds `$…` or a backquote outside single quotes: the shell would have expanded it. */
  expands?: boolean;
}

/**
 * Splits a shell script into simple commands: words with quoting removed, output redirects, heredoc bodies and
 * here-strings, and which commands are joined by a pipe. Expansions are not performed.
 */
export function parseShell(src: string): ShellCommand[] {
  const cmds: ShellCommand[] = [];
  let cur: ShellCommand = { words: [], redirects: [], piped: false };
  let word: string | null = null;
  let pendingRedirect: ">" | ">>" | "fd" | null = null;
  let pendingHeredoc: { strip: boolean } | null = null;
  let pendingHereString = false;
  const heredocs: { cmd: ShellCommand; delim: string; quoted: boolean; strip: boolean }[] = [];
  let wordQuoted = false;
  let i = 0;

  const endWord = () => {
    if (word === null) return;
    if (pendingHeredoc) {
      heredocs.push({ cmd: cur, delim: word, quoted: wordQuoted, strip: pendingHeredoc.strip });
      pendingHeredoc = null;
    } else if (pendingHereString) {
      cur.stdin = `${word}\n`;
      pendingHereString = false;
    } else if (pendingRedirect === ">" || pendingRedirect === ">>") {
      cur.redirects.push({ op: pendingRedirect, target: word });
      pendingRedirect = null;
    } else if (pendingRedirect === "fd") {
      pendingRedirect = null;
    } else cur.words.push(word);
    word = null;
    wordQuoted = false;
  };
  const endCommand = (piped: boolean) => {
    endWord();
    if (cur.words.length || cur.redirects.length || cur.stdin !== undefined) cmds.push(cur);
    cur = { words: [], redirects: [], piped };
  };
  const readHeredocBodies = () => {
    for (const h of heredocs.splice(0)) {
      const body: string[] = [];
      while (i < src.length) {
        let end = src.indexOf("\n", i);
        if (end < 0) end = src.length;
        const line = src.slice(i, end);
        i = end + 1;
        if ((h.strip ? line.replace(/^\t+/, "") : line) === h.delim) break;
        body.push(h.strip ? line.replace(/^\t+/, "") : line);
      }
      h.cmd.stdin = body.length ? `${body.join("\n")}\n` : "";
      if (!h.quoted && /[$`]/.test(h.cmd.stdin)) h.cmd.expandedHeredoc = true;
    }
  };

  while (i < src.length) {
    const c = src[i]!;
    if (c === "'") {
      const end = src.indexOf("'", i + 1);
      const stop = end < 0 ? src.length : end;
      word = (word ?? "") + src.slice(i + 1, stop);
      wordQuoted = true;
      i = stop + 1;
    } else if (c === "$" && src[i + 1] === "'") {
      // ANSI-C quoting
      let j = i + 2;
      let out = "";
      while (j < src.length && src[j] !== "'") {
        if (src[j] === "\\" && j + 1 < src.length) {
          const e = src[j + 1]!;
          out += e === "n" ? "\n" : e === "t" ? "\t" : e === "r" ? "\r" : e === "0" ? "\0" : e;
          j += 2;
        } else out += src[j++];
      }
      word = (word ?? "") + out;
      wordQuoted = true;
      i = j + 1;
    } else if (c === '"') {
      let j = i + 1;
      let out = "";
      while (j < src.length && src[j] !== '"') {
        if (src[j] === "\\" && j + 1 < src.length && /["\\$`\n]/.test(src[j + 1]!)) {
          if (src[j + 1] !== "\n") out += src[j + 1];
          j += 2;
        } else {
          if (src[j] === "`" || (src[j] === "$" && /[({A-Za-z_]/.test(src[j + 1] ?? ""))) cur.expands = true;
          out += src[j++];
        }
      }
      word = (word ?? "") + out;
      wordQuoted = true;
      i = j + 1;
    } else if (c === "\\") {
      if (src[i + 1] !== "\n") {
        word = (word ?? "") + (src[i + 1] ?? "");
        wordQuoted = true;
      }
      i += 2;
    } else if (c === "#" && word === null) {
      while (i < src.length && src[i] !== "\n") i++;
    } else if (c === "\n") {
      endCommand(false);
      i++;
      readHeredocBodies();
    } else if (c === ";" || c === "&" || c === "|" || c === "(" || c === ")") {
      if (c === "&" && src[i + 1] === ">") {
        // &> file: stdout and stderr
        endWord();
        i += src[i + 2] === ">" ? 3 : 2;
        pendingRedirect = src[i - 1] === ">" && src[i - 2] === ">" ? ">>" : ">";
        continue;
      }
      const pipe = c === "|" && src[i + 1] !== "|";
      endCommand(pipe);
      i += (c === "&" && src[i + 1] === "&") || (c === "|" && src[i + 1] === "|") ? 2 : 1;
    } else if (c === "<") {
      const fd = word !== null && /^\d+$/.test(word) && !wordQuoted;
      if (fd) word = null;
      endWord();
      if (src.startsWith("<<<", i)) {
        pendingHereString = true;
        i += 3;
      } else if (src.startsWith("<<", i)) {
        const strip = src[i + 2] === "-";
        pendingHeredoc = { strip };
        i += strip ? 3 : 2;
      } else {
        pendingRedirect = "fd"; // input redirect: its file is not a word of the command
        i += 1;
      }
    } else if (c === ">") {
      const fdWord = word !== null && /^\d+$/.test(word) && !wordQuoted ? word : undefined;
      if (fdWord !== undefined) word = null;
      endWord();
      const append = src[i + 1] === ">";
      i += append ? 2 : 1;
      if (src[i] === "|") i++;
      if (src[i] === "&") {
        // 2>&1, >&2: a duplication, no file
        i++;
        while (i < src.length && /[0-9-]/.test(src[i]!)) i++;
        continue;
      }
      pendingRedirect = fdWord === undefined || fdWord === "1" ? (append ? ">>" : ">") : "fd";
    } else if (c === " " || c === "\t") {
      endWord();
      i++;
    } else {
      if (c === "`" || (c === "$" && /[({A-Za-z_]/.test(src[i + 1] ?? ""))) cur.expands = true;
      word = (word ?? "") + c;
      i++;
    }
  }
  endCommand(false);
  readHeredocBodies();
  return cmds;
}

const PROGRAM = (w: string | undefined) => baseName(w ?? "").toLowerCase();
const isPython = (w: string | undefined) => /^python(?:\d+(?:\.\d+)?)?$/.test(PROGRAM(w));
const isShell = (w: string | undefined) => /^(?:ba|z|da|k)?sh$/.test(PROGRAM(w));

/** `echo -e` / `printf` backslash escapes. */
function unescapeEcho(s: string): string {
  return s.replace(/\\(n|t|r|\\|0|"|')/g, (_, e: string) => (e === "n" ? "\n" : e === "t" ? "\t" : e === "r" ? "\r" : e === "0" ? "\0" : e));
}

/** Standard output of a command when it is knowable from the script alone. */
function commandOutput(cmd: ShellCommand, stdin: string | undefined, files: Files): { text?: string; problem?: string; via?: WriteVia } {
  const [prog, ...args] = cmd.words;
  const p = PROGRAM(prog);
  const fileArgs = args.filter((a) => !a.startsWith("-") || a === "-");
  if (p === "cat") {
    if (fileArgs.length === 0 || (fileArgs.length === 1 && fileArgs[0] === "-")) {
      return stdin !== undefined ? { text: stdin, via: cmd.stdin !== undefined ? "shell heredoc" : "shell pipe" } : { problem: "cat of an unknown input" };
    }
    const parts = fileArgs.map((f) => files.get(baseName(f)));
    if (parts.every((x) => x !== undefined)) return { text: parts.join(""), via: "shell copy" };
    return { problem: `cat of a file the run did not write (${fileArgs.join(" ")})` };
  }
  if (p === "echo") {
    let k = 0;
    let newline = true;
    let escapes = false;
    while (k < args.length && /^-[neE]+$/.test(args[k]!)) {
      if (args[k]!.includes("n")) newline = false;
      if (args[k]!.includes("e")) escapes = true;
      k++;
    }
    const body = args.slice(k).join(" ");
    return { text: (escapes ? unescapeEcho(body) : body) + (newline ? "\n" : ""), via: "shell echo" };
  }
  if (p === "printf") {
    const [fmt, ...rest] = args;
    if (fmt === undefined) return { problem: "printf without a format" };
    if (rest.length === 0 && !/%[^%]/.test(fmt)) return { text: unescapeEcho(fmt.replace(/%%/g, "%")), via: "shell printf" };
    const m = fmt.match(/^%s((?:\\n)?)$/);
    if (m) return { text: rest.join("") + (m[1] ? "\n" : ""), via: "shell printf" };
    return { problem: `printf format ${fmt} not rebuilt` };
  }
  if (p === "tee") return stdin !== undefined ? { text: stdin, via: cmd.stdin !== undefined ? "shell heredoc" : "shell pipe" } : { problem: "tee of an unknown input" };
  if (p === "jq") {
    // `jq . [file]` / `jq '.' [file]`: the same JSON, re-printed
    const filter = args.find((a) => !a.startsWith("-"));
    if (filter === "." || filter === undefined) {
      const f = args.filter((a) => !a.startsWith("-")).slice(1)[0];
      const input = f ? files.get(baseName(f)) : stdin;
      return input !== undefined ? { text: input, via: f ? "shell copy" : "shell pipe" } : { problem: "jq of an unknown input" };
    }
    return { problem: `jq filter ${filter} not rebuilt` };
  }
  if (isPython(prog) && args[0] === "-m" && args[1] === "json.tool") {
    const f = args[2];
    const input = f ? files.get(baseName(f)) : stdin;
    return input !== undefined ? { text: input, via: "shell pipe" } : { problem: "json.tool of an unknown input" };
  }
  return { problem: `the output of \`${prog ?? "?"}\` is computed at run time` };
}

/** File operations of parsed shell commands; `known` are the files the run wrote before this call. */
function shellOps(cmds: ShellCommand[], known: Files, depth: number): FileOp[] {
  const ops: FileOp[] = [];
  // files written earlier in the same script are seen by its later commands
  const files: Files = new Map(known);
  const track = (from: number) => {
    for (const op of ops.slice(from)) {
      if (op.op === "delete") files.delete(op.file);
      else if (op.op === "write" && op.text !== undefined) files.set(op.file, op.text);
      else if (op.op === "append" && op.text !== undefined) files.set(op.file, (files.get(op.file) ?? "") + op.text);
      else if (op.op === "update" && op.update && files.has(op.file)) {
        const next = op.update(files.get(op.file)!);
        if (next === undefined) files.delete(op.file);
        else files.set(op.file, next);
      } else files.delete(op.file);
    }
  };
  let lastOut: string | undefined;
  for (const cmd of cmds) {
    // leading VAR=value assignments and `command`/`exec` prefixes
    let words = cmd.words;
    while (words.length > 1 && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!) || /^(?:command|exec|sudo|env)$/.test(words[0]!))) words = words.slice(1);
    const c: ShellCommand = { ...cmd, words };
    const [prog, ...args] = words;
    const stdin = c.stdin ?? (c.piped ? lastOut : undefined);
    const note = c.expandedHeredoc
      ? "an unquoted heredoc was taken verbatim (the shell would have expanded $ and ` in it)"
      : c.expands
        ? "shell expansions ($…, `…`) in the command were taken verbatim"
        : undefined;
    lastOut = undefined;
    const from = ops.length;

    if (isShell(prog) && depth < 4) {
      const k = args.findIndex((a) => /^-[a-z]*c[a-z]*$/.test(a));
      const script = k >= 0 ? args[k + 1] : args[0] ? files.get(baseName(args[0])) : stdin;
      if (script !== undefined) ops.push(...shellOps(parseShell(script), files, depth + 1));
      track(from);
      continue;
    }
    if (PROGRAM(prog) === "apply_patch") {
      const patch = args[0] ?? stdin;
      if (patch) ops.push(...parsePatch(patch));
      track(from);
      continue;
    }
    if (isPython(prog)) {
      const k = args.indexOf("-c");
      const script = k >= 0 ? args[k + 1] : args[0] === "-" || args.length === 0 ? stdin : args[0] && !args[0].startsWith("-") ? files.get(baseName(args[0])) : undefined;
      // a script the run did not write here may write anything: only its redirect is seen below
      if (script !== undefined) ops.push(...pythonOps(script));
    }
    if (PROGRAM(prog) === "rm") for (const a of args.filter((x) => !x.startsWith("-"))) ops.push({ file: baseName(a), op: "delete", via: "shell copy" });
    if ((PROGRAM(prog) === "cp" || PROGRAM(prog) === "mv") && args.filter((x) => !x.startsWith("-")).length === 2) {
      const [src, dst] = args.filter((x) => !x.startsWith("-")) as [string, string];
      const text = files.get(baseName(src));
      ops.push({ file: baseName(dst), op: "write", via: "shell copy", text, problem: text === undefined ? `copied from ${src}, which the run did not write here` : undefined });
      if (PROGRAM(prog) === "mv") ops.push({ file: baseName(src), op: "delete", via: "shell copy" });
    }
    const out = commandOutput(c, stdin, files);
    if (PROGRAM(prog) === "tee") {
      const append = args.includes("-a") || args.includes("--append");
      for (const f of args.filter((x) => !x.startsWith("-"))) ops.push({ file: baseName(f), op: append ? "append" : "write", via: out.via ?? "shell pipe", text: out.text, problem: out.problem, note });
    }
    for (const r of c.redirects) {
      ops.push({ file: baseName(r.target), op: r.op === ">>" ? "append" : "write", via: out.via ?? "shell pipe", text: out.text, problem: out.problem, note });
    }
    if (c.redirects.length === 0) lastOut = out.text;
    track(from);
  }
  return ops;
}

// --- Python --------------------------------------------------------------------------------------------------------

/** The balanced `(…)`, `[…]` or `{…}` text starting at `open` (strings skipped), without the brackets' content check. */
function balanced(src: string, open: number): { text: string; end: number } | undefined {
  const pairs: Record<string, string> = { "(": ")", "[": "]", "{": "}" };
  const stack: string[] = [];
  let i = open;
  while (i < src.length) {
    const c = src[i]!;
    if (c === "'" || c === '"') {
      const triple = src.startsWith(c.repeat(3), i);
      const q = triple ? c.repeat(3) : c;
      i += q.length;
      while (i < src.length && !src.startsWith(q, i)) i += src[i] === "\\" ? 2 : 1;
      i += q.length;
      continue;
    }
    if (c === "#") {
      while (i < src.length && src[i] !== "\n") i++;
      continue;
    }
    if (pairs[c]) stack.push(pairs[c]!);
    else if (c === ")" || c === "]" || c === "}") {
      if (stack.pop() !== c) return undefined;
      if (stack.length === 0) return { text: src.slice(open, i + 1), end: i + 1 };
    }
    i++;
  }
  return undefined;
}

/** Top-level comma-separated parts of an argument list (without its parentheses). */
function splitArgs(inner: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!;
    if (c === "'" || c === '"') {
      const triple = inner.startsWith(c.repeat(3), i);
      const q = triple ? c.repeat(3) : c;
      i += q.length;
      while (i < inner.length && !inner.startsWith(q, i)) i += inner[i] === "\\" ? 2 : 1;
      i += q.length - 1;
    } else if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") depth--;
    else if (c === "," && depth === 0) {
      parts.push(inner.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = inner.slice(start).trim();
  if (last) parts.push(last);
  return parts;
}

type PyToken = { t: "str"; v: string } | { t: "num"; v: string } | { t: "const"; v: "true" | "false" | "null" } | { t: "punct"; v: string } | { t: "other"; v: string };

function pyUnescape(body: string): string {
  return body.replace(/\\(?:\n|x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|N\{[^}]*\}|(.))/g, (m, x?: string, u?: string, U?: string, ch?: string) => {
    if (m === "\\\n") return "";
    if (x) return String.fromCharCode(parseInt(x, 16));
    if (u) return String.fromCharCode(parseInt(u, 16));
    if (U) return String.fromCodePoint(parseInt(U, 16));
    if (ch === undefined) return m;
    const map: Record<string, string> = { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f", v: "\v", "0": "\0", "\\": "\\", "'": "'", '"': '"' };
    return map[ch] ?? m;
  });
}

/** Python tokens of a literal expression (strings with prefixes and triple quotes, numbers, constants, brackets). */
function pyTokens(src: string): PyToken[] | undefined {
  const out: PyToken[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === "#") {
      while (i < src.length && src[i] !== "\n") i++;
      continue;
    }
    const str = src.slice(i).match(/^([rRbBuUfF]{0,2})('''|"""|'|")/);
    if (str) {
      const prefix = str[1]!.toLowerCase();
      const q = str[2]!;
      let j = i + str[0].length;
      const start = j;
      while (j < src.length && !src.startsWith(q, j)) {
        if (src[j] === "\\") j++;
        else if (q.length === 1 && src[j] === "\n") return undefined;
        j++;
      }
      if (j >= src.length) return undefined;
      const raw = src.slice(start, j);
      if (prefix.includes("f") && /\{[^{]/.test(raw.replace(/\{\{/g, ""))) return undefined; // an f-string with fields
      let v = prefix.includes("r") ? raw : pyUnescape(raw);
      if (prefix.includes("f")) v = v.replace(/\{\{/g, "{").replace(/\}\}/g, "}");
      const prev = out[out.length - 1];
      if (prev?.t === "str") prev.v += v; // implicit concatenation
      else out.push({ t: "str", v });
      i = j + q.length;
      continue;
    }
    const num = src.slice(i).match(/^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/);
    if (num) {
      out.push({ t: "num", v: num[0] });
      i += num[0].length;
      continue;
    }
    const id = src.slice(i).match(/^[A-Za-z_][A-Za-z0-9_.]*/);
    if (id) {
      const v = id[0];
      if (v === "True" || v === "true") out.push({ t: "const", v: "true" });
      else if (v === "False" || v === "false") out.push({ t: "const", v: "false" });
      else if (v === "None" || v === "null") out.push({ t: "const", v: "null" });
      else out.push({ t: "other", v });
      i += v.length;
      continue;
    }
    if ("{}[](),:".includes(c)) {
      out.push({ t: "punct", v: c });
      i++;
      continue;
    }
    out.push({ t: "other", v: c });
    i++;
  }
  return out;
}

/** A Python literal (dict/list/tuple/str/number/True/False/None) as a JS value; undefined when it is not one. */
export function pythonLiteral(src: string): { value: unknown } | undefined {
  const toks = pyTokens(src);
  if (!toks || toks.some((t) => t.t === "other")) return undefined;
  let json = "";
  for (let k = 0; k < toks.length; k++) {
    const t = toks[k]!;
    const next = toks[k + 1];
    if (t.t === "str") json += JSON.stringify(t.v);
    else if (t.t === "num") json += t.v.replace(/^(-?)\./, "$10.").replace(/\.(?=[eE]|$)/, "");
    else if (t.t === "const") json += t.v;
    else if (t.v === ",") {
      // Python allows a trailing comma
      if (next?.t === "punct" && /[\]})]/.test(next.v)) continue;
      json += ",";
    } else json += t.v === "(" ? "[" : t.v === ")" ? "]" : t.v;
  }
  try {
    return { value: JSON.parse(json) };
  } catch {
    return undefined;
  }
}

/** The value of a Python expression the write uses: a literal, `json.dumps(x, …)`, or a name assigned a literal before `at`. */
function pythonValue(expr: string, code: string, at: number, depth = 0): { value?: unknown; text?: string; problem?: string } {
  const e = expr.trim();
  if (depth > 4) return { problem: "too many indirections" };
  const dumps = e.match(/^json\.dumps\s*\(/);
  if (dumps) {
    const b = balanced(e, dumps[0].length - 1);
    const first = b ? splitArgs(b.text.slice(1, -1))[0] : undefined;
    if (!first) return { problem: "json.dumps without an argument" };
    const v = pythonValue(first, code, at, depth + 1);
    return v.value !== undefined ? { text: JSON.stringify(v.value, null, indentOf(b!.text)) } : v;
  }
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(e)) {
    // the last assignment `name = …` before the write
    const re = new RegExp(`^[ \\t]*${e}[ \\t]*=(?!=)[ \\t]*`, "gm");
    let last: RegExpExecArray | undefined;
    for (let m = re.exec(code); m && m.index < at; m = re.exec(code)) last = m;
    if (!last) return { problem: `\`${e}\` is not assigned a literal in the script` };
    const start = last.index + last[0].length;
    const opener = code[start];
    let rhs: string | undefined;
    if (opener === "{" || opener === "[" || opener === "(") rhs = balanced(code, start)?.text;
    else rhs = code.slice(start).match(/^(?:[rRbBuUfF]{0,2}(?:'''[\s\S]*?'''|"""[\s\S]*?"""|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")|json\.dumps\s*\([\s\S]*)/)?.[0];
    if (rhs === undefined) return { problem: `\`${e}\` is computed at run time` };
    if (/^json\.dumps/.test(rhs)) {
      const b = balanced(rhs, rhs.indexOf("("));
      return b ? pythonValue(`json.dumps${b.text}`, code, last.index, depth + 1) : { problem: "unbalanced json.dumps" };
    }
    return pythonValue(rhs, code, last.index, depth + 1);
  }
  const lit = pythonLiteral(e);
  if (!lit) return { problem: "the written value is computed at run time" };
  return typeof lit.value === "string" ? { text: lit.value } : { value: lit.value };
}

function indentOf(callText: string): number | undefined {
  const m = callText.match(/indent\s*=\s*(\d+)/);
  return m ? Number(m[1]) : undefined;
}

/** Writes of a Python script to files: `open(…, 'w'|'a')` handles fed by `json.dump` / `.write`, `Path(…).write_text`. */
export function pythonOps(code: string): FileOp[] {
  const ops: FileOp[] = [];
  const fileOf = (argText: string) => {
    const lits = [...argText.matchAll(/[rRbBuUfF]{0,2}(['"])((?:\\.|(?!\1).)*)\1/g)].map((m) => m[2]!);
    return lits.length ? baseName(lits[lits.length - 1]!) : undefined;
  };
  const reOpen = /\bopen\s*\(/g;
  for (let m = reOpen.exec(code); m; m = reOpen.exec(code)) {
    const b = balanced(code, m.index + m[0].length - 1);
    if (!b) continue;
    const args = splitArgs(b.text.slice(1, -1));
    let file = args[0] ? fileOf(args[0]) : undefined;
    if (!file && args[0] && /^[A-Za-z_][A-Za-z0-9_]*$/.test(args[0])) {
      // open(path_variable, 'w') with `path_variable = '…/agent_output.json'` earlier
      const v = pythonValue(args[0], code, m.index);
      if (v.text !== undefined && !v.text.includes("\n")) file = baseName(v.text);
    }
    const modeArg = args.find((a) => /^mode\s*=/.test(a))?.replace(/^mode\s*=\s*/, "") ?? args[1];
    const mode = modeArg?.match(/^[rRbBuU]*(['"])([a-z+]*)\1$/)?.[2] ?? "r";
    if (!file || !/[wa]/.test(mode)) continue;
    const after = code.slice(b.end);
    const handle = after.match(/^\s+as\s+([A-Za-z_][A-Za-z0-9_]*)/)?.[1] ?? code.slice(0, m.index).match(/([A-Za-z_][A-Za-z0-9_]*)\s*=\s*$/)?.[1];
    const op: FileOp["op"] = mode.includes("a") ? "append" : "write";
    if (!handle) {
      ops.push({ file, op, via: "python", problem: "open() without a file handle name" });
      continue;
    }
    const h = handle.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    // the first json.dump(…, h) or h.write(…) after the open
    const reUse = new RegExp(`\\bjson\\.dump\\s*\\(|\\b${h}\\.write\\s*\\(|\\bprint\\s*\\(`, "g");
    reUse.lastIndex = b.end;
    let found: FileOp | undefined;
    for (let u = reUse.exec(code); u; u = reUse.exec(code)) {
      const ub = balanced(code, u.index + u[0].length - 1);
      if (!ub) continue;
      const uargs = splitArgs(ub.text.slice(1, -1));
      if (u[0].startsWith("print")) {
        // print(value, file=h)
        if (!uargs.some((a) => new RegExp(`^file\\s*=\\s*${h}$`).test(a))) continue;
        const v = pythonValue(uargs[0] ?? "", code, u.index);
        // a printed dict is its Python repr, not JSON: only strings (json.dumps(…) included) are rebuilt
        found = { file, op, via: "python", text: v.text !== undefined ? `${v.text}\n` : undefined, problem: v.text === undefined ? v.problem ?? "print() of a non-string value" : undefined };
      } else if (u[0].startsWith("json")) {
        if (uargs[1]?.trim() !== handle) continue;
        const v = pythonValue(uargs[0] ?? "", code, u.index);
        const text = v.value !== undefined ? JSON.stringify(v.value, null, indentOf(ub.text)) : v.text;
        found = { file, op, via: "python", text, problem: text === undefined ? v.problem : undefined };
      } else {
        const v = pythonValue(uargs[0] ?? "", code, u.index);
        const text = v.text ?? (typeof v.value === "string" ? v.value : undefined);
        found = { file, op, via: "python", text, problem: text === undefined ? v.problem ?? "write() of a non-string value" : undefined };
      }
      break;
    }
    ops.push(found ?? { file, op, via: "python", problem: "no json.dump or write() to the opened file" });
  }
  const reText = /\bPath\s*\(([^()]*)\)\s*\.write_text\s*\(/g;
  for (let m = reText.exec(code); m; m = reText.exec(code)) {
    const file = fileOf(m[1]!);
    const b = balanced(code, m.index + m[0].length - 1);
    if (!file || !b) continue;
    const v = pythonValue(splitArgs(b.text.slice(1, -1))[0] ?? "", code, m.index);
    const text = v.text ?? (typeof v.value === "string" ? v.value : undefined);
    ops.push({ file, op: "write", via: "python", text, problem: text === undefined ? v.problem : undefined });
  }
  return ops;
}

// --- one call ------------------------------------------------------------------------------------------------------

/**
 * The patch of apply_patch arguments kept as text: a free-form envelope, or a JSON object the model truncated
 * (`{"input": "*** Begin Patch\n…` without its end): its `input` string is read up to where it stops.
 */
function patchOfRawArgs(raw: string): string {
  if (!raw.trim().startsWith("{")) return raw;
  const m = raw.match(/"(?:input|patch)"\s*:\s*"((?:\\.|[^"\\])*)/);
  if (!m) return raw;
  let body = m[1]!.replace(/\\u[0-9a-fA-F]{0,3}$|\\$/, "");
  try {
    return JSON.parse(`"${body}"`) as string;
  } catch {
    body = body.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c));
    return body;
  }
}

/** The file operations one tool call performs, as far as its arguments show them. */
function callOps(step: Step, files: Files): FileOp[] {
  const tool = step.tool;
  if (!tool) return [];
  const name = tool.name.replace(/^mcp__.+?__/, "");
  const o = argsObject(tool.args);
  if (name === "apply_patch") {
    const text = typeof tool.args === "string" ? patchOfRawArgs(tool.args) : typeof o?.input === "string" ? o.input : typeof o?.patch === "string" ? o.patch : undefined;
    if (text) return parsePatch(text);
    const cmd = o?.command;
    return Array.isArray(cmd) && typeof cmd[1] === "string" ? parsePatch(cmd[1]) : [];
  }
  if (isShellTool(name)) {
    const c = o?.command ?? o?.cmd ?? o?.script ?? o?.code ?? (typeof tool.args === "string" ? tool.args : undefined);
    if (Array.isArray(c)) {
      const argv = c.map(String);
      // one string alone is a script (Codex cannot exec it, and the result says so)
      if (argv.length === 1) return shellOps(parseShell(argv[0]!), files, 0);
      return shellOps([{ words: argv, redirects: [], piped: false }], files, 0);
    }
    if (typeof c === "string") {
      if (/^python/i.test(name) || name === "run_ipython" || name === "execute_ipython_cell" || name === "ipython") return pythonOps(c);
      return shellOps(parseShell(c), files, 0);
    }
    return [];
  }
  // editor tools: create/write with the whole text, str_replace on the known content
  if (o) {
    const path = o.path ?? o.file_path ?? o.filename ?? o.file;
    if (typeof path !== "string") return [];
    const file = baseName(path);
    const text = [o.file_text, o.content, o.contents, o.text, o.new_content].find((x) => typeof x === "string") as string | undefined;
    const sub = typeof o.command === "string" ? o.command : undefined;
    if (text !== undefined && (sub === undefined || sub === "create" || sub === "write")) return [{ file, op: "write", via: "editor tool", text }];
    if (sub === "str_replace" && typeof o.old_str === "string" && typeof o.new_str === "string") {
      const [from, to] = [o.old_str, o.new_str];
      return [{ file, op: "update", via: "editor tool", update: (prev) => (prev.includes(from) ? prev.replace(from, to) : undefined) }];
    }
  }
  return [];
}

/** The single command a call runs (through `bash -lc` too), or undefined when it runs several. */
function singleCommand(step: Step): ShellCommand | undefined {
  const o = argsObject(step.tool?.args);
  const c = o?.command ?? o?.cmd;
  let cmds: ShellCommand[];
  if (Array.isArray(c)) cmds = c.length === 1 ? parseShell(String(c[0])) : [{ words: c.map(String), redirects: [], piped: false }];
  else if (typeof c === "string") cmds = parseShell(c);
  else return undefined;
  for (let depth = 0; cmds.length === 1 && depth < 3; depth++) {
    const w = cmds[0]!.words;
    if (!(isShell(w[0]) && w.length === 3 && /^-[a-z]*c[a-z]*$/.test(w[1]!))) break;
    cmds = parseShell(w[2]!);
  }
  return cmds.length === 1 ? cmds[0] : undefined;
}

/** A call that prints the whole file: `cat f`, `jq . f`, `python3 -m json.tool f`. */
function readsBack(step: Step, name: string): boolean {
  const cmd = singleCommand(step);
  if (!cmd || cmd.redirects.length || cmd.stdin !== undefined) return false;
  const [prog, ...rest] = cmd.words;
  const target = rest[rest.length - 1];
  if (!target || baseName(target) !== name) return false;
  const p = PROGRAM(prog);
  return (p === "cat" && rest.length === 1) || (p === "jq" && rest.length === 2 && rest[0] === ".") || (isPython(prog) && rest.length === 3 && rest[0] === "-m" && rest[1] === "json.tool");
}

// ---------------------------------------------------------------------------------------------------------------
// The run's deliverable
// ---------------------------------------------------------------------------------------------------------------

/** The file `name` (a base name) as the run's successful writes left it. */
export function reconstructDeliverable(steps: readonly Step[], name: string): ReconstructedDeliverable {
  const files: Files = new Map();
  const writes: DeliverableWrite[] = [];
  /**
   * The deliverable so far: nothing (never written, or deleted), known content, or written with content that could
   * not be rebuilt (`unknown` says why). `notes` are the leniencies behind the current content.
   */
  type State = { content?: string; unknown?: string; step?: number; via?: WriteVia; notes: string[] };
  let state: State = { notes: [] };

  for (const s of steps) {
    if (s.role !== "assistant" || s.kind !== "tool_call" || !s.tool) continue;
    let ops: FileOp[];
    try {
      ops = callOps(s, files);
    } catch {
      continue;
    }
    const r = s.tool.resultIndex !== undefined ? steps[s.tool.resultIndex] : undefined;
    const ok = r?.tool !== undefined && !isFailedOutcome(r.tool);
    if (ops.length === 0) {
      // a read-back of the file after a write whose content is unknown stands in for that content
      if (state.unknown !== undefined && ok && readsBack(s, name) && (r!.tool!.output ?? "").trim()) {
        const note = `the content is the read-back of ${name} at step ${s.index}: the write at step ${state.step} could not be rebuilt (${state.unknown})`;
        state = { content: r!.tool!.output, step: s.index, via: "read-back", notes: [...state.notes, note] };
      }
      continue;
    }
    for (const op of ops) {
      if (op.file === name) writes.push({ step: s.index, via: op.via, op: op.op, ok, ...(op.problem ? { problem: op.problem } : {}) });
      if (!ok) continue;
      // every successful write updates the run's files (for cp, mv, cat, python3 script.py)
      const mine = op.file === name;
      const known = mine ? state.unknown === undefined : true;
      const prev = mine ? state.content : files.get(op.file);
      let next: string | undefined;
      let problem = op.problem;
      if (op.op === "update") {
        next = known && prev !== undefined && op.update ? op.update(prev) : undefined;
        if (next === undefined) problem ??= prev === undefined ? "an update of content not written earlier in the trace" : "the update's context was not found";
      } else if (op.op === "append") next = known && op.text !== undefined ? (prev ?? "") + op.text : undefined;
      else if (op.op === "write") next = op.text;
      if (next !== undefined) files.set(op.file, next);
      else files.delete(op.file);
      if (!mine) continue;
      const notes = op.op === "write" || op.op === "delete" ? [] : state.notes;
      const withNote = op.note ? [...notes, `step ${s.index}: ${op.note}`] : notes;
      if (op.op === "delete") state = { notes: [] };
      else if (next === undefined) state = { unknown: problem ?? "content not rebuilt", step: s.index, via: op.via, notes: withNote };
      else state = { content: next, step: s.index, via: op.via, notes: withNote };
    }
  }
  const out: ReconstructedDeliverable = { name, writes, notes: state.notes };
  if (state.content !== undefined) Object.assign(out, { content: state.content, step: state.step, via: state.via });
  else if (state.unknown !== undefined) Object.assign(out, { step: state.step, via: state.via, problem: `the last successful write (step ${state.step}) could not be rebuilt: ${state.unknown}` });
  return out;
}
