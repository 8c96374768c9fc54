/**
 * The `browser_screenshot` tool.
 *
 * @module
 */

import * as v from "valibot";
import { ToolError } from "@toolfence/core";
import { MAX_IMAGE_BYTES } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import { decodeImage, encodeWithin, fittedSize, headerSize, resizeImage } from "../_shared/fs_request_image_codec.ts";
import { MAX_IMAGE_SIDE, MAX_SOURCE_PIXELS, type RequestImageResult } from "../fs/request_image.ts";
import { browserOf } from "./_browser_session.ts";
import type { Browsers } from "./browsers.ts";
import { BROWSER_FLAGS, locate } from "./_page.ts";
import { SCREENSHOT_OUTPUT } from "./_outputs.ts";
import type { Page } from "playwright-core";

/** The tallest full-page screenshot, in CSS pixels; a longer page is cut there. */
export const MAX_FULL_PAGE_HEIGHT = 10_000;

/** Arguments of `browser_screenshot`. */
export interface BrowserScreenshotArgs {
  /** Only this element (a reference from `browser_snapshot`). */
  ref?: string;
  /** The whole page instead of the viewport. */
  full_page?: boolean;
  /** `png` (default) or `jpeg`. */
  format?: "png" | "jpeg";
}

/** What `browser_screenshot` returns (`request_image`'s fields, with the page's URL for its path). */
export interface BrowserScreenshotResult extends Omit<RequestImageResult, "path" | "media_type"> {
  /** The page shown. */
  url: string;
  /** Format of the image handed over. */
  media_type: "image/png" | "image/jpeg";
}

/**
 * `browser_screenshot(ref?, full_page?, format?)`: shows the model the current
 * page (the viewport, the whole page, or one element) as a PNG or JPEG whose
 * long side is at most 1,000 px and whose size is at most `MAX_IMAGE_BYTES`
 * (3.75 MiB; JPEG when a PNG would be more), delivered after the batch's
 * results exactly like `request_image`, with a note giving its final and
 * original sizes. Requires the model capability `vision`.
 *
 * Requires `--allow-run`, `--allow-net`, `--allow-env`, `--allow-sys=homedir`, `--allow-read` (workspace, temp
 * folder, the browser's folder) and `--allow-write` (workspace, temp folder).
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { Browsers } from "@toolfence/tools";
 * import { browserScreenshotTool } from "@toolfence/tools";
 * const box = new ToolBox().register(browserScreenshotTool(new Browsers()));
 * const session = new Session({ workspace: Deno.cwd(), capabilities: ["vision"] });
 * console.log((await box.call(session, "browser_screenshot", {})).output, session.takeDeferredImages().length);
 * await session.close();
 * ```
 */
