// Child process for the kill test: writes `bytes` bytes of `fill` to the
// target through atomicWrite, saying "ready" before it starts and "done" after.
import process from "node:process";
import { atomicWrite } from "../../internal/atomic_write.ts";

const [target, bytes, fill] = process.argv.slice(-3);
const data = new Uint8Array(Number(bytes)).fill(fill.charCodeAt(0));
process.stdout.write("ready\n");
await atomicWrite(target, data);
process.stdout.write("done\n");
