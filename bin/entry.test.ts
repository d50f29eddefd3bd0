import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error plain JavaScript module without declarations (it runs before anything is compiled)
import { BUILD_STAMP, chooseEntry } from "./entry.js";

/** A package root with src/ and/or dist/; times in seconds since the epoch. */
function root(opts: { src?: number; dist?: boolean; stamp?: number; test?: number }) {
  const dir = mkdtempSync(join(tmpdir(), "faultline-entry-"));
  const put = (rel: string, at: number) => {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), "");
    utimesSync(join(dir, rel), at, at);
  };
  if (opts.src !== undefined) {
    put("src/cli/main.ts", 1000);
    put("src/deep/er/module.ts", opts.src);
  }
  if (opts.test !== undefined) put("src/deep/module.test.ts", opts.test);
  if (opts.dist) put("dist/cli/main.js", 1500);
  if (opts.stamp !== undefined) put(BUILD_STAMP, opts.stamp);
  return dir;
}

describe("bin/entry.js: which CLI the bin runs", () => {
  it("runs dist/ when the build stamp is newer than every source file", () => {
    const r = root({ src: 1000, dist: true, stamp: 2000 });
    expect(chooseEntry(r)).toEqual({ entry: join(r, "dist", "cli", "main.js"), via: "dist" });
  });

  it("runs the sources when one of them changed after the build, however deep", () => {
    const r = root({ src: 3000, dist: true, stamp: 2000 });
    expect(chooseEntry(r)).toEqual({ entry: join(r, "src", "cli", "main.ts"), via: "src" });
  });

  it("ignores test files: editing a test does not make the build stale", () => {
    expect(chooseEntry(root({ src: 1000, test: 5000, dist: true, stamp: 2000 })).via).toBe("dist");
  });

  it("runs the sources when dist/ has no stamp (an interrupted or foreign build) or is missing", () => {
    expect(chooseEntry(root({ src: 1000, dist: true })).via).toBe("src");
    expect(chooseEntry(root({ src: 1000 })).via).toBe("src");
  });

  it("runs dist/ in an installed package, which has no sources", () => {
    expect(chooseEntry(root({ dist: true })).via).toBe("dist");
  });
});
