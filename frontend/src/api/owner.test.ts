// @vitest-environment jsdom
import { beforeEach, describe, expect, it } from "vitest";
import { authHeaders, captureToken, ownerKey, shareLink, teacherToken } from "./owner";

describe("owner key and teacher token", () => {
  beforeEach(() => {
    localStorage.clear();
    sessionStorage.clear();
  });

  it("makes one owner key of at least 128 bits and keeps it", () => {
    const key = ownerKey();
    expect(key).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(ownerKey()).toBe(key);
    expect(localStorage.getItem("wiregrad.owner")).toBe(key);
    expect(authHeaders()["X-Wiregrad-Owner"]).toBe(key);
  });

  it("takes the token out of the address and sends it", () => {
    history.replaceState(null, "", "/?token=abcdefghijklmnopqrstuvwxyz&template=mlp-xor");
    captureToken();
    expect(location.search).toBe("?template=mlp-xor");
    expect(teacherToken()).toBe("abcdefghijklmnopqrstuvwxyz");
    expect(authHeaders().Authorization).toBe("Bearer abcdefghijklmnopqrstuvwxyz");
  });

  it("writes share links", () => {
    expect(shareLink("g1", "s-_x")).toBe(`${location.origin}/?graph=g1&share=s-_x`);
  });
});
