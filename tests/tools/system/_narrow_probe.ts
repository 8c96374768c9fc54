// Run by system_test.ts under `deno run` without --allow-sys: system_info must
// leave the fenced facts out instead of failing or prompting.
import { systemInfo } from "../../../tools/system/system_info.ts";

console.log(JSON.stringify(await systemInfo.execute({}, undefined as never)));
