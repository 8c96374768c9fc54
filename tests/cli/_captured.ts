// A command of the command line run in-process with what it writes captured. Only text is captured: under
// `node --test` the runner's own messages go through the same process.stdout as bytes, and are passed on.
import process from "node:process";

type Write = typeof process.stdout.write;

function capturing(stream: NodeJS.WriteStream, into: string[]): Write {
  const write = stream.write;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === "string") return into.push(chunk) > 0;
    return (write as (...args: unknown[]) => boolean).call(stream, chunk, ...rest);
  }) as Write;
  return write;
}

/** Runs `command` with its stdout and stderr text captured; returns its exit code and that text. */
export async function captured(command: () => Promise<number>): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const [write, writeErr] = [capturing(process.stdout, out), capturing(process.stderr, err)];
  try {
    const code = await command();
    return { code, out: out.join(""), err: err.join("") };
  } finally {
    process.stdout.write = write;
    process.stderr.write = writeErr;
  }
}
