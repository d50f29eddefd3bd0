import { describe, expect, it } from "vitest";
import {
  benjaminiHochberg,
  fisherExact,
  logChoose,
  logGamma,
  mcnemarExact,
  meanInterval,
  newcombeInterval,
  newcombePairedInterval,
  normalCdf,
  normalQuantile,
  studentTCdf,
  studentTQuantile,
  wilsonInterval,
} from "./stats.js";

describe("logGamma / logChoose", () => {
  it("matches closed forms", () => {
    expect(logGamma(0.5)).toBeCloseTo(0.5 * Math.log(Math.PI), 14); // Γ(½) = √π
    expect(logGamma(1)).toBeCloseTo(0, 14);
    expect(logGamma(2)).toBeCloseTo(0, 14);
    expect(logGamma(11)).toBeCloseTo(Math.log(3628800), 12); // 10!
    let logFactorial = 0;
    for (let k = 2; k <= 5000; k++) logFactorial += Math.log(k);
    expect(Math.abs(logGamma(5001) - logFactorial) / logFactorial).toBeLessThan(1e-13); // 5000! summed term by term
  });

  it("gives exact binomial coefficients", () => {
    expect(Math.exp(logChoose(20, 10))).toBeCloseTo(184756, 6);
    expect(Math.exp(logChoose(52, 5))).toBeCloseTo(2598960, 4);
    expect(logChoose(5, 0)).toBe(0);
    expect(logChoose(5, 6)).toBe(-Infinity);
  });
});

describe("normal and t distributions", () => {
  it("reproduces textbook quantiles", () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963984540054, 12);
    expect(normalQuantile(0.995)).toBeCloseTo(2.5758293035489, 11);
    expect(normalQuantile(0.5)).toBeCloseTo(0, 14);
    expect(normalQuantile(1e-10)).toBeCloseTo(-6.361340902404056, 9);
    expect(normalCdf(-8) / 6.22096057427174e-16).toBeCloseTo(1, 9); // far tail keeps relative precision
  });

  it("reproduces t-table values (two-sided 95 %)", () => {
    // Standard t tables: t(0.975, df).
    const table: [number, number][] = [
      [1, 12.7062],
      [2, 4.3027],
      [5, 2.5706],
      [7, 2.3646],
      [10, 2.2281],
      [30, 2.0423],
      [100, 1.984],
    ];
    for (const [df, t] of table) expect(studentTQuantile(0.975, df)).toBeCloseTo(t, 3);
    expect(studentTCdf(2, 3)).toBeCloseTo(0.9303370157205785, 10);
    expect(studentTQuantile(0.025, 10)).toBeCloseTo(-2.228138851986274, 8);
  });
});

describe("wilsonInterval", () => {
  // Newcombe (1998a), "Two-sided confidence intervals for the single proportion: comparison of seven methods",
  // Stat Med 17:857–872, Table I, method 3 (score, no continuity correction).
  it.each([
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0, 0.1611],
    [1, 29, 0.0061, 0.1718],
  ])("%i/%i → [%f, %f]", (x, n, lo, hi) => {
    const w = wilsonInterval(x, n);
    expect(w.estimate).toBeCloseTo(x / n, 12);
    expect(w.lo).toBeCloseTo(lo, 4);
    expect(w.hi).toBeCloseTo(hi, 4);
  });

  it("is exact at the boundaries and undefined for n = 0", () => {
    expect(wilsonInterval(0, 5).lo).toBe(0);
    expect(wilsonInterval(5, 5).hi).toBe(1);
    expect(wilsonInterval(0, 0).estimate).toBeNaN();
  });

  it("widens with confidence", () => {
    const w95 = wilsonInterval(7, 20);
    const w99 = wilsonInterval(7, 20, 0.99);
    expect(w99.lo).toBeLessThan(w95.lo);
    expect(w99.hi).toBeGreaterThan(w95.hi);
  });
});

