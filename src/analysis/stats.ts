/**
 * Small, dependency-free statistics for the analysis stage: interval estimates for proportions and their
 * differences, Fisher's exact test, and a t interval for a mean. Every function is pure. Quantities that are
 * undefined for the data (a proportion of 0 traces, a spread from 1 value) come back as NaN; callers turn NaN into
 * `null` when they serialise. See docs/statistics.md for what each statistic means and why it was chosen.
 */

/** An estimate with a two-sided confidence interval. */
export interface Interval {
  estimate: number;
  lo: number;
  hi: number;
}

const LOG_SQRT_2PI = 0.5 * Math.log(2 * Math.PI);

/**
 * ln Γ(x) for x > 0. Stirling's series to the x^-13 term once x ≥ 10 (truncation error below 1e-16 there), and the
 * recurrence Γ(x) = Γ(x+1)/x to reach that range. Accurate to about 1e-15 relative, also for x in the thousands,
 * which is what Fisher's test over thousands of traces needs.
 */
export function logGamma(x: number): number {
  if (!(x > 0)) return NaN;
  let shift = 0;
  while (x < 10) {
    shift += Math.log(x);
    x += 1;
  }
  const inv = 1 / x;
  const inv2 = inv * inv;
  const series =
    inv *
    (1 / 12 +
      inv2 *
        (-1 / 360 +
          inv2 * (1 / 1260 + inv2 * (-1 / 1680 + inv2 * (1 / 1188 + inv2 * (-691 / 360360 + inv2 * (1 / 156)))))));
  return (x - 0.5) * Math.log(x) - x + LOG_SQRT_2PI + series - shift;
}

/** ln C(n, k) for integers 0 ≤ k ≤ n; -Infinity outside that range (the coefficient is 0). */
export function logChoose(n: number, k: number): number {
  if (k < 0 || k > n) return -Infinity;
  if (k === 0 || k === n) return 0;
  return logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1);
}

/** Regularized upper incomplete gamma Q(a, x): series for x < a + 1, Lentz continued fraction otherwise. */
function upperIncompleteGamma(a: number, x: number): number {
  if (x <= 0) return 1;
  const logPrefix = -x + a * Math.log(x) - logGamma(a);
  if (x < a + 1) {
    let term = 1 / a;
    let sum = term;
    for (let n = 1; n < 1000; n++) {
      term *= x / (a + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * 1e-17) break;
    }
    return 1 - sum * Math.exp(logPrefix);
  }
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 1000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return Math.exp(logPrefix) * h;
}

/** Standard normal CDF Φ(x), via erfc(z) = Q(½, z²); keeps full relative precision in both tails. */
export function normalCdf(x: number): number {
  if (Number.isNaN(x)) return NaN;
  const tail = 0.5 * upperIncompleteGamma(0.5, (x * x) / 2);
  return x < 0 ? tail : 1 - tail;
}

function normalPdf(x: number): number {
  return Math.exp(-0.5 * x * x - LOG_SQRT_2PI);
}

/**
 * Standard normal quantile Φ⁻¹(p). Starts from Abramowitz & Stegun 26.2.23 (|error| < 4.5e-4) and polishes with
 * Newton steps on Φ, which is cheap because Φ is accurate to machine precision.
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) return p === 0 ? -Infinity : p === 1 ? Infinity : NaN;
  const q = Math.min(p, 1 - p);
  const t = Math.sqrt(-2 * Math.log(q));
  let x = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
  if (p < 0.5) x = -x;
  for (let i = 0; i < 8; i++) {
    const step = (normalCdf(x) - p) / normalPdf(x);
    x -= step;
    if (Math.abs(step) < 1e-15 * Math.max(1, Math.abs(x))) break;
  }
  return x;
}

/** Regularized incomplete beta I_x(a, b) (Numerical Recipes' continued fraction, with the symmetry switch). */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const logFront = logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x);
  if (x > (a + 1) / (a + b + 2)) return 1 - incompleteBeta(1 - x, b, a);
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m < 1000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return (Math.exp(logFront) * h) / a;
}

