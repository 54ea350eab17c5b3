// What an upload found that keeps it from opening at once (doc/files.ts's `uploadDocument`),
// shown by panels/dialogs/UploadReport.tsx until the person closes it or opens the file anyway.
import { create } from "zustand";
import type { UploadCheck } from "../doc/uploadCheck";

export type UploadReport = { file: string; check: Exclude<UploadCheck, { kind: "ok" }> };

export const useUploadReport = create<{
  report: UploadReport | null;
  show(report: UploadReport): void;
  close(): void;
}>((set) => ({
  report: null,
  show: (report) => set({ report }),
  close: () => set({ report: null }),
}));