describe("newcombeInterval", () => {
  // Newcombe (1998b), "Interval estimation for the difference between independent proportions: comparison of
  // eleven methods", Stat Med 17:873–890, Table II, method 10 (hybrid score).
  it.each([
    [56, 70, 48, 80, 0.0524, 0.3339],
    [9, 10, 3, 10, 0.1705, 0.809],
    [6, 7, 2, 7, 0.0582, 0.8062],
    [5, 56, 0, 29, -0.0381, 0.1926],
    [0, 10, 0, 20, -0.1611, 0.2775],
    [0, 10, 0, 10, -0.2775, 0.2775],
    [10, 10, 0, 20, 0.6791, 1.0],
    [10, 10, 0, 10, 0.6075, 1.0],
  ])("%i/%i − %i/%i → [%f, %f]", (x1, n1, x2, n2, lo, hi) => {
    const d = newcombeInterval(x1, n1, x2, n2);
    expect(d.estimate).toBeCloseTo(x1 / n1 - x2 / n2, 12);
    expect(d.lo).toBeCloseTo(lo, 4);
    expect(d.hi).toBeCloseTo(hi, 4);
  });

  it("is antisymmetric and undefined with an empty arm", () => {
    const ab = newcombeInterval(12, 40, 3, 25);
    const ba = newcombeInterval(3, 25, 12, 40);
    expect(ba.lo).toBeCloseTo(-ab.hi, 12);
    expect(ba.hi).toBeCloseTo(-ab.lo, 12);
    expect(newcombeInterval(1, 0, 1, 3).lo).toBeNaN();
  });
});

describe("fisherExact (two-sided)", () => {
  it("Fisher's lady tasting tea: 3 of 4 cups right gives p = 34/70", () => {
    // Fisher (1935), The Design of Experiments §2: tables with 3 or more right out of 4, both tails: (1+16+16+1)/70.
    expect(fisherExact(3, 1, 1, 3)).toBeCloseTo(34 / 70, 12);
  });

  it("hand-computed perfect separations: 2 / C(n, n/2)", () => {
    expect(fisherExact(3, 0, 0, 3)).toBeCloseTo(2 / 20, 12);
    expect(fisherExact(10, 0, 0, 10)).toBeCloseTo(2 / 184756, 15);
  });

  it("matches published examples", () => {
    // R ?fisher.test, "Convictions" (Fisher 1962, twins): p-value = 0.0005367.
    expect(fisherExact(2, 10, 15, 3)).toBeCloseTo(0.0005367241191434358, 10);
    // SciPy docs example: [[8, 2], [1, 5]] → 0.0349650…
    expect(fisherExact(8, 2, 1, 5)).toBeCloseTo(0.034965034965034975, 12);
  });

  it("stays accurate with thousands of traces (log space)", () => {
    // Reference values from SciPy's stats.fisher_exact (independent implementation).
    const rel = (x: number, ref: number) => Math.abs(x - ref) / ref;
    expect(rel(fisherExact(500, 1500, 600, 1400), 0.0004526325820608687)).toBeLessThan(1e-8);
    expect(rel(fisherExact(1000, 200, 900, 300), 6.077422433880184e-7)).toBeLessThan(1e-8);
    expect(rel(fisherExact(250, 0, 150, 100), 5.9392091979896303e-36)).toBeLessThan(1e-8);
  });

  it("is symmetric in rows and columns and 1 for degenerate margins", () => {
    expect(fisherExact(2, 15, 10, 3)).toBeCloseTo(fisherExact(10, 3, 2, 15), 14);
    expect(fisherExact(2, 10, 15, 3)).toBeCloseTo(fisherExact(2, 15, 10, 3), 14);
    expect(fisherExact(0, 0, 4, 6)).toBe(1);
    expect(fisherExact(5, 0, 7, 0)).toBe(1);
    expect(fisherExact(1.5, 0, 7, 0)).toBeNaN();
  });
});

