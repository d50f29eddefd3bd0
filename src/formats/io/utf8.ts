const strictDecoder = new TextDecoder("utf-8", { fatal: true });

/** Decodes UTF-8 strictly; returns undefined on invalid bytes instead of silently inserting U+FFFD. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Byte offset of the first invalid UTF-8 sequence, or -1 when the buffer is valid. */
export function findInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  const n = b.length;
  while (i < n) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let len: number;
    if (c >= 0xc2 && c <= 0xdf) len = 2;
    else if (c >= 0xe0 && c <= 0xef) len = 3;
    else if (c >= 0xf0 && c <= 0xf4) len = 4;
    else return i;
    if (i + len > n) return i;
    for (let k = 1; k < len; k++) if ((b[i + k]! & 0xc0) !== 0x80) return i;
    // overlongs and surrogates
    if (c === 0xe0 && b[i + 1]! < 0xa0) return i;
    if (c === 0xed && b[i + 1]! > 0x9f) return i;
    if (c === 0xf0 && b[i + 1]! < 0x90) return i;
    if (c === 0xf4 && b[i + 1]! > 0x8f) return i;
    i += len;
  }
  return -1;
}

/** 1-based line number of a byte offset. */
export function lineAt(b: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < b.length; i++) if (b[i] === 10) line++;
  return line;
}