export function browserScreenshotTool(browsers: Browsers): Tool<BrowserScreenshotArgs> {
  return tool({
    name: "browser_screenshot",
    sessionState: true,
    description: "Look at the current page: the viewport, the whole page (full_page) or one element (ref from " +
      "browser_snapshot). The image is shown to you right after the tool results, scaled so its long side is at " +
      "most 1000 px; the result says its final and original sizes. " + BROWSER_FLAGS,
    input: v.object({
      ref: v.optional(v.pipe(v.string(), v.description("Element reference from browser_snapshot."))),
      full_page: v.optional(v.pipe(v.boolean(), v.description("The whole scrollable page."))),
      format: v.optional(v.pipe(v.picklist(["png", "jpeg"]), v.description("Image format (png)."))),
    }),
    output: SCREENSHOT_OUTPUT,
    requires: ["vision"],
    concurrencySafe: false,
    openWorld: true,
    effects: ["reads"],
    needs: browsers.needs,
    async run({ ref, full_page, format = "png" }, ctx): Promise<BrowserScreenshotResult> {
      const browser = browserOf(browsers, ctx.session);
      let media: "image/png" | "image/jpeg" = format === "jpeg" ? "image/jpeg" : "image/png";
      const { bytes, url, cut } = await browser.withPage(ctx.signal, async (page) => {
        const type = format;
        let shot: Uint8Array;
        let cut = false;
        // Every capture is clipped to at most the viewport's width and MAX_FULL_PAGE_HEIGHT: the page's own numbers
        // (scrollHeight, which its script can redefine) never decide how many pixels the browser renders.
        const width = page.viewportSize()?.width ?? 1000;
        if (ref) {
          const box = await (await locate(page, ref)).boundingBox();
          if (!box || box.width < 1 || box.height < 1) {
            throw new ToolError(`The element ${ref} is not shown (it has no size)`, {
              code: "ref_not_found",
              kind: "semantic",
              recoveryHint: "Take a screenshot of the page, or of another element.",
            });
          }
          const page_ = await page.evaluate("[window.scrollX, window.scrollY]").catch(() => [0, 0]) as number[];
          const [sx, sy] = page_.map((n) => (Number.isFinite(n) ? n : 0));
          cut = box.width > width || box.height > MAX_FULL_PAGE_HEIGHT;
          shot = await page.screenshot({
            type,
            fullPage: true,
            animations: "disabled",
            clip: {
              x: box.x + sx,
              y: box.y + sy,
              width: Math.min(box.width, width),
              height: Math.min(box.height, MAX_FULL_PAGE_HEIGHT),
            },
          });
        } else if (full_page) {
          cut = (await contentHeight(page)) > MAX_FULL_PAGE_HEIGHT;
          shot = await page.screenshot({
            type,
            fullPage: true,
            clip: { x: 0, y: 0, width, height: MAX_FULL_PAGE_HEIGHT },
          });
        } else {
          shot = await page.screenshot({ type });
        }
        return { bytes: new Uint8Array(shot), url: page.url(), cut };
      });
      const original = headerSize(bytes, media);
      if (!original) {
        throw new ToolError("The browser returned an unreadable screenshot", { code: "invalid_image" });
      }
      const target = fittedSize(original, MAX_IMAGE_SIDE);
      let out: Uint8Array = bytes;
      let final = original;
      const resized = target.width !== original.width || target.height !== original.height ||
        bytes.byteLength > MAX_IMAGE_BYTES;
      if (resized) {
        if (original.width * original.height > MAX_SOURCE_PIXELS) {
          throw new ToolError(`The screenshot has ${original.width}×${original.height} px, too many to scale`, {
            code: "image_too_large",
            recoveryHint: "Take the viewport or one element instead of the full page.",
          });
        }
        ctx.signal.throwIfAborted();
        const image = resizeImage(decodeImage(bytes, media), target.width, target.height);
        // A PNG over the size of a deferred image is sent as JPEG (the result's media_type says which).
        ({ bytes: out, type: media } = encodeWithin(image, media));
        final = { width: image.width, height: image.height };
      }
      const name = `screenshot of ${url}${cut ? ` (the top ${MAX_FULL_PAGE_HEIGHT} px of the page)` : ""}`;
      const note = resized
        ? `${name}: ${final.width}×${final.height} px (original ${original.width}×${original.height} px)`
        : `${name}: ${final.width}×${final.height} px (original size)`;
      await ctx.deferImage(out, note);
      return {
        url,
        media_type: media,
        width: final.width,
        height: final.height,
        original_width: original.width,
        original_height: original.height,
        resized,
        note,
      };
    },
  });
}

/** The page's content height as the browser lays it out (not as its script may claim); 0 when unknown. */
async function contentHeight(page: Page): Promise<number> {
  try {
    const cdp = await page.context().newCDPSession(page);
    try {
      const metrics = await cdp.send("Page.getLayoutMetrics");
      return metrics.cssContentSize?.height ?? metrics.contentSize.height;
    } finally {
      await cdp.detach().catch(() => {});
    }
  } catch {
    return 0;
  }
}
