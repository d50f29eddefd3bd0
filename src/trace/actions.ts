/**
 * One vocabulary for what agent actions are: which calls change the world, which check it, which results failed,
 * which results return the resulting state, and when two calls are the same call. The rule detectors (on recorded
 * steps) and the runtime guards (on live events) both classify through this module, so a diagnosis and a guard
 * decision never disagree about what an action was.
 *
 * Everything works on two small shapes that a canonical `Step.tool` and a guard's tool event both satisfy.
 */

/** A tool call: its name and its arguments (parsed JSON, or the raw string). */
export interface CallLike {
  name: string;
  args?: unknown;
}

/** A tool result: what it printed and whether the runtime flagged it. */
export interface ResultLike {
  output?: string;
  exitCode?: number;
  isError?: boolean;
}

// ---------------------------------------------------------------------------------------------------------------
// Argument equivalence
// ---------------------------------------------------------------------------------------------------------------

export interface ArgsEquivalenceOptions {
  /** Argument keys ignored at any depth, compared case-insensitively. */
  ignoreKeys?: readonly string[];
  /**
   * Trim string values and collapse runs of whitespace inside one-line ones (default true): `kubectl  get pods` =
   * `kubectl get pods`. Multi-line values (code, patches) keep their inner whitespace: indentation is meaning there.
   */
  collapseWhitespace?: boolean;
}

/** Keys that usually change on every call without changing what the call does. */
export const DEFAULT_IGNORED_KEYS: readonly string[] = ["timestamp", "requestId", "request_id", "nonce", "idempotencyKey", "idempotency_key", "traceId", "trace_id"];

/** Returns the arguments in canonical form: parsed from JSON strings, ignored keys dropped, keys sorted. */
export function normalizeArgs(args: unknown, opts: ArgsEquivalenceOptions = {}): unknown {
  const ignored = new Set((opts.ignoreKeys ?? DEFAULT_IGNORED_KEYS).map((k) => k.toLowerCase()));
  const collapse = opts.collapseWhitespace ?? true;
  const walk = (v: unknown, top: boolean): unknown => {
    if (typeof v === "string") {
      // Chat APIs send arguments as a JSON string; a string argument that itself is JSON is compared as data too.
      const t = v.trim();
      if (top || t.startsWith("{") || t.startsWith("[")) {
        try {
          const parsed: unknown = JSON.parse(t);
          if (parsed !== null && typeof parsed === "object") return walk(parsed, false);
        } catch {
          /* not JSON: compare as text */
        }
      }
      if (!collapse) return v;
      // one-line values (commands, ids) fold their whitespace; multi-line values (code, patches) keep indentation
      return t.includes("\n") ? t : t.replace(/\s+/g, " ");
    }
    if (Array.isArray(v)) return v.map((x) => walk(x, false));
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) {
        if (ignored.has(k.toLowerCase())) continue;
        const x = (v as Record<string, unknown>)[k];
        if (x === undefined) continue;
        out[k] = walk(x, false);
      }
      return out;
    }
    return v;
  };
  return walk(args, true);
}

/** A stable string for normalised arguments (objects are already key-sorted by normalizeArgs). */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v) ?? "undefined";
}

