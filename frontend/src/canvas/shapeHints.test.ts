import { describe, expect, it } from "vitest";
import { flattenHint, matmulHint } from "./shapeHints";

const names = { input: "x", other: "W" };
const msg = (a: number, b: number, c: number, d: number) =>
  `mat1 and mat2 shapes cannot be multiplied (${a}x${b} and ${c}x${d})`;

describe("matmul hints", () => {
  it("offers W.T when the transpose fits", () => {
    expect(matmulHint(msg(4, 3, 5, 3), names)).toBe("the inner sizes differ (3 and 5): transpose W? (x @ W.T is 4x5)");
  });

  it("offers swapping the inputs when that fits", () => {
    // 2x3 @ 4x2: W @ x is (4x2)(2x3)
    expect(matmulHint(msg(2, 3, 4, 2), names)).toBe("the inner sizes differ (3 and 4): swap the inputs? (W @ x is 4x3)");
  });

  it("offers x.T when that is what fits", () => {
    // 2x3 @ 2x5: x.T @ W is (3x2)(2x5)
    expect(matmulHint(msg(2, 3, 2, 5), names)).toBe("the inner sizes differ (3 and 2): transpose x? (x.T @ W is 3x5)");
  });

  it("says what must match when nothing simple fits, and nothing for other messages", () => {
    expect(matmulHint(msg(2, 3, 4, 5), names)).toBe("the inner sizes differ (3 and 4): x's last size must be W's first");
    expect(matmulHint("input 'other' of matmul is not connected", names)).toBeNull();
  });
});

describe("the flatten hint", () => {
  it("warns of a flatten from dim 0 of a batch into a linear layer", () => {
    expect(flattenHint({}, [1797, 16, 2, 2], true)).toBe(
      "flattens dim 0 (size 1797) too: the linear layer gets 115,008 features. " +
        "Flatten from dim 1? (start_dim=1: 1797 rows of 64)",
    );
    expect(flattenHint({ start_dim: 0 }, [4, 3], true)).not.toBeNull();
  });

  it("is quiet for start_dim=1, a 1-D input, an unknown shape, or no linear after it", () => {
    expect(flattenHint({ start_dim: 1 }, [1797, 16, 2, 2], true)).toBeNull();
    expect(flattenHint({}, [64], true)).toBeNull();
    expect(flattenHint({}, undefined, true)).toBeNull();
    expect(flattenHint({}, [4, 3], false)).toBeNull();
  });
});
