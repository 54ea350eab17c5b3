// The page's dialogs that the toolbar and its More menu open and App shows (one at a time).
export type DialogName = "templates" | "open" | "export" | "import" | "help" | "classroom" | null;
