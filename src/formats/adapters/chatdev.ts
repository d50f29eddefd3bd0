import { basename, dirname } from "node:path";
import { buildTrace, compact } from "../../trace/index.js";
import { looksLikeChatDev, segmentChatDev } from "../segment/index.js";
import type { FormatAdapter } from "../types.js";

/**
 * ChatDev 1.0 WareHouse run logs (`WareHouse/<Project>_<Org>_<ts>/<…>.log`): one run per file, split by the ChatDev
 * splitter (src/formats/segment/chatdev.ts). The model comes from `model_type` in the phase tables (older AgentTech
 * logs name none); `Software Info` summaries go to metadata. ChatDev records no verdict, so no outcome is set.
 */
export const chatdev: FormatAdapter = {
  id: "chatdev",
  title: "ChatDev run log (WareHouse .log)",
  // the sniffer classes a log opening with `[2023-…` as text (src/formats/io/json-start.ts); the header decides
  detect: (s) => s.kind === "text" && looksLikeChatDev(s.head),
  async *read(file, ctx) {
    const text = await file.text();
    const seg = segmentChatDev(text);
    if (!seg) {
      ctx.report({ line: 1, level: "error", message: "not a ChatDev log: the first line is not a `[YYYY-DD-MM hh:mm:ss INFO]` header", skipped: "file" });
      return;
    }
    const folder = basename(dirname(file.path));
    const stem = basename(file.path).replace(/\.log$/i, "");
    if (!seg.model) ctx.report({ level: "notice", message: "the log names no model_type (AgentTech-era log); model left unset" });
    const info = seg.metadata.softwareInfo as Array<Record<string, unknown>> | undefined;
    yield buildTrace(
      compact({
        // WareHouse folders are `<Project>_<Org>_<timestamp>`: the natural run id; a loose log is named by its file
        id: /_\d{14}$/.test(folder) ? folder : stem,
        source: { file: file.path, format: "chatdev", index: 0 },
        framework: "chatdev",
        model: seg.model,
        task: seg.task,
        metadata: compact({
          ...seg.metadata,
          segmenter: seg.splitter,
          finalSoftwareInfo: info?.at(-1),
        }),
      }),
      seg.steps,
    );
  },
};
