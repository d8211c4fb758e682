/** Set by commands that keep the process running after their action returns (serve). */
export const lifetime = { keepAlive: false };

/** Streams whose last write was refused by a full pipe, each with its wait for "drain". */
const draining = new Map<NodeJS.WriteStream, Promise<void>>();

/**
 * Notes when a write to `stream` fills the pipe, so exitWhenFlushed can wait for it. Bun (1.4.4) keeps
 * `writableNeedDrain` false and `writableLength` 0 for a pipe whose reader is behind, so the return
 * value of `write` is the only sign; every write in the CLI goes through the stream's `write`.
 */
function watch(stream: NodeJS.WriteStream): void {
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  stream.write = ((...args: unknown[]) => {
    const ok = write(...args);
    if (!ok && !draining.has(stream))
      draining.set(
        stream,
        new Promise<void>((resolve) => {
          const done = () => {
            draining.delete(stream);
            resolve();
          };
          stream.once("drain", done);
          stream.once("error", done);
          stream.once("close", done);
        }),
      );
    return ok;
  }) as typeof stream.write;
}

/** Called once at start-up by the CLI's entry point. */
export function watchOutput(): void {
  watch(process.stdout);
  watch(process.stderr);
}

/**
 * Exits once stdout and stderr are written out. `process.exit` alone drops what a pipe has not taken
 * yet: `wsync read --limit 5000 | less` printed only the first 64 KiB.
 */
export async function exitWhenFlushed(code: number): Promise<never> {
  while (draining.size > 0) await Promise.all(draining.values());
  process.exit(code);
}
