import { normalizeWhitespace } from "../trace/index.js";
import { ELISION_RE, type RenderedStep } from "./render.js";

/**
 * Checks the judge's evidence: every quote must occur verbatim (after whitespace normalisation) in one of the steps it
 * cites. A claim keeps its verified quotes; a claim with none is rejected, and every rejection is recorded with its
 * reason so the result can report how often the judge cited evidence that is not in the trace.
 */

/** Quotes shorter than this (after normalisation) prove nothing and are rejected. */
export const MIN_QUOTE_CHARS = 4;

export interface Claim {
  mode: string;
  steps: number[];
  evidence: string[];
  agent?: string | null;
  confidence: number;
  rationale?: string;
}

export interface VerifiedQuote {
  quote: string;
  /** The cited step the quote was found in. */
  step: number;
}

export interface RejectedQuote {
  quote: string;
  reason: string;
}

export interface ClaimCheck {
  claim: Claim;
  verified: VerifiedQuote[];
  rejected: RejectedQuote[];
  /** Cited step indices that do not exist in the trace. */
  unknownSteps: number[];
  /** True when at least one quote was found in a cited step. */
  accepted: boolean;
  /** Why the whole claim was rejected. */
  reason?: string;
}

/** The normalised content of each step, as shown to the judge (redacted, clipped), for quote look-ups. */
export class EvidenceIndex {
  private readonly content = new Map<number, string>();

  constructor(steps: RenderedStep[]) {
    for (const s of steps) this.content.set(s.index, normalizeWhitespace(s.body));
  }

  has(step: number): boolean {
    return this.content.has(step);
  }

  /** Whether every piece occurs in the step, in order. */
  contains(step: number, pieces: string[]): boolean {
    const text = this.content.get(step);
    if (text === undefined) return false;
    let from = 0;
    for (const p of pieces) {
      const at = text.indexOf(p, from);
      if (at < 0) return false;
      from = at + p.length;
    }
    return true;
  }

  /** Steps (any, cited or not) whose content holds the pieces; used only to explain a rejection. */
  locate(pieces: string[], limit = 3): number[] {
    const found: number[] = [];
    for (const step of this.content.keys()) {
      if (this.contains(step, pieces)) found.push(step);
      if (found.length >= limit) break;
    }
    return found;
  }
}

/**
 * Splits a quote into the pieces that must appear in order: an ellipsis ("..." or "…") marks an omission the judge
 * made inside its own quote. Surrounding quotation marks are not part of the quote.
 */
export function quotePieces(quote: string): string[] {
  const q = normalizeWhitespace(quote).replace(/^["'“”‘’]+|["'“”‘’]+$/g, "");
  return q
    .split(/\s*(?:\.\.\.|…)\s*/)
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
}

export function verifyClaim(claim: Claim, index: EvidenceIndex): ClaimCheck {
  const unknownSteps = claim.steps.filter((s) => !index.has(s));
  const cited = [...new Set(claim.steps.filter((s) => index.has(s)))];
  const verified: VerifiedQuote[] = [];
  const rejected: RejectedQuote[] = [];
  for (const quote of claim.evidence) {
    const pieces = quotePieces(quote);
    const chars = pieces.join(" ").length;
    if (chars < MIN_QUOTE_CHARS) {
      rejected.push({ quote, reason: `quote too short (${chars} chars; at least ${MIN_QUOTE_CHARS})` });
      continue;
    }
    if (ELISION_RE.test(quote)) {
      rejected.push({ quote, reason: "quote spans text that was elided from the prompt" });
      continue;
    }
    const step = cited.find((s) => index.contains(s, pieces));
    if (step !== undefined) {
      verified.push({ quote: pieces.join(" … "), step });
      continue;
    }
    const elsewhere = index.locate(pieces);
    rejected.push({
      quote,
      reason: elsewhere.length
        ? `quote is not in the cited steps [${cited.join(", ")}] (it occurs in step ${elsewhere.join(", ")})`
        : `quote does not occur in the trace`,
    });
  }
  const check: ClaimCheck = { claim, verified, rejected, unknownSteps, accepted: verified.length > 0 };
  if (!check.accepted)
    check.reason =
      claim.evidence.length === 0
        ? "no evidence quoted"
        : cited.length === 0
          ? `no cited step exists in the trace (cited: [${claim.steps.join(", ")}])`
          : "no quote was found in the cited steps";
  return check;
}