/** Student t CDF with `df` degrees of freedom. */
export function studentTCdf(t: number, df: number): number {
  if (Number.isNaN(t) || !(df > 0)) return NaN;
  const tail = 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5);
  return t > 0 ? 1 - tail : tail;
}

/** Student t quantile by bracketing and bisection on the CDF (monotone, so this cannot fail to converge). */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1) || !(df > 0)) return NaN;
  if (p === 0.5) return 0;
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  let lo = 0;
  let hi = 1;
  while (studentTCdf(hi, df) < p) {
    lo = hi;
    hi *= 2;
    if (hi > 1e12) return Infinity;
  }
  for (let i = 0; i < 200 && hi - lo > 1e-14 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (studentTCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** z for a two-sided interval at the given confidence, e.g. 1.959964 for 0.95. */
export function zFor(confidence: number): number {
  return normalQuantile(1 - (1 - confidence) / 2);
}

/**
 * Wilson score interval for a binomial proportion x/n (Wilson 1927). Unlike the Wald interval it stays inside [0, 1]
 * and keeps near-nominal coverage at small n and at 0 or n successes — the usual case for rare failure modes.
 * n = 0 gives NaN throughout (no information).
 */
export function wilsonInterval(x: number, n: number, confidence = 0.95): Interval {
  if (!(n > 0)) return { estimate: NaN, lo: NaN, hi: NaN };
  const z = zFor(confidence);
  const p = x / n;
  const z2n = (z * z) / n;
  const centre = (p + z2n / 2) / (1 + z2n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / (1 + z2n);
  // Clamp rounding noise at the boundaries: x = 0 must give exactly 0, x = n exactly 1.
  return { estimate: p, lo: x === 0 ? 0 : Math.max(0, centre - half), hi: x === n ? 1 : Math.min(1, centre + half) };
}

/**
 * Newcombe's hybrid score interval for p1 − p2 = x1/n1 − x2/n2 (Newcombe 1998, method 10): combines the two Wilson
 * intervals. Near-nominal coverage without iteration, never leaves [−1, 1], and defined at 0 or n events.
 */
export function newcombeInterval(x1: number, n1: number, x2: number, n2: number, confidence = 0.95): Interval {
  if (!(n1 > 0) || !(n2 > 0)) return { estimate: NaN, lo: NaN, hi: NaN };
  const w1 = wilsonInterval(x1, n1, confidence);
  const w2 = wilsonInterval(x2, n2, confidence);
  const p1 = x1 / n1;
  const p2 = x2 / n2;
  const d = p1 - p2;
  return {
    estimate: d,
    lo: d - Math.sqrt((p1 - w1.lo) ** 2 + (w2.hi - p2) ** 2),
    hi: d + Math.sqrt((w1.hi - p1) ** 2 + (p2 - w2.lo) ** 2),
  };
}

/**
 * Fisher's exact test, two-sided, for the 2×2 table [[a, b], [c, d]]. Exact hypergeometric probabilities in log
 * space; the two-sided p sums every table with the margins fixed whose probability is not above the observed one
 * (the rule of R's fisher.test and SciPy, with the same 1e-7 relative tolerance for ties). Works for margins in the
 * thousands; a p below ~1e-308 underflows to 0.
 */
export function fisherExact(a: number, b: number, c: number, d: number): number {
  for (const v of [a, b, c, d]) if (!Number.isInteger(v) || v < 0) return NaN;
  const row1 = a + b;
  const row2 = c + d;
  const col1 = a + c;
  const n = row1 + row2;
  if (row1 === 0 || row2 === 0 || col1 === 0 || col1 === n) return 1; // one margin is degenerate: only one table
  const logDenominator = logChoose(n, col1);
  const logP = (k: number) => logChoose(row1, k) + logChoose(row2, col1 - k) - logDenominator;
  const observed = logP(a);
  const threshold = observed + Math.log1p(1e-7);
  let p = 0;
  for (let k = Math.max(0, col1 - row2); k <= Math.min(row1, col1); k++) {
    const lp = logP(k);
    if (lp <= threshold) p += Math.exp(lp);
  }
  return Math.min(1, p);
}

/**
 * Mean with a Student t interval: mean ± t(1−α/2, n−1)·s/√n, s the sample standard deviation. Used for distinct
 * modes per failed trace: the counts are bounded (0…14), so the sampling distribution of the mean is close to
 * normal for the group sizes we see, and t keeps small groups honest. n = 1 has no interval (NaN).
 */
export function meanInterval(values: readonly number[], confidence = 0.95): Interval & { n: number; sd: number } {
  const n = values.length;
  if (n === 0) return { estimate: NaN, lo: NaN, hi: NaN, n, sd: NaN };
  const mean = values.reduce((s, v) => s + v, 0) / n;
  if (n === 1) return { estimate: mean, lo: NaN, hi: NaN, n, sd: NaN };
  const sd = Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1));
  const half = studentTQuantile(1 - (1 - confidence) / 2, n - 1) * (sd / Math.sqrt(n));
  return { estimate: mean, lo: mean - half, hi: mean + half, n, sd };
}

/**
 * Benjamini–Hochberg adjusted p-values (q-values), in the input order. NaN inputs stay NaN and do not count towards
 * the number of tests. Reported beside the raw p so a reader can control the false discovery rate across modes.
 */
export function benjaminiHochberg(pValues: readonly number[]): number[] {
  const indexed = pValues.map((p, i) => ({ p, i })).filter((x) => !Number.isNaN(x.p));
  indexed.sort((x, y) => x.p - y.p);
  const m = indexed.length;
  const out = pValues.map(() => NaN);
  let running = 1;
  for (let r = m - 1; r >= 0; r--) {
    const { p, i } = indexed[r]!;
    running = Math.min(running, (p * m) / (r + 1));
    out[i] = running;
  }
  return out;
}

/**
 * Newcombe's square-and-add interval for the difference of two paired proportions (Newcombe 1998c, method 10):
 * the same trace judged twice (before/after). The table is [[both, firstOnly], [secondOnly, neither]] and the
 * estimate is p(first) − p(second). The Wilson intervals of the two margins are combined with ψ, a correlation
 * estimate corrected towards 0 (Newcombe's rule: no correction when AD − BC is negative, shrink by N/2 when
 * positive). n = 0 gives NaN throughout.
 */
export function newcombePairedInterval(both: number, firstOnly: number, secondOnly: number, neither: number, confidence = 0.95): Interval {
  const n = both + firstOnly + secondOnly + neither;
  if (!(n > 0)) return { estimate: NaN, lo: NaN, hi: NaN };
  const first = both + firstOnly;
  const second = both + secondOnly;
  const p1 = first / n;
  const p2 = second / n;
  const w1 = wilsonInterval(first, n, confidence);
  const w2 = wilsonInterval(second, n, confidence);
  let psi = 0;
  if (first > 0 && first < n && second > 0 && second < n) {
    const a = both * neither - firstOnly * secondOnly;
    const scale = Math.sqrt(first * (n - first) * second * (n - second));
    psi = a > n / 2 ? (a - n / 2) / scale : a < 0 ? a / scale : 0;
  }
  const d = p1 - p2;
  const down1 = p1 - w1.lo;
  const up1 = w1.hi - p1;
  const down2 = p2 - w2.lo;
  const up2 = w2.hi - p2;
  return {
    estimate: d,
    lo: d - Math.sqrt(Math.max(0, down1 ** 2 + up2 ** 2 - 2 * psi * down1 * up2)),
    hi: d + Math.sqrt(Math.max(0, down2 ** 2 + up1 ** 2 - 2 * psi * down2 * up1)),
  };
}

/**
 * Exact McNemar test, two-sided: under "no change", each of the b + c discordant pairs is equally likely to go
 * either way, so p = min(1, 2·P(X ≤ min(b, c))) with X ~ Binomial(b + c, ½). No discordant pair gives p = 1.
 */
export function mcnemarExact(b: number, c: number): number {
  for (const v of [b, c]) if (!Number.isInteger(v) || v < 0) return NaN;
  const n = b + c;
  if (n === 0) return 1;
  const k = Math.min(b, c);
  let tail = 0;
  for (let i = 0; i <= k; i++) tail += Math.exp(logChoose(n, i) - n * Math.LN2);
  return Math.min(1, 2 * tail);
}
