/**
 * `benefits-sync --help | head -3`: when the reader of our stdout (or stderr) goes away, the rest of
 * the output has nowhere to go. A filter on a Unix pipe ends quietly then; without this, node
 * raises the write's EPIPE as an unhandled 'error' event and prints a stack trace.
 */

/**
 * Drop what is written to `stream` once its reader is gone; any other stream error still throws.
 * The command itself carries on, so a run that was printing its summary still records its end.
 */
export function quietWhenReaderLeaves(stream: NodeJS.WriteStream): void {
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE" || err.code === "ERR_STREAM_DESTROYED") return;
    throw err;
  });
}
