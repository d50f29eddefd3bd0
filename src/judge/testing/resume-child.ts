import { writeFileSync, appendFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildTrace, type Trace } from "../../trace/index.js";
import { JsonlFileCache } from "../cache.js";
import { OpenAIChatModel } from "../client.js";
import { judgeTraces, type JudgeOptions } from "../judge.js";

/**
 * A child process for the SIGKILL-resume test: judges a fixed set of traces against the server at FL_BASE_URL with the
 * file cache at FL_CACHE, writing one diagnosis per line to FL_OUT. The test kills it mid-run and starts it again.
 */

export const RESUME_WINDOW_TOKENS = 400;

export function resumeTraces(): Trace[] {
  return Array.from({ length: 4 }, (_, t) =>
    buildTrace(
      { id: `resume-${t}`, source: { file: "resume.json", format: "test", index: t }, task: { text: `Restart service ${t}.` } },
      Array.from({ length: 16 }, (_, i) => ({
        agent: i % 2 ? "agent" : "env",
        role: (i % 2 ? "assistant" : "tool") as "assistant" | "tool",
        kind: "message" as const,
        text: `trace ${t} step ${i}: systemctl restart svc-${t} reported state ${i % 3 ? "failed" : "active"} with code ${i}`,
      })),
    ),
  );
}

export function resumeOptions(model: JudgeOptions["model"]): JudgeOptions {
  return { model, windowTokens: RESUME_WINDOW_TOKENS, overlapTokens: 60 };
}

async function main(): Promise<void> {
  const baseURL = process.env.FL_BASE_URL;
  const cachePath = process.env.FL_CACHE;
  const out = process.env.FL_OUT;
  if (!baseURL || !cachePath || !out) throw new Error("FL_BASE_URL, FL_CACHE and FL_OUT are required");
  const cache = await JsonlFileCache.open(cachePath);
  const model = new OpenAIChatModel({ baseURL, model: "resume-model", maxAttempts: 2, timeoutMs: 10_000 }, { env: {} });
  writeFileSync(out, "");
  let n = 0;
  for await (const j of judgeTraces(resumeTraces(), { ...resumeOptions(model), cache, concurrency: 2 })) {
    appendFileSync(out, `${JSON.stringify(j.diagnosis)}\n`);
    n++;
  }
  await cache.close();
  process.stdout.write(`judged ${n}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e) => {
    process.stderr.write(`${(e as Error).stack ?? e}\n`);
    process.exit(1);
  });
}
