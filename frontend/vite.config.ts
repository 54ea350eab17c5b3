import { defineConfig } from "vitest/config";
import react from "@vitejs/plugin-react";

// `vite` (dev) proxies the API and Socket.IO to a `wiregrad serve` on :5000;
// `vite build` writes dist/, which the Flask server serves.
export default defineConfig({
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 2000 },
  server: {
    proxy: {
      "/api": "http://127.0.0.1:5000",
      "/socket.io": { target: "http://127.0.0.1:5000", ws: true },
    },
  },
  test: { environment: "node", include: ["src/**/*.test.ts"] },
});
