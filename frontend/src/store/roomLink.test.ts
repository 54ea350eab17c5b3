import { describe, expect, it } from "vitest";
import { roomFromLink } from "./room";

function at(search: string) {
  const replaced: string[] = [];
  const loc = { search, pathname: "/", hash: "" } as Location;
  const hist = { replaceState: (_s: unknown, _t: string, url: string) => replaced.push(url) } as unknown as History;
  return { code: roomFromLink(loc, hist), replaced };
}

describe("room links", () => {
  it("reads ?room= as typed and takes it out of the address bar", () => {
    expect(at("?room=2tb2zs")).toEqual({ code: "2TB2ZS", replaced: ["/"] });
    expect(at("?room=2TB2ZS&template=quadratic")).toEqual({ code: "2TB2ZS", replaced: ["/?template=quadratic"] });
  });

  it("leaves a page without a room link alone", () => {
    expect(at("?template=quadratic")).toEqual({ code: null, replaced: [] });
  });

  it("hands a malformed code on, for the page to say what is wrong with it", () => {
    expect(at("?room=%20abc%20").code).toBe("ABC");
  });
});
