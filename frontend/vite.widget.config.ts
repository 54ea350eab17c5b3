import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { defineConfig, type Plugin } from "vite";
import react from "@vitejs/plugin-react";

// The notebook widget (wiregrad.show): the editor as one ES module written into the Python
// package, so that it ships with it and works offline (no CDN). Its stylesheets travel inside
// it as text for the widget's shadow root (src/api/shadowCss.ts).
const SHADOW = resolve(import.meta.dirname, "src/api/shadowCss.ts");
const PREFIX = "\0wiregrad-css:";

function cssAsText(): Plugin {
  return {
    name: "wiregrad-css-as-text",
    enforce: "pre",
    async resolveId(source, importer) {
      if (!source.endsWith(".css") || source.includes("?")) return null;
      const found = await this.resolve(source, importer, { skipSelf: true });
      // (not ending in .css: Vite's own CSS handling would take it)
      return found ? `${PREFIX}${found.id}.js` : null;
    },
    load(id) {
      if (!id.startsWith(PREFIX)) return null;
      const css = readFileSync(id.slice(PREFIX.length, -".js".length), "utf8");
      return `import { addCss } from ${JSON.stringify(SHADOW)};\naddCss(${JSON.stringify(css)});\n`;
    },
  };
}

export default defineConfig({
  plugins: [cssAsText(), react()],
  define: { "process.env.NODE_ENV": JSON.stringify("production") },
  build: {
    outDir: "../wiregrad/static",
    emptyOutDir: true,
    minify: true,
    chunkSizeWarningLimit: 4000,
    lib: { entry: "src/widget.tsx", formats: ["es"], fileName: () => "widget.js" },
    rollupOptions: { output: { codeSplitting: false } },
  },
});
