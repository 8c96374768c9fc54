import { checkCommand } from "./policy/shell/check_command.ts";
for (const line of Deno.args) {
  const c = await checkCommand(line, { sandbox: { available: true } });
  const d = await checkCommand(line, { sandbox: { available: false } });
  console.log(c.verdict.padEnd(5), d.verdict.padEnd(5), line, "  ::", c.reasons[0] ?? "");
}
