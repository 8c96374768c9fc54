// Child process for the confinement race test, playing the attacker of the
// threat model: it can only write inside the workspace, and in a tight loop
// renames the folder `target` away and puts a symlink to `outside` in its
// place, then puts the folder back. Bursts of swaps alternate with short
// quiet spells (so that operations also succeed now and then, and both
// states are met at every step). Something an operation created at `target`
// while the folder was away is moved aside. It runs until its stdin closes
// (or `seconds` pass), leaves the folder in place and prints how many swaps
// it made.
import fs from "node:fs";
import process from "node:process";

const [target, outside, seconds] = process.argv.slice(-3);
const parked = `${target}.parked`;
const link = `${target}.link`;
fs.rmSync(link, { force: true });
fs.symlinkSync(outside, link);
let stop = false;
process.stdin.on("end", () => (stop = true));
process.stdin.on("close", () => (stop = true));
process.stdin.resume();
const deadline = Date.now() + Number(seconds) * 1000;
let swaps = 0;
let interlopers = 0;

function putBack(): void {
  // Whatever an operation made at `target` while the folder was away goes aside.
  try {
    if (!fs.lstatSync(target).isSymbolicLink()) fs.renameSync(target, `${target}.interloper-${interlopers++}`);
    else fs.renameSync(target, link);
  } catch {
    // nothing there
  }
  try {
    fs.renameSync(parked, target);
  } catch {
    // already in place
  }
}

process.stdout.write("ready\n");
while (!stop && Date.now() < deadline) {
  const burst = 1 + Math.floor(Math.random() * 40);
  for (let i = 0; i < burst; i++) {
    try {
      fs.renameSync(target, parked);
      fs.renameSync(link, target);
      fs.renameSync(target, link);
      fs.renameSync(parked, target);
      swaps++;
    } catch {
      putBack();
    }
  }
  const quiet = Date.now() + Math.random() * 2;
  while (Date.now() < quiet) {
    // busy: the folder stays a folder for a moment
  }
  // Let the stdin events through.
  await new Promise((resolve) => setImmediate(resolve));
}
putBack();
process.stdout.write(`swaps ${swaps}\n`);
