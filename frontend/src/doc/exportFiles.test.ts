import { describe, expect, it } from "vitest";
import { strFromU8 } from "fflate";
import { base64Bytes, bytesBase64, exportDownload, zipEntries } from "./exportFiles";

describe("exportDownload", () => {
  it("is the script alone where the export has no weights", () => {
    const got = exportDownload("lenet_torch", { code: "print(1)\n" });
    expect(got.name).toBe("lenet_torch.py");
    expect(got.type).toBe("text/x-python");
    expect(strFromU8(got.data)).toBe("print(1)\n");
  });

  it("zips the script with the weights file of its name where there are weights", () => {
    const weights = new Uint8Array([8, 0, 0, 0, 0, 0, 0, 0, 123, 125, 32, 32, 32, 32, 32, 32, 255, 0]);
    const got = exportDownload("lenet_torch", { code: "state_dict = 1\n", weights: bytesBase64(weights) });
    expect(got.name).toBe("lenet_torch.zip");
    expect(got.type).toBe("application/zip");
    const files = zipEntries(got.data);
    expect(Object.keys(files).sort()).toEqual(["lenet_torch.py", "lenet_torch.safetensors"]);
    expect(strFromU8(files["lenet_torch.py"])).toBe("state_dict = 1\n");
    expect(Array.from(files["lenet_torch.safetensors"])).toEqual(Array.from(weights));
  });

  it("round-trips bytes through base64, long ones too", () => {
    const bytes = new Uint8Array(100_000).map((_, i) => (i * 7) % 256);
    expect(Array.from(base64Bytes(bytesBase64(bytes)))).toEqual(Array.from(bytes));
  });
});
