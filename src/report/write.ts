import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Taxonomy } from "../taxonomy/index.js";
import type { Diagnosis } from "../trace/index.js";
import { groupsCsv, interventionsCsv, tracesCsv } from "./csv.js";
import { buildReportData } from "./data.js";
import { renderHtml, type HtmlOptions } from "./html.js";
import { renderMarkdown } from "./markdown.js";
import type { RunSummary } from "./summary.js";

export interface ReportPaths {
  html: string;
  markdown: string;
  traces_csv: string;
  groups_csv: string;
  interventions_csv: string;
}

/** Writes report.html, report.md, traces.csv, groups.csv and interventions.csv into `outDir` (beside summary.json). */
export function writeReports(
  outDir: string,
  summary: RunSummary,
  diagnoses: readonly Diagnosis[],
  opts: HtmlOptions & { taxonomy?: Taxonomy } = {},
): ReportPaths {
  const data = buildReportData(summary, diagnoses, opts.taxonomy);
  const paths: ReportPaths = {
    html: join(outDir, "report.html"),
    markdown: join(outDir, "report.md"),
    traces_csv: join(outDir, "traces.csv"),
    groups_csv: join(outDir, "groups.csv"),
    interventions_csv: join(outDir, "interventions.csv"),
  };
  writeFileSync(paths.html, renderHtml(data, opts));
  writeFileSync(paths.markdown, renderMarkdown(data));
  writeFileSync(paths.traces_csv, tracesCsv(data));
  writeFileSync(paths.groups_csv, groupsCsv(summary));
  writeFileSync(paths.interventions_csv, interventionsCsv(summary));
  return paths;
}
