import YAML from "yaml";
import type { StepDraft } from "../../trace/index.js";
import { compact } from "../../trace/index.js";
import { arr, asText, bool, isObj, str } from "../common/index.js";
import { parsePythonLiteral } from "../io/lenient.js";
import { dedent, joinBody, splitLines, type Segmented } from "./types.js";

/**
 * AG2 (AutoGen) traces in MAST-Data: `{instance_id, problem_statement[], other_data{correct, answer, given…},
 * trajectory:[{content:[lines], role, name}], note?}` as JSON, as a Python repr, as YAML, or flattened to YAML-like
 * `content:` / `role:` / `name:` triplets. The agent is `name`: AG2's `role` is relative to the speaker (the proxy's
 * messages carry role "assistant"), so the canonical role comes from the agent's kind instead — proxies, users and
 * executors speak as `user`, every other agent as `assistant`.
 */

const PROXY_NAME = /proxy|user|human|admin|executor/i;

const contentOf = (v: unknown): string => (Array.isArray(v) ? v.map((x) => asText(x) ?? "").join("\n") : asText(v) ?? "");

function structured(text: string): Record<string, unknown> | undefined {
  const t = text.trim();
  if (t.startsWith("{")) {
    try {
      const v = JSON.parse(t);
      if (isObj(v)) return v;
    } catch {
      const v = parsePythonLiteral(t);
      if (isObj(v)) return v;
    }
    return undefined;
  }
  if (!/^\s*(?:-\s*)?trajectory:/m.test(t)) return undefined;
  try {
    const v = YAML.parse(t);
    if (isObj(v)) return v;
  } catch {
    /* not strict YAML: the triplet scanner below handles it */
  }
  return undefined;
}

/** `content:` lines up to `role: X` and `name: Y`, repeated. Returns [] when the text has no such triplets. */
function scanTriplets(text: string): Array<{ content: string; role: string; name: string; line: number }> {
  const lines = splitLines(text);
  const out: Array<{ content: string; role: string; name: string; line: number }> = [];
  let i = lines.findIndex((l) => /^\s*trajectory:\s*$/.test(l));
  i = i < 0 ? 0 : i + 1;
  while (i < lines.length) {
    const c = /^(\s*)(?:-\s+)?content:\s?(.*)$/.exec(lines[i]!);
    if (!c) {
      i++;
      continue;
    }
    const start = i;
    const body: string[] = c[2]!.trim() ? [c[2]!] : [];
    let role: string | undefined;
    let name: string | undefined;
    i++;
    while (i < lines.length) {
      const l = lines[i]!;
      const r = /^\s*role:\s*(\S.*?)\s*$/.exec(l);
      const n = /^\s*name:\s*(\S.*?)\s*$/.exec(l);
      if (r && role === undefined) role = r[1];
      else if (n && name === undefined) name = n[1];
      else if (role !== undefined || name !== undefined) break;
      else if (/^(\s*)(?:-\s+)?content:/.test(l)) break;
      else body.push(l);
      i++;
      if (role !== undefined && name !== undefined) break;
    }
    let lines2 = dedent(body);
    // YAML list items of the content array
    if (lines2.filter((l) => l.trim()).every((l) => /^- /.test(l))) lines2 = lines2.map((l) => l.replace(/^- ?/, ""));
    out.push({ content: joinBody(lines2).replace(/^(['"])([\s\S]*)\1$/, "$2"), role: role ?? "", name: name ?? role ?? "unknown", line: start + 1 });
  }
  return out;
}

function stepFor(name: string, text: string, ref: StepDraft["ref"]): StepDraft {
  return compact({ agent: name, role: PROXY_NAME.test(name) ? "user" : "assistant", kind: "message", text, ref, tags: text.trim() === "" ? ["empty"] : undefined });
}

export function looksLikeAG2(text: string): boolean {
  const head = text.slice(0, 64 * 1024);
  return /["']?trajectory["']?\s*:/.test(head) && /["']?name["']?\s*:/.test(head) && /["']?content["']?\s*:/.test(head);
}

export function segmentAG2(text: string): Segmented | undefined {
  if (!looksLikeAG2(text)) return undefined;
  const doc = structured(text);
  const items = doc ? arr(doc.trajectory) : [];
  if (doc && items.length > 0 && items.every(isObj)) {
    const steps = items.map((m, i) => {
      const o = m as Record<string, unknown>;
      return stepFor(str(o.name) ?? str(o.role) ?? "unknown", contentOf(o.content), { pointer: `/trajectory/${i}` });
    });
    const other = isObj(doc.other_data) ? doc.other_data : undefined;
    const correct = other ? bool(other.correct) : undefined;
    const problem = contentOf(doc.problem_statement);
    return {
      steps,
      segmentation: "framework",
      splitter: "ag2",
      task: compact({ id: str(doc.instance_id), text: problem || undefined }),
      outcome: correct !== undefined ? { success: correct, metric: "other_data.correct", raw: other } : undefined,
      metadata: compact({ ag2OtherData: other, ag2Note: doc.note }),
    };
  }
  const triplets = scanTriplets(text);
  if (triplets.length === 0) return undefined;
  const problem = /problem_statement:\s*\n?([\s\S]*?)\n\s*(?:other_data|trajectory|instance_id):/.exec(text)?.[1];
  return {
    steps: triplets.map((t) => stepFor(t.name, t.content, { line: t.line })),
    segmentation: "framework",
    splitter: "ag2",
    task: problem ? { text: joinBody(dedent(splitLines(problem))).replace(/^- /, "") } : undefined,
    metadata: { ag2Layout: "yaml-like" },
  };
}