describe("meanInterval", () => {
  it("gives mean ± t·s/√n", () => {
    // mean 5, s = √(32/7), t(0.975, 7) = 2.3646 → 5 ∓ 1.7875
    const m = meanInterval([2, 4, 4, 4, 5, 5, 7, 9]);
    expect(m.estimate).toBe(5);
    expect(m.sd).toBeCloseTo(Math.sqrt(32 / 7), 12);
    expect(m.lo).toBeCloseTo(3.21251208176379, 8);
    expect(m.hi).toBeCloseTo(6.787487918236209, 8);
  });

  it("has no interval for fewer than two values", () => {
    expect(meanInterval([]).estimate).toBeNaN();
    const one = meanInterval([3]);
    expect(one.estimate).toBe(3);
    expect(one.lo).toBeNaN();
  });
});

describe("benjaminiHochberg", () => {
  it("adjusts by rank, keeping monotonicity", () => {
    // sorted 0.005, 0.01, 0.03, 0.04 (m = 4): 0.02, 0.02, 0.04, 0.04
    const q = benjaminiHochberg([0.01, 0.04, 0.03, 0.005]);
    expect(q[0]).toBeCloseTo(0.02, 14);
    expect(q[1]).toBeCloseTo(0.04, 14);
    expect(q[2]).toBeCloseTo(0.04, 14);
    expect(q[3]).toBeCloseTo(0.02, 14);
    const withNaN = benjaminiHochberg([0.01, NaN, 0.02]);
    expect(withNaN[1]).toBeNaN();
    expect(withNaN[2]).toBeCloseTo(0.02, 14);
  });
});

describe("newcombePairedInterval", () => {
  it("reproduces the square-and-add interval of Fagerland, Lydersen & Laake's Cavo et al. (2012) example", () => {
    // [[59, 6], [16, 80]]: estimate −10/161 = −0.0621, 95 % CI −0.1186 to −0.0046 (R contingencytables, chapter 8)
    const i = newcombePairedInterval(59, 6, 16, 80);
    expect(i.estimate).toBeCloseTo(-10 / 161, 12);
    expect(i.lo).toBeCloseTo(-0.1186, 4);
    expect(i.hi).toBeCloseTo(-0.0046, 4);
  });

  it("is antisymmetric when the two measurements swap, and NaN without pairs", () => {
    const a = newcombePairedInterval(59, 6, 16, 80);
    const b = newcombePairedInterval(59, 16, 6, 80);
    expect(b.estimate).toBeCloseTo(-a.estimate, 14);
    expect(b.lo).toBeCloseTo(-a.hi, 14);
    expect(b.hi).toBeCloseTo(-a.lo, 14);
    expect(newcombePairedInterval(0, 0, 0, 0).estimate).toBeNaN();
  });

  it("stays defined at the boundaries (no discordant pairs, a margin of 0)", () => {
    const i = newcombePairedInterval(0, 0, 5, 5); // first never, second in half
    expect(i.estimate).toBe(-0.5);
    expect(i.lo).toBeGreaterThanOrEqual(-1);
    expect(i.hi).toBeLessThan(0);
  });
});

describe("mcnemarExact", () => {
  it("is twice the binomial tail of the smaller discordant count", () => {
    // b = 0, c = 5: 2·(½)^5
    expect(mcnemarExact(0, 5)).toBeCloseTo(2 / 32, 14);
    // b = 6, c = 16: 2·Σ_{k≤6} C(22,k) / 2^22 = 2·110056/4194304
    expect(mcnemarExact(6, 16)).toBeCloseTo((2 * 110056) / 4194304, 12);
    expect(mcnemarExact(16, 6)).toBeCloseTo(mcnemarExact(6, 16), 14);
    // b = c: the whole distribution counts, capped at 1
    expect(mcnemarExact(3, 3)).toBe(1);
    expect(mcnemarExact(0, 0)).toBe(1);
    expect(mcnemarExact(-1, 2)).toBeNaN();
  });
});
