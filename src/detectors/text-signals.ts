import type { Step, Trace } from "../trace/index.js";
import { instructionSteps } from "./contract.js";

/**
 * Signals read from what agents write, shared by several detectors: environment output the model wrote itself
 * (a hallucinated observation), and money amounts (to compare a report with the result it reports on).
 */

/**
 * Environment output inside the model's own turn: a shell prompt, the SWE-agent status lines, a git or pytest
 * summary. A model that writes these has imagined the observation instead of waiting for it.
 */
const OBSERVATION_RE = /^\(Open file: [^)\n]*\)\s*$|^\(Current directory: [^)\n]*\)\s*$|^bash-\$\s*$|^HEAD is now at [0-9a-f]{7}|^=+ [^=\n]*\b\d+ (?:passed|failed)\b[^=\n]* =+$|^Ran \d+ tests? in [\d.]+s$/m;
const TEST_PASS_RE = /^=+ [^=\n]*\b\d+ passed\b[^=\n]* =+$|^OK(?: \(.*\))?$|\b\d+ passed(?:,| in )/m;

/** The step is the model's own turn and contains environment output it could not have seen yet. */
export function imaginedObservation(s: Step): RegExpExecArray | null {
  if (s.role !== "assistant" || (s.kind !== "message" && s.kind !== "reasoning")) return null;
  return OBSERVATION_RE.exec(s.text ?? "");
}

/** A passing test summary written inside the model's own turn. */
export function imaginedTestPass(s: Step): RegExpExecArray | null {
  if (!imaginedObservation(s)) return null;
  return TEST_PASS_RE.exec(s.text ?? "");
}

const DOLLARS_RE = /\$\s?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?/g;
const MONEY_KEY_RE = /"(?:amount|price|total|total_price|refund|refund_amount|paid|cost|balance|fee|charge)"\s*:\s*(-?\d+(?:\.\d+)?)/gi;
/** Fields that say what was charged or refunded (not a line item's price). */
const TRANSACTION_KEY_RE = /"(?:amount|total|total_price|refund|refund_amount|paid|charge|(?:exchange_)?price_difference)"\s*:\s*(-?\d+(?:\.\d+)?)/gi;

/** Dollar amounts a text states ("$1,302.00" → 1302). */
export function dollarAmounts(text: string): number[] {
  return [...text.matchAll(DOLLARS_RE)].map((m) => Number(`${m[1]!.replace(/,/g, "")}.${m[2] ?? "0"}`));
}

/** Money values in a JSON result (amount, price, total, refund… fields), with every number as a fallback. */
export function resultAmounts(text: string): { money: number[]; transactions: number[]; all: number[] } {
  const abs = (m: RegExpMatchArray) => Math.abs(Number(m[1]));
  const money = [...text.matchAll(MONEY_KEY_RE)].map(abs);
  const transactions = [...text.matchAll(TRANSACTION_KEY_RE)].map(abs);
  const all = [...text.matchAll(/\d+(?:\.\d+)?/g)].map((m) => Number(m[0]));
  return { money, transactions, all };
}

/**
 * Dollar amounts a report states about money: `moved` in sentences that say money moved (refunded, charged, paid,
 * deducted), `totals` in sentences that only state a total, cost or price.
 */
export function transactionAmounts(text: string): { moved: number[]; totals: number[] } {
  const sentences = text.split(/(?<=[.!?])\s+|\n+/);
  const MOVED = /\b(?:refund\w*|charg\w*|paid|payment|processed|deducted|credited|debited)\b/i;
  // money that "will be" refunded has not moved yet: the report states an amount due, like a total
  const moving = (s: string) => MOVED.test(s) && !/\bwill be\b/i.test(s);
  return {
    moved: sentences.filter(moving).flatMap((s) => dollarAmounts(s)),
    totals: sentences.filter((s) => !moving(s) && /\b(?:total|cost|price|fare|refund\w*)\b/i.test(s)).flatMap((s) => dollarAmounts(s)),
  };
}

/**
 * Amounts a report can honestly state from these values: each value, sums of up to 3 (a total), and differences of
 * two (a price difference); in cents.
 */