/** The identity of a call for repetition checks: tool name plus canonical arguments. */
export function callKey(name: string, args: unknown, opts: ArgsEquivalenceOptions = {}): string {
  return `${name}\u0000${canonicalJson(normalizeArgs(args ?? {}, opts))}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Names and command lines
// ---------------------------------------------------------------------------------------------------------------

/** The words of a tool name: `deleteAlert` → delete, alert; `kubectl_apply` → kubectl, apply. */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** The tool's own name without an MCP server prefix (`mcp__offline_incident_analysis__log_analysis` → `log_analysis`). */
export function baseToolName(name: string): string {
  const m = /^mcp__.+?__(.+)$/.exec(name);
  return m ? m[1]! : name;
}

/** The arguments as an object when they are one, or a JSON string of one (chat APIs send arguments as text). */
export function argsObject(args: unknown): Record<string, unknown> | undefined {
  let v = args;
  if (typeof v === "string" && v.trim().startsWith("{")) {
    try {
      v = JSON.parse(v);
    } catch {
      return undefined;
    }
  }
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** All string, number and boolean leaves of the arguments, joined by spaces. */
export function argsText(args: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") out.push(String(v));
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(normalizeArgs(args ?? {}, { ignoreKeys: [], collapseWhitespace: false }));
  return out.join(" ");
}

/** Generic shell and code-execution tools, whose effect depends on the command they run (compared case-insensitively). */
export const SHELL_TOOLS: readonly string[] = [
  "shell", "bash", "sh", "exec_command", "run_command", "execute_bash", "execute_command", "run_shell_command", "local_shell",
  "terminal", "cmd", "container.exec", "run_ipython", "execute_ipython_cell", "ipython", "python",
];

const SHELL_TOOL_SET = new Set(SHELL_TOOLS.map((t) => t.toLowerCase()));
export const isShellTool = (name: string): boolean => SHELL_TOOL_SET.has(name.toLowerCase());

/**
 * The command line a call runs, as text: a string argument, or the `command`/`cmd`/`code`/`script` field (an argv
 * array is joined); for a shell tool with another argument shape, all its argument text. Undefined otherwise.
 */
export function commandText(call: CallLike): string | undefined {
  const o = argsObject(call.args);
  if (o) {
    const c = o.command ?? o.cmd ?? o.code ?? o.script;
    if (Array.isArray(c)) return c.map(String).join(" ");
    if (typeof c === "string") return c;
  } else if (typeof call.args === "string") return call.args;
  if (isShellTool(call.name) && call.args !== undefined) return argsText(call.args);
  return undefined;
}

/** The sub-command of an editor tool (`str_replace_editor` `view`/`str_replace`/`create`), when it has one. */
function editorCommand(call: CallLike): string | undefined {
  const c = argsObject(call.args)?.command;
  return typeof c === "string" ? c : undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Changing the world
// ---------------------------------------------------------------------------------------------------------------

/** Tool-name words that mark a tool as changing the world (tau-bench `cancel_reservation`, `deleteAlert`, `apply_patch`). */
export const MUTATING_VERBS: readonly string[] = [
  "write", "edit", "patch", "apply", "create", "add", "update", "upsert", "delete", "remove", "rm", "put", "post", "set",
  "restart", "scale", "deploy", "rollback", "rollout", "kill", "insert", "drop", "move", "rename", "upload", "send",
  "submit", "cancel", "book", "modify", "change", "replace", "exchange", "return", "transfer", "pay", "purchase",
  "commit", "push", "merge", "install", "uninstall", "stop", "reset", "reboot", "toggle", "enable", "disable", "grant",
  "revoke", "disconnect", "suspend", "resume", "refuel",
];

/** First words of tools that read or test state (`get_order_details`, `can_send_mms`, `check_network_status`). */
export const READING_VERBS: readonly string[] = [
  "get", "find", "list", "search", "check", "read", "view", "describe", "query", "fetch", "lookup", "show", "inspect",
  "verify", "validate", "test", "can", "is", "has", "grep", "glob", "cat", "ls", "open",
];

/** Name words of tools that test or report health (`run_speed_test`, `run_tests`, `health_check`). */
const CHECKING_WORDS = new Set(["test", "tests", "check", "checks", "verify", "validate", "validation", "health", "healthcheck", "status", "diagnose", "diagnostics"]);

/** Last words of tools that analyse rather than act (`k8s_spec_change_analysis`): the name's other words are its object. */
const ANALYSIS_NOUNS = new Set(["analysis", "analyze", "analyser", "analyzer", "summary", "report", "anomalies", "tree", "diff", "preview", "explain", "history"]);

/** Tools that only update the agent's own plan or notes: their names say "update"/"write" but nothing changes. */
export const BOOKKEEPING_TOOLS: readonly string[] = ["update_plan", "TodoWrite", "todo_write", "write_todos", "update_todos", "set_plan", "think"];
const BOOKKEEPING_SET = new Set(BOOKKEEPING_TOOLS.map((t) => t.toLowerCase()));

/** File-editing tools (SWE-agent, OpenHands, Codex, Claude Code): they write unless told to only look. */
export const FILE_EDIT_TOOLS: readonly string[] = [
  "apply_patch", "write", "write_file", "edit", "multiedit", "str_replace", "str_replace_editor", "str_replace_based_edit_tool",
  "create", "create_file", "insert", "file_change", "edit_file", "replace", "patch", "notebookedit",
];
const FILE_EDIT_SET = new Set(FILE_EDIT_TOOLS.map((t) => t.toLowerCase()));
/** Editor sub-commands that only read (`str_replace_editor` with `"command": "view"`). */
const READ_ONLY_EDITOR_COMMAND = /^(?:view|read|show|cat|list)$/i;

/** Tools whose call is the agent's final answer or submission (SWE-agent `submit`, smolagents `final_answer`). */
export const COMPLETION_TOOL_PATTERN = /^(?:submit|finish|final_answer|task_complete|attempt_completion)$/i;
/** The sentinel mini-SWE-agent's shell submission echoes (`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff`). */
const SUBMIT_SENTINEL = /\b(?:COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT|MINI_SWE_AGENT_FINAL_OUTPUT)\b/;
/** A call that is the agent's final answer or submission: a final-answer tool, or a shell command echoing a submit sentinel. */
export const isCompletionCall = (call: CallLike): boolean =>
  COMPLETION_TOOL_PATTERN.test(call.name) || (isShellTool(call.name) && SUBMIT_SENTINEL.test(commandText(call) ?? ""));

/**
 * Shell commands that change state: kubectl/helm writes, file writes and redirects (not to /dev/null, not `2>&1`),
 * in-place edits, git writes, package installs, container and service control, and the IPython file-editing helpers.
 */
export const MUTATING_COMMAND_PATTERN = String.raw`\b(?:kubectl|oc)\s+(?:apply|create|delete|patch|edit|replace|scale|set|label|annotate|cordon|drain|taint)\b|\bkubectl\s+rollout\s+(?:restart|undo)\b|\bhelm\s+(?:install|upgrade|uninstall|rollback)\b|(?:^|[\s;&|(])(?:rm|mv|cp|chmod|chown|mkdir|touch|tee|dd)\s|\bsed\s+-i|\bapply_patch\b|\bgit\s+(?:commit|push|reset|checkout|merge|rebase|apply)\b|(?<![0-9&>])>{1,2}\s*(?!&|/dev/null)[\w./~-]|\b(?:pip|npm|apt|apt-get)\s+install\b|\bdocker\s+(?:run|rm|stop|kill)\b|\bsystemctl\s+(?:restart|stop|start)\b|\b(?:edit_file_by_replace|insert_content_at_line|append_file|create_file)\s*\(`;
const MUTATING_COMMAND = new RegExp(MUTATING_COMMAND_PATTERN);

/** IPython cells: Python that writes files or calls the OpenHands editing helpers; `!`/`%` lines are shell commands. */
const IPYTHON_TOOLS = new Set(["run_ipython", "execute_ipython_cell", "ipython"]);
const MUTATING_PYTHON = /\b(?:edit_file_by_replace|insert_content_at_line|append_file|create_file)\s*\(|\bopen\s*\([^)]*,\s*(?:mode\s*=\s*)?["'][wax]\+?b?["']|\.write_(?:text|bytes)\s*\(|\b(?:os\.(?:remove|unlink|rename|makedirs|mkdir)|shutil\.\w+)\s*\(/;

function mutatingCode(name: string, command: string): boolean {
  if (!IPYTHON_TOOLS.has(name)) return MUTATING_COMMAND.test(command);
  // Python's `a > b` is a comparison, not a redirect: only magic and shell lines are read as shell
  const shellLines = command.split("\n").filter((l) => /^\s*[!%]/.test(l)).join("\n");
  return MUTATING_PYTHON.test(command) || (shellLines !== "" && MUTATING_COMMAND.test(shellLines));
}

/** Shell commands that check something: test runners, builds, validators, status queries, reading a file back. */
export const VERIFYING_COMMAND_PATTERN = String.raw`\b(?:pytest|py\.test|unittest|tox|jest|vitest|mocha)\b|\b(?:npm|yarn|pnpm)\s+(?:run\s+)?test\b|\b(?:go|cargo|make|mvn|gradle)\s+test\b|\bpython[0-9.]*\s+[\w./-]*(?:test|repro|reproduce|check|verify)\w*\.py\b|\bpython[0-9.]*\s+-c\b|\bpython[0-9.]*\s+(?!setup\.py)[\w./-]+\.py\b|\bjq\b|\bjson\.tool\b|\bjson\.load|\bkubectl\s+(?:get|describe|logs|rollout\s+status)\b|\bcurl\b|\bdiff\b|\bgit\s+(?:diff|status)\b|(?:^|[\s;&|(])(?:cat|head|tail|grep|ls|wc|stat|test)(?=\s|$)|\b(?:validate|verify|check)\w*`;
const VERIFYING_COMMAND = new RegExp(VERIFYING_COMMAND_PATTERN, "i");

/**
 * True when a call changes the world rather than reading it. Rules, in order:
 * 1. plan and note bookkeeping (`update_plan`, `TodoWrite`, `think`) and the final answer (`submit`) never do;
 * 2. file-editing tools do, unless their sub-command only reads (`"command": "view"`);
 * 3. shell and code tools do when their command matches {@link MUTATING_COMMAND_PATTERN};
 * 4. a named tool does when its first word is a mutating verb (`cancel_reservation`); it does not when its first
 *    word reads (`get_…`, `can_send_mms`) or its last word names an analysis (`k8s_spec_change_analysis`); otherwise
 *    any mutating word decides (`kubectl_apply`); handoffs (`transfer_to_…`) are not changes;
 * 5. any other call with a command argument is judged by that command.
 */
export function isMutatingCall(call: CallLike): boolean {
  const name = call.name.toLowerCase();
  if (BOOKKEEPING_SET.has(name) || isCompletionCall(call)) return false;
  if (FILE_EDIT_SET.has(name)) {
    const sub = editorCommand(call);
    return !(sub !== undefined && READ_ONLY_EDITOR_COMMAND.test(sub));
  }
  const command = commandText(call);
  if (isShellTool(name)) return command !== undefined && mutatingCode(name, command);
  const words = nameWords(baseToolName(call.name));
  const first = words[0] ?? "";
  if (first === "transfer" && words[1] === "to") return false; // a handoff, not a change
  if (MUTATING_VERBS.includes(first)) return true;
  if (!READING_VERBS.includes(first) && !ANALYSIS_NOUNS.has(words.at(-1) ?? "") && words.some((w) => MUTATING_VERBS.includes(w))) return true;
  return command !== undefined && argsObject(call.args) !== undefined && MUTATING_COMMAND.test(command);
}

/**
 * True when a call checks something: a tool named by a reading verb (`get_alerts`, `check_status_bar`, `Read`), an
 * editor asked to view, or a command that tests, validates, queries status or reads back (pytest, `jq .`, `kubectl get`,
 * `cat`). A call can both check and change (`cat > file`); callers that want a pure check test both.
 */
export function isVerifyingCall(call: CallLike): boolean {
  const name = call.name.toLowerCase();
  if (BOOKKEEPING_SET.has(name)) return false;
  const words = nameWords(baseToolName(call.name));
  if (READING_VERBS.includes(words[0] ?? "")) return true;
  if (!MUTATING_VERBS.includes(words[0] ?? "") && words.some((w) => CHECKING_WORDS.has(w))) return true;
  if (FILE_EDIT_SET.has(name)) {
    const sub = editorCommand(call);
    return sub !== undefined && READ_ONLY_EDITOR_COMMAND.test(sub);
  }
  // running code is exercising it, as `python -c` is for a shell
  if (IPYTHON_TOOLS.has(name) && (commandText(call) ?? "").trim()) return true;
  const command = commandText(call) ?? "";
  return VERIFYING_COMMAND.test(`${command} ${call.name}`);
}

/**
 * The file a change writes, by base name, when its arguments name one: a `path`/`file_path`/`filename`/`file`
 * argument, a patch header (`*** Add File: agent_output.json`), an in-place `sed -i` or a redirect (`> notes.txt`).
 */
export function changedFile(call: CallLike): string | undefined {
  const o = argsObject(call.args);
  const p = o?.path ?? o?.file_path ?? o?.filename ?? o?.file;
  if (typeof p === "string" && p) return p.split("/").pop();
  const text = typeof call.args === "string" ? call.args : argsText(call.args);
  const m = /\*\*\* (?:Add|Update) File: (\S+)/.exec(text) ?? /\b(?:sed -i[^|;]*?|>\s*)([\w./-]+\.\w{1,5})\b/.exec(text);
  return m?.[1]?.split("/").pop();
}

/** Prose files (notes, plans, docs): an edit the editor confirmed has nothing further to check. */
export const isProseFile = (file: string | undefined): boolean => file !== undefined && /\.(?:md|markdown|txt|rst)$/i.test(file);

/** Removing files (`rm reproduce.py` before submitting) is cleanup, not the change a run must verify. */
export const isCleanupCall = (call: CallLike): boolean => /^\s*rm\s/.test(commandText(call) ?? "");

// ---------------------------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------------------------

/** Output that opens with an error, as tools without an error flag report failure (tau-bench `Error: …`). */
const ERROR_OPENING = /^\s*(?:error|exception|traceback \(most recent call last\)|failed|fatal)\b/i;

/**
 * A result that reports failure: the error flag, else a non-zero exit code, else output that opens with an error.
 * An explicit exit code of 0 wins over the output's wording (a successful `grep` may print "error: …").
 */
export function isFailedOutcome(r: ResultLike | undefined): boolean {
  if (!r) return false;
  if (r.isError === true) return true;
  if (r.exitCode !== undefined) return r.exitCode !== 0;
  return ERROR_OPENING.test(r.output ?? "");
}

/**
 * A result that returns the resulting state: a JSON object with at least three fields, as domain APIs such as
 * tau-bench's `update_reservation_flights` answer with the updated reservation. For a change, that answer is its own
 * check: the agent can report what the system said rather than what it hoped.
 */
export function returnsState(r: ResultLike | undefined): boolean {
  const out = (r?.output ?? "").trim();
  if (!out.startsWith("{")) return false;
  try {
    const v = JSON.parse(out) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length >= 3;
  } catch {
    return false;
  }
}

/**
 * What a failure said, with stand-alone numbers and long hex ids masked: two failures with the same signature are the
 * same failure ("EOF while parsing a string at line 2 column 1502" = "… column 1254"). Numbers inside identifiers stay
 * ("flight HAT030" ≠ "flight HAT223"). Empty for a success.
 */
export function failureSignature(r: ResultLike): string {
  if (!isFailedOutcome(r)) return "";
  const text = (r.output ?? "").replace(/\s+/g, " ").trim().slice(0, 300);
  return `${r.exitCode ?? ""}|${text.replace(/\b[0-9a-f]{12,}\b/gi, "#").replace(/\b\d+\b/g, "#")}`;
}
