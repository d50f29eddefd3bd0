import { TraceSchema, TRACE_SCHEMA_VERSION } from "../../trace/index.js";
import { isObj } from "../common/index.js";
import type { FormatAdapter } from "../types.js";

/** faultline's own canonical JSONL (one Trace per line), as written by `faultline convert`. */
export const canonical: FormatAdapter = {
  id: "faultline",
  title: "faultline canonical trace JSONL",
  detect: (s) => s.records.length > 0 && isObj(s.records[0]) && s.records[0].schema === TRACE_SCHEMA_VERSION,
  async *read(file, ctx) {
    for await (const r of file.records()) {
      const t = TraceSchema.safeParse(r.value);
      if (!t.success) {
        const i = t.error.issues[0];
        ctx.report({ line: r.line, level: "error", message: `not a canonical trace: ${i?.path.join(".")}: ${i?.message}`, skipped: "trace" });
        continue;
      }
      yield t.data;
    }
  },
};
