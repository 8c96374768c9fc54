// Run by system_info_test.ts under `deno run` without --allow-sys: system_info must
// leave the fenced facts out instead of failing or prompting.
import { systemInfoTool } from "../../../tools/system/system_info.ts";

console.log(JSON.stringify(await systemInfoTool.execute({}, undefined as never)));
