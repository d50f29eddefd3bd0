/**
 * A deliberately simple completion-claim detector, used by the adapters and by replay to decide whether an assistant
 * text claims the work is done. Rules, in order:
 * 1. The text is split into sentences (on `.`, `!`, `?`, `;` and line breaks).
 * 2. A sentence claims success when one of {@link CLAIM_PATTERNS} matches it ("root cause identified", "task is
 *    complete", "I have fixed…", "I … found that …", "Done.", "verified", "tests pass", "agent_output.json written"…) and no negation
 *    ({@link NEGATION_PATTERN}: "not", "no", "could not", "failed"…) occurs inside that match or in the
 *    {@link NEGATION_REACH} characters before it ("not verified", "root cause has not been identified"), so
 *    "Verified: no alert is firing" still claims.
 * 3. The text claims success when any sentence does.
 * It is a heuristic over wording; the guards treat *every* attempt to end a run as a claim unless told otherwise, so a
 * missed phrase does not let an unverified completion through.
 */

export const CLAIM_PATTERNS: readonly RegExp[] = [
  /\broot[- ]?cause\b[^.!?\n]{0,30}\b(?:identified|found|determined|confirmed|located|pinpointed)\b/i,
  /\b(?:identified|found|determined|confirmed)\b[^.!?\n]{0,20}\broot[- ]?cause\b/i,
  /\bthe root[- ]?cause (?:is|was)\b/i,
  /\b(?:i|we)(?:'ve| have)?\s+(?:\w+\s+){0,6}?(?:found|determined|concluded|established)\s+that\b/i,
  /\b(?:task|work|job|investigation|diagnosis|analysis|fix|remediation|implementation|everything|incident|issue|problem)\s+(?:is|has been|was|are)?\s*(?:now\s+)?(?:complete|completed|done|finished|resolved|fixed|mitigated)\b/i,
  /\b(?:i|we)(?:'ve| have)\s+(?:now\s+)?(?:successfully\s+)?(?:completed|finished|fixed|resolved|verified|confirmed|identified|implemented|written|created|restored|mitigated)\b/i,
  /(?:^|[\n.!]\s*)(?:all\s+)?done\b|\b(?:i'm|i am|we're|we are|it's|it is|that's|that is)\s+(?:all\s+)?done\b/i,
  /\bverified\b/i,
  /\b(?:successfully|resolved|fixed)\b/i,
  /\b(?:tests?|checks?|build|health ?checks?)\s+(?:now\s+|all\s+)?(?:pass|passes|passed|passing|succeed(?:s|ed)?|green|ok)\b/i,
  /\bagent_output\.json\b[^.!?\n]{0,40}\b(?:written|created|saved|updated|complete)\b/i,
];

export const NEGATION_PATTERN =
  /\b(?:not|never|no|unable|cannot|can't|couldn't|could not|didn't|did not|haven't|have not|hasn't|has not|isn't|is not|wasn't|was not|failed|yet to|still need|unresolved|unverified)\b/i;

/** How far before a claim phrase a negation still negates it (about three words). */
export const NEGATION_REACH = 16;

export interface ClaimDetection {
  claimsSuccess: boolean;
  /** The sentence that made the claim, when there is one. */
  sentence?: string;
}

/** Global copies of the claim patterns, built once (matchAll needs the `g` flag and clones the regex itself). */
const GLOBAL_CLAIM_PATTERNS = CLAIM_PATTERNS.map((re) => new RegExp(re.source, `${re.flags}g`));

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?;])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

export function detectCompletionClaim(text: string): ClaimDetection {
  for (const s of sentences(text))
    for (const re of GLOBAL_CLAIM_PATTERNS)
      for (const m of s.matchAll(re)) {
        const scope = s.slice(Math.max(0, m.index - NEGATION_REACH), m.index + m[0].length);
        if (!NEGATION_PATTERN.test(scope)) return { claimsSuccess: true, sentence: s };
      }
  return { claimsSuccess: false };
}

const TRAILING_MARKUP = /[\s*_`"'’)\]]+$/u;

/** True when the text ends by asking something: the turn hands control to the user rather than ending the run. */
export function endsWithQuestion(text: string): boolean {
  // The last line with something left once trailing spaces, markup and closing quotes are stripped; read from the end,
  // since the guards ask this of every assistant text and long ones have many lines.
  let end = text.length;
  while (end > 0) {
    const start = text.lastIndexOf("\n", end - 1) + 1;
    const line = text.slice(start, end).replace(TRAILING_MARKUP, "");
    if (line) return line.endsWith("?");
    end = start - 1;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------------------
// The rest of the shared vocabulary: what detectors and guards both read in an agent's words.

/** An announced next action ("I will…", "Let me…"), not courtesy ("let me know", "I'll be here"). */
export const INTENT_RE = /\b(?:I will(?! be)|I'll(?! be)|I am going to|I'm going to|I'm about to|let me(?! know)|let's|we'll|we will|next,? I(?:'ll| will)?|first,? (?:we|I)(?:'ll| will)|now I(?:'ll| will)?|I need to|I should)\b/i;

/** A conclusion or final report: the run's answer, not an announcement. */
export const CONCLUSION_RE = /\b(root cause|in summary|summary of|conclusion|final answer|the answer is|I have (completed|finished|written|created|identified)|task (is )?(complete|completed|done)|TERMINATE|successfully (completed|written|created))\b/i;

/** Information the agent says it could not obtain (a page, a file, a transcript, a figure). */
export const UNOBTAINED_RE =
  /\b(?:(?:was |were |am |is |are )?unable to (?:access|retrieve|find|obtain|locate|extract|transcribe|view|open|read|load|fetch|determine|identify|confirm|verify|get|play|listen|process|interpret|see)|(?:could ?n[o']t|can ?not|can't|did ?n[o']t) (?:access|retrieve|find|obtain|locate|extract|transcribe|view|open|read|load|fetch|determine|identify|confirm|verify|get|play|listen|process|interpret|see)|(?:is |was |were |are )not (?:explicitly )?(?:stated|visible|accessible|provided)|no (?:relevant )?(?:results?|information|data|transcript|captions?|records?) (?:was |were )?(?:found|available|returned|provided)|failed to (?:retrieve|fetch|access|extract|load|transcribe|find|obtain|locate)|(?:does|do) not (?:contain|include|provide|show) (?:the |any )?(?:required|relevant|necessary|needed|specific|requested)|without (?:access to|being able to)|(?:was|were|has|have) never (?:been )?(?:obtained|extracted|transcribed|found|retrieved|accessed|identified|located|read))\b/i;

/** Data the agent says it made up: hypothetical, assumed, simulated, placeholder or example values. */
export const HYPOTHETICAL_RE =
  /\b(?:hypothetical(?:ly)?|(?:let'?s|let us|we(?:'ll| will)?) assume(?! (?:that )?(?:we|I|you|they) (?:have|can|are|could)\b)|assuming (?:that |the |a )(?!(?:we|I|you) (?:have|can)\b)|for (?:the sake of|demonstration|illustration|illustrative) (?:purposes?|argument|example)?|simulated? (?:data|values?|results?|output)|placeholder (?:data|values?|numbers?|figures?)|dummy (?:data|values?)|mock (?:data|values?)|sample (?:data|values?)|example (?:data|values?|notes)|fictional|made[- ]up|approximate (?:data|values?|figures?)|based on (?:general|typical|common) knowledge|(?:let'?s|we can) (?:use|take) (?:an? )?(?:example|estimate))\b/i;

/** A claim that something was checked and holds ("verified", "confirmed", "tests pass", "request is satisfied"). */
export const VERIFIED_CLAIM_RE =
  /\b(?:(?<!\bor |\bGIVEN OR |cross-|\bbe |\bbeen )verified(?! (?:facts|information|data|details|sources?|results?|answers?|findings|figures|values))|has been (?:verified|confirmed|validated)|(?:is|are|was|were) (?:correct|accurate|confirmed|consistent)|(?:I|we|has been|have been|is|was|are|were) (?:now |successfully |also )?confirmed|confirm(?:ed|s) that|all tests pass(?:ed)?|tests? (?:now )?pass(?:es|ed|ing)?|validation (?:passed|succeeded)|works (?:correctly|as expected)|request (?:is|has been) (?:fully )?satisfied|"?is_request_satisfied"?\s*:\s*\{[^}]*"answer"\s*:\s*true)\b/i;

/** A run's final answer: "FINAL ANSWER:", "the answer is", or a closing TERMINATE. */
export const FINAL_ANSWER_RE = /\bFINAL ANSWER\s*:|\bthe (?:final )?answer is\b|^\s*TERMINATE\s*$/im;

/** An agent setting out to check (not a ledger's "verified facts" heading, not a claim that something was verified). */
export const VERIFY_INTENT_RE = /\b(?:let'?s|let me|let us|I will|I'll|we(?:'ll| will| should| need to| can)|please|now|to)\s+(?:\w+\s+){0,2}?(?:verify|double[- ]check|cross[- ]check|cross[- ]reference|confirm|validate|re-?check)\b/i;
