import type { TraceDraft } from "../../trace/index.js";
import { compact } from "../../trace/index.js";
import type { MappedSpans } from "./steps.js";

/**
 * The trace draft every OTel-family adapter starts from: model (normalised, raw kept when it differs), framework,
 * task text, the outcome its root-span evaluation events state, and what the mapper merged or deduplicated, so
 * nothing is dropped silently.
 */
export function spanTraceDraft(
  mapped: MappedSpans,
  base: { id: string; file: string; format: string; index: number; line?: number; pointer?: string },
): TraceDraft {
  const metadata: Record<string, unknown> = { spanCount: mapped.spanCount };
  if (mapped.modelRaw && mapped.modelRaw !== mapped.model) metadata.modelRaw = mapped.modelRaw;
  if (mapped.models.length > 1) metadata.models = mapped.models;
  if (mapped.mirrors.length) metadata.mirrorSpans = mapped.mirrors;
  if (mapped.duplicateSpans.length) metadata.duplicateSpans = mapped.duplicateSpans;
  return compact({
    id: base.id,
    source: compact({ file: base.file, format: base.format, index: base.index, line: base.line, pointer: base.pointer }),
    model: mapped.model,
    framework: mapped.framework,
    task: mapped.taskText !== undefined ? { text: mapped.taskText } : undefined,
    outcome: mapped.outcome,
    metadata,
  });
}
