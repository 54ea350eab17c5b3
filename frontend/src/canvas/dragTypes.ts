// What a drag from the palette carries onto the canvas (a plain module: the palette sets these
// types and the canvas reads them, and neither imports the other for it).

/** An op of the registry, by name. */
export const DRAG_TYPE = "application/x-wiregrad-op";
/** A module of the document, by its definition's name. */
export const MODULE_DRAG_TYPE = "application/x-wiregrad-module";
