import { buildTrace, compact } from "../../trace/index.js";
import { bool, chatMessagesToSteps, isChatMessages, isObj, normalizeModel, num, str } from "../common/index.js";
import type { FormatAdapter } from "../types.js";
import { basename } from "node:path";

/**
 * OpenAI chat-completions message lists: a JSON array of messages (one conversation), `{messages:[…]}` (optionally
 * with `id` and `model`), a JSON array of such conversations, or JSONL with one conversation per line.
 */
const conversationOf = (v: unknown): unknown[] | undefined =>
  isChatMessages(v) ? v : isObj(v) && isChatMessages(v.messages) ? (v.messages as unknown[]) : undefined;

export const openaiChat: FormatAdapter = {
  id: "openai-chat",
  title: "OpenAI chat messages (JSON / JSONL, with tool calls)",
  detect(s) {
    if (s.kind === "json-array") return isChatMessages(s.records) || (s.records.length > 0 && s.records.every((r) => conversationOf(r)));
    return s.records.length > 0 && conversationOf(s.records[0]) !== undefined;
  },
  async *read(file, ctx) {
    const stem = basename(file.path).replace(/\.(jsonl?|ndjson)$/i, "");
    if (file.sample.kind === "json-array" && isChatMessages(file.sample.records)) {
      const messages: unknown[] = [];
      for await (const r of file.records()) messages.push(r.value);
      yield buildTrace({ id: stem, source: { file: file.path, format: "openai-chat", index: 0 } }, chatMessagesToSteps(messages, { pointer: "" }));
      return;
    }
    let index = 0;
    for await (const r of file.records()) {
      const messages = conversationOf(r.value);
      if (!messages) {
        ctx.report({ line: r.line, level: "error", message: "not a chat conversation: expected {messages:[{role, content}…]}", skipped: "record" });
        continue;
      }
      const rec = isObj(r.value) && !Array.isArray(r.value) ? r.value : {};
      const model = normalizeModel(str(rec.model));
      // eval-style JSONL often carries a verdict next to the conversation: reward / success / score
      const reward = num(rec.reward);
      const success = bool(rec.success) ?? (reward !== undefined ? reward === 1 : undefined);
      const outcome = success !== undefined || num(rec.score) !== undefined ? compact({ success, reward, score: num(rec.score) }) : undefined;
      try {
        yield buildTrace(
          {
            id: str(rec.id) ?? (file.sample.kind === "jsonl" ? `${stem}:${r.line}` : stem),
            source: { file: file.path, format: "openai-chat", index: index++, line: r.line },
            model,
            ...(outcome ? { outcome } : {}),
            metadata: model && model !== str(rec.model) ? { modelRaw: rec.model } : {},
          },
          chatMessagesToSteps(messages, { pointer: "/messages", line: r.line }),
        );
      } catch (e) {
        ctx.report({ line: r.line, level: "error", message: (e as Error).message, skipped: "trace" });
      }
    }
  },
};
