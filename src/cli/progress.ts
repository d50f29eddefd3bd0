import cliProgress from "cli-progress";

/** A progress bar on stderr when it is a terminal; silent otherwise (pipes, CI, --json). */
export function fileProgress(enabled: boolean) {
  if (!enabled || !process.stderr.isTTY) return { update: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format: "{bar} {value}/{total} files | {file}", hideCursor: true, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(path: string, index: number, total: number) {
      if (!started) {
        bar.start(total, 0, { file: "" });
        started = true;
      }
      bar.update(index, { file: path.length > 50 ? `…${path.slice(-49)}` : path });
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
