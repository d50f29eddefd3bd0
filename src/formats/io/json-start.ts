/**
 * Whether text can be the start of JSON (or of JSONL): used by file sniffing to tell a JSON array from a text log
 * whose first line opens with "[" (`[2023-25-06 20:16:55 INFO] …`, `[INFO] …`), without parsing the whole file.
 *
 * Tokens are checked from the first non-space character until the first value is complete, the text ends (a prefix
 * of valid JSON is accepted), or a line break is reached after `minTokens` tokens, so a pretty-printed document is
 * judged by its first lines only and a broken element further down is left to the reader to report. Bare NaN /
 * Infinity are accepted, like the lenient parser.
 */
export function startsLikeJson(text: string, minTokens = 3): boolean {
  const n = text.length;
  const stack: ("[" | "{")[] = [];
  let expect: "value" | "value-or-close" | "key" | "key-or-close" | "colon" | "comma-or-close" = "value";
  let tokens = 0;
  let i = 0;
  for (;;) {
    let crossedLine = false;
    while (i < n && SPACE.has(text[i]!)) if (text[i++] === "\n") crossedLine = true;
    if (i >= n || (crossedLine && tokens >= minTokens)) return true;
    const c = text[i]!;
    tokens++;
    let valueDone = false;
    if (expect === "comma-or-close") {
      const top = stack.at(-1);
      if (c === ",") expect = top === "[" ? "value" : "key";
      else if (c === (top === "[" ? "]" : "}")) {
        stack.pop();
        valueDone = true;
      } else return false;
      i++;
    } else if (expect === "colon") {
      if (c !== ":") return false;
      expect = "value";
      i++;
    } else if (expect === "key" || expect === "key-or-close") {
      if (c === "}" && expect === "key-or-close") {
        stack.pop();
        i++;
        valueDone = true;
      } else if (c !== '"') return false;
      else {
        const end = stringEnd(text, i);
        if (end === "cut") return true;
        if (end === "bad") return false;
        i = end;
        expect = "colon";
      }
    } else if (c === "]" && expect === "value-or-close") {
      stack.pop();
      i++;
      valueDone = true;
    } else if (c === "[" || c === "{") {
      stack.push(c);
      expect = c === "[" ? "value-or-close" : "key-or-close";
      i++;
    } else if (c === '"') {
      const end = stringEnd(text, i);
      if (end === "cut") return true;
      if (end === "bad") return false;
      i = end;
      valueDone = true;
    } else {
      // a number or a literal runs to the next delimiter; one cut off by the end of the text cannot be judged
      WORD.lastIndex = i;
      const word = WORD.exec(text)![0];
      if (i + word.length >= n) return true;
      if (!SCALAR.test(word)) return false;
      i += word.length;
      valueDone = true;
    }
    if (valueDone) {
      if (stack.length === 0) return true; // the first value is complete: what follows is the reader's business
      expect = "comma-or-close";
    }
  }
}

const SPACE = new Set([" ", "\t", "\r", "\n", "\uFEFF"]);
const WORD = /[^\s,:[\]{}"]*/y;
const SCALAR = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|NaN|-?Infinity)$/;

/** Index just past the string that opens at `start`; "cut" when the text ends inside it, "bad" for a raw line break. */
function stringEnd(text: string, start: number): number | "cut" | "bad" {
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i];
    if (c === "\\") i++;
    else if (c === '"') return i + 1;
    else if (c === "\n") return "bad";
  }
  return "cut";
}
