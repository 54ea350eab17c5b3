import { describe, expect, it } from "vitest";
import { parseLiteral } from "./literals";
import { parseNumber, parseTensor } from "./params";

const good = (value: unknown) => ({ ok: true, value });
const bad = (error: string) => ({ ok: false, error });

describe("PyTorch literals in number fields", () => {
  it("read the tutorials' numbers", () => {
    expect(parseTensor("2.")).toEqual(good(2));
    expect(parseTensor("-.5")).toEqual(good(-0.5));
    expect(parseTensor("1e-3")).toEqual(good(0.001));
    expect(parseTensor("+3")).toEqual(good(3));
    expect(parseTensor("[2., 3.]")).toEqual(good([2, 3]));
    expect(parseTensor("[[1., 2.], [3., 4.]]")).toEqual(good([[1, 2], [3, 4]]));
    expect(parseTensor("((1, 2), (3, 4))")).toEqual(good([[1, 2], [3, 4]]));
    expect(parseTensor("[1, 2,]")).toEqual(good([1, 2]));
    expect(parseTensor("[True, False]")).toEqual(good([true, false]));
    expect(parseTensor("[[[1], [2]]]")).toEqual(good([[[1], [2]]]));
  });

  it("unwrap pasted torch.tensor(...) calls", () => {
    expect(parseTensor("torch.tensor([2., 3.])")).toEqual(good([2, 3]));
    expect(parseTensor("tensor(25.)")).toEqual(good(25));
    expect(parseTensor(" torch.tensor([[1., -2.],\n [3., 4.]]) ")).toEqual(good([[1, -2], [3, 4]]));
  });

  it("say exactly what is wrong when they refuse", () => {
    expect(parseLiteral("[2., 3.")).toEqual(bad("character 8: '[' opened at character 1 is never closed: add ']'"));
    expect(parseLiteral("[2 3]")).toEqual(bad("character 4: a ',' is missing before '3'"));
    expect(parseLiteral("[2, abc]")).toEqual(
      bad("character 5: 'abc' is not a number: write numbers or nested lists such as [[1, 2], [3, 4]]"),
    );
    expect(parseLiteral("[1.2.3]")).toEqual(bad("character 2: '1.2.3' is not a number"));
    expect(parseLiteral("2x")).toEqual(bad("character 1: '2x' is not a number"));
    expect(parseLiteral("1, 2")).toEqual(bad("character 2: several values must be inside brackets: [1, 2]"));
    expect(parseLiteral("[1, 2]]")).toEqual(bad("character 7: unexpected ']' after the value"));
    expect(parseLiteral("[1, ; 2]")).toEqual(
      bad("character 5: ';' cannot appear in a tensor (write numbers, commas and brackets)"),
    );
    expect(parseLiteral("[, 1]")).toEqual(bad("character 2: a value is missing before this ','"));
    expect(parseLiteral("torch.tensor([1.], requires_grad=True)")).toEqual(
      bad("character 20: requires_grad=… is not part of the values: set it with its own field (requires_grad, dtype)"),
    );
    expect(parseLiteral("[nan, 1]")).toMatchObject({ ok: false, error: expect.stringContaining("finite") });
    expect(parseTensor("[[1, 2], [3]]")).toEqual(bad("expected sequence of length 2 at dim 1 (got 1)"));
  });

  it("let a single number field take the same literals", () => {
    expect(parseNumber("2.")).toEqual(good(2));
    expect(parseNumber("-.5")).toEqual(good(-0.5));
    expect(parseNumber("torch.tensor(0.1)")).toEqual(good(0.1));
    expect(parseNumber("[1, 2]")).toEqual(bad("'[1, 2]' holds several values: this field takes one number"));
    expect(parseNumber("abc")).toEqual(bad("'abc' is not a number"));
  });
});
