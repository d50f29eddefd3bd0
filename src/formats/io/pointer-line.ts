/**
 * The 1-based line where the value at a JSON pointer (`/messages/4`) starts in a JSON text, or undefined when the
 * text has no such value. Used to give a line to a problem an adapter found inside a single JSON document, where it
 * only knows the pointer. One iterative pass (no recursion, so depth does not matter); keys are compared decoded.
 */
export function lineOfPointer(text: string, pointer: string): number | undefined {
  const segs = pointer === "" ? [] : pointer.split("/").slice(1).map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  interface Frame {
    arr: boolean;
    index: number;
    key?: string;
    expectKey: boolean;
    /** The path down to this container equals the pointer's first segments. */
    matched: boolean;
  }
  const stack: Frame[] = [];
  const n = text.length;
  let i = 0;
  let line = 1;

  const skipString = (): number => {
    const start = i;
    i++;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 92 /* \ */) i += 2;
      else if (c === 34 /* " */) {
        i++;
        return start;
      } else {
        if (c === 10) line++;
        i++;
      }
    }
    return start;
  };

  for (;;) {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 10) line++;
      else if (c !== 32 && c !== 9 && c !== 13 && c !== 0xfeff) break;
      i++;
    }
    if (i >= n) return undefined;
    const c = text[i]!;
    const top = stack.at(-1);
    if (c === "}" || c === "]") {
      stack.pop();
      if (stack.length === 0) return undefined;
      i++;
      continue;
    }
    if (c === ",") {
      if (top?.arr) top.index++;
      else if (top) top.expectKey = true;
      i++;
      continue;
    }
    if (c === ":") {
      i++;
      continue;
    }
    if (top && !top.arr && top.expectKey) {
      if (c !== '"') return undefined;
      const start = skipString();
      try {
        top.key = JSON.parse(text.slice(start, i)) as string;
      } catch {
        return undefined;
      }
      top.expectKey = false;
      continue;
    }
    // a value starts here
    const d = stack.length;
    const matched = d === 0 ? true : top!.matched && (top!.arr ? String(top!.index) : top!.key) === segs[d - 1];
    if (matched && d === segs.length) return line;
    if (c === "{" || c === "[") {
      stack.push({ arr: c === "[", index: 0, expectKey: c === "{", matched: matched && d < segs.length });
      i++;
    } else if (c === '"') skipString();
    else {
      while (i < n && !/[\s,\]}]/.test(text[i]!)) i++;
      if (d === 0) return undefined;
    }
  }
}
