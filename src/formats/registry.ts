import type { FormatAdapter } from "./types.js";
// adapter imports (one line per format, keep alphabetical)
import { agentRx } from "./adapters/agentrx.js";
import { canonical } from "./adapters/canonical.js";
import { chatdev } from "./adapters/chatdev.js";
import { claudeCode } from "./adapters/claude-code.js";
import { codexExec } from "./adapters/codex-exec.js";
import { codexOtlpLogs } from "./adapters/codex-otlp-logs.js";
import { codexRollout } from "./adapters/codex-rollout.js";
import { inspectAi } from "./adapters/inspect-ai.js";
import { langfuse } from "./adapters/langfuse.js";
import { mastData } from "./adapters/mast-data.js";
import { miniSweAgent } from "./adapters/mini-swe-agent.js";
import { openaiChat } from "./adapters/openai-chat.js";
import { openhands } from "./adapters/openhands.js";
import { openhandsCompletions } from "./adapters/openhands-completions.js";
import { otelSpanDump } from "./adapters/otel-span-dump.js";
import { otlpTraces } from "./adapters/otlp-traces.js";
import { sweAgent } from "./adapters/swe-agent.js";
import { tauBench } from "./adapters/tau-bench.js";
import { tau2Bench } from "./adapters/tau2-bench.js";
import { whoAndWhen } from "./adapters/who-and-when.js";

/**
 * Adapters in detection order: the most specific signatures first (see trace-formats.md §1). A file goes to the
 * first adapter whose `detect` says yes.
 */
export const ADAPTERS: FormatAdapter[] = [
  // adapters in detection order
  canonical,
  codexRollout, // §1 #1: {timestamp, type, payload} lines (also recognises ITBench supporting files)
  codexExec, // §1 #2: thread.* / turn.* / item.* / error events
  codexOtlpLogs, // §1 #4: Codex OTLP log export (Zero receiver envelope or resource_logs with codex.* events)
  otlpTraces, // §1 #3: resourceSpans / resource_spans (after codexOtlpLogs, which checks resource_logs)
  whoAndWhen, // §1 #10: history[] + mistake_agent + mistake_step
  agentRx, // bare Magentic-One logs and the AgentRx tau-bench copy: before tauBench and openaiChat
  tauBench, // §1 #11: {task_id, reward, info, traj, trial}
  miniSweAgent, // mini-SWE-agent .traj.json: info + messages + trajectory_format
  sweAgent, // SWE-agent .traj: trajectory[] + history[] + info
  openhands, // OpenHands/OpenDevin output.jsonl event histories and replay event arrays
  openhandsCompletions, // OpenHands llm_completions/<instance>/*.json ({messages, response, kwargs}): before openaiChat
  otelSpanDump, // OTel span dumps that are not OTLP (OTel-JS ReadableSpan, Python to_json, SMOLTRACE traces.json)
  langfuse, // Langfuse {trace, observations} exports
  mastData, // §1 #7/#8: MAD full records (mas_name, trace.trajectory, mast_annotation) and human records (round, annotations)
  tau2Bench, // τ²-bench results {timestamp, info, tasks, simulations}
  inspectAi, // Inspect AI eval logs: .json EvalLog with eval{task, model} + samples, or .eval zip with header.json
  claudeCode, // Claude Code session JSONL (sessionId + uuid lines); claims metadata.json / prompt.txt beside it
  chatdev, // ChatDev WareHouse text logs: first line a `[YYYY-DD-MM hh:mm:ss INFO]` header
  openaiChat, // generic chat lists: keep near the end, after every dataset format built on chat messages
];

export function findAdapter(id: string): FormatAdapter | undefined {
  return ADAPTERS.find((a) => a.id === id);
}
