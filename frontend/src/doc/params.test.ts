// Numbers past float64's range: JavaScript reads them as ±Infinity and JSON sends that as
// null, so they are refused where they are typed, naming the literal.
import { describe, expect, it } from "vitest";
import { parseNumber, parseParam, parseTensor, tooLarge } from "./params";

const spec = (type: string, extra = {}) => ({ name: "p", type, default: null, doc: "", ...extra }) as never;
const refused = (error: string) => ({ ok: false, error });

describe("numbers too large for a float", () => {
  it("refuses them in a tensor value, alone or inside lists", () => {
    expect(parseTensor("1e400")).toEqual(refused("1e400 is too large: values must be finite numbers"));
    expect(parseTensor("-1e999")).toEqual(refused("-1e999 is too large: values must be finite numbers"));
    expect(parseTensor("[2, 1e999]")).toEqual(refused("1e999 is too large: values must be finite numbers"));
    expect(parseTensor("[[1, 2], [3, 1.5E+309]]")).toEqual(
      refused("1.5E+309 is too large: values must be finite numbers"),
    );
    expect(parseParam(spec("tensor"), " 1e400 ")).toEqual(refused("1e400 is too large: values must be finite numbers"));
  });

  it("keeps what is within range, and what underflows to zero", () => {
    expect(parseTensor("1e308")).toEqual({ ok: true, value: 1e308 });
    expect(parseTensor("[-1.7976931348623157e308, 2]")).toEqual({ ok: true, value: [-Number.MAX_VALUE, 2] });
    expect(parseTensor("1e-400")).toEqual({ ok: true, value: 0 });
    expect(parseTensor("[[1, 2], [3, 4]]")).toEqual({ ok: true, value: [[1, 2], [3, 4]] });
    // what is never sent as a value stays refused for its own reason
    expect(parseTensor("Infinity")).toMatchObject({ ok: false, error: expect.stringContaining("nested lists") });
    expect(parseTensor("NaN")).toMatchObject({ ok: false });
  });

  it("refuses them in float params and grid cells", () => {
    expect(parseParam(spec("float"), "1e400")).toEqual(refused("1e400 is too large: values must be finite numbers"));
    expect(parseParam(spec("float", { min: 0 }), "-1e999")).toEqual(
      refused("-1e999 is too large: values must be finite numbers"),
    );
    expect(parseParam(spec("float"), "Infinity")).toEqual(
      refused("'Infinity' is not a number: values must be finite numbers"),
    );
    expect(parseParam(spec("float"), "2.5e3")).toEqual({ ok: true, value: 2500 });
    expect(parseNumber("1e400")).toEqual(refused("1e400 is too large: values must be finite numbers"));
    expect(parseNumber("-3")).toEqual({ ok: true, value: -3 });
    expect(parseNumber("x")).toEqual(refused("'x' is not a number"));
    expect(parseNumber(" ")).toEqual(refused("a number is required"));
  });

  it("refuses whole numbers past the exact range in ints and shapes", () => {
    const huge = "1" + "0".repeat(400);
    expect(parseParam(spec("int"), huge)).toEqual(
      refused(`${huge} is too large: whole numbers must be within ±9007199254740991`),
    );
    expect(parseParam(spec("int"), "9007199254740993")).toMatchObject({ ok: false });
    expect(parseParam(spec("int"), "-9007199254740991")).toEqual({ ok: true, value: -9007199254740991 });
    expect(parseParam(spec("shape"), `2, ${huge}`)).toEqual(
      refused(`shape: ${huge} is too large: whole numbers must be within ±9007199254740991`),
    );
  });

  it("says nothing of a finite number", () => {
    expect(tooLarge("5", 5)).toBeNull();
    expect(tooLarge("1e999", Infinity)).toBe("1e999 is too large: values must be finite numbers");
  });
});