export function reachable(values: number[]): Set<number> {
  const out = new Set<number>();
  const v = values.slice(0, 24);
  const r = (x: number) => Math.round(x * 100);
  for (let i = 0; i < v.length; i++) {
    out.add(r(v[i]!));
    for (let j = i + 1; j < v.length; j++) {
      out.add(r(v[i]! + v[j]!));
      out.add(Math.abs(r(v[i]! - v[j]!)));
      for (let k = j + 1; k < v.length; k++) out.add(r(v[i]! + v[j]! + v[k]!));
    }
  }
  return out;
}

const LOOKUP_RE = /\b(?:let'?s|let us|I will|I'll|we will|we'll|we need to|first,? we(?:'ll| will| need to)?)\s+(?:start by\s+|begin by\s+|first\s+)?(?:look(?:ing)? up|retriev\w*|search\w*(?: for)?|find(?:ing)?|gather\w*|collect\w*|extract\w*|fetch\w*|obtain\w*|access\w*|review\w*|analy[sz]\w*|check\w*|refer to|consult\w*)\b/i;
export const PRESENT_RE = /\b(?:here (?:is|are) the (?:(?:required|requested|relevant|retrieved|exact|needed) )?(?:data|results?|information|figures|details|notes|captions?)|(?:the|this) (?:data|results?|search) (?:shows?|indicates?|reveals?)|(?:I|we) (?:have )?found (?:that|the)|(?:based on|from) (?:the|my) (?:search|lookup|review|analysis) (?:results?)?,|the (?:retrieved|extracted|collected) (?:data|information)|(?:the )?(?:following (?:are|is) (?:the )?)?[\w ]{0,40}?(?:figures|data|numbers|values|information) (?:retrieved|obtained|extracted|fetched|taken) from)\b/i;

/**
 * An agent's turn that announces a lookup and presents its results without any tool having run (the tools of group
 * chats run in a separate executor turn, so results in the same turn were not looked up). The match of PRESENT_RE.
 */
export function presentsUnretrieved(s: Step): RegExpExecArray | null {
  if (s.role !== "assistant" || s.kind !== "message" || !s.text) return null;
  const intent = LOOKUP_RE.exec(s.text);
  if (!intent) return null;
  const rest = s.text.slice(intent.index + intent[0].length);
  const shown = PRESENT_RE.exec(rest);
  // code in between is a lookup that the executor will run: its results come in a later turn; words inside a
  // numbered plan ("Step 4: based on the search results, …") describe work to do, not results
  if (!shown || /```/.test(rest.slice(0, shown.index))) return null;
  const items = [...rest.matchAll(/^\s*(?:Step \d+|\d+\.)\s/gm)].map((m) => m.index);
  const inPlan = items.some((i) => i < shown.index && shown.index - i < 400) && items.some((i) => i > shown.index && i - shown.index < 200);
  if (inPlan) return null;
  return shown;
}

/**
 * What an agent says in its own words: its text without the pages, screenshots, OCR and search results a browsing
 * agent pastes (everything from "Here is a screenshot" / "The viewport shows" / an "Address:" header on), without code
 * blocks, and nothing at all for a step that states the task or its plan (instructions are not claims).
 */
const DUMP_RE = /(?:Here is a screenshot of|The viewport shows|Viewport position:|^Address: |^Title: |<Image>|Automatic OCR of the page|The (?:web )?search (?:for|results?)[^\n]{0,80}\n|A Google search for|A Bing search for|You previously visited this page)/m;
export function ownWords(trace: Trace, s: Step, instructions: ReadonlySet<number> = new Set(instructionSteps(trace).map((x) => x.index))): string {
  if (s.role !== "assistant" || instructions.has(s.index)) return "";
  const text = s.text ?? "";
  const cut = DUMP_RE.exec(text);
  return (cut ? text.slice(0, cut.index) : text).replace(/```[\s\S]*?(?:```|$)/g, " ");
}

/** A text that states what it cannot determine ("Unable to determine", "unknown") rather than giving an answer. */
export const NO_ANSWER_RE = /\b(?:unable to (?:determine|find|identify)|cannot (?:be )?determine[d]?|could not (?:be )?determine[d]?|unknown|not (?:enough|sufficient) information|N\/A)\b/i;
