import { encodeToKTX2 } from "ktx2-encoder";
import fs from "fs";
const w = 8, h = 8;
const px = new Uint8Array(w * h * 4);
for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
  const i = (y * w + x) * 4;
  const q = (y < 4 ? 0 : 2) + (x < 4 ? 0 : 1);
  const c = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255]][q];
  px.set([...c, 255], i);
}
for (const uastc of [true, false]) {
  const out = await encodeToKTX2(new Uint8Array([1]), {
    isUASTC: uastc, generateMipmap: false, isKTX2File: true,
    imageDecoder: async () => ({ data: px, width: w, height: h }),
  });
  fs.writeFileSync(uastc ? "quadrants-uastc.ktx2" : "quadrants-etc1s.ktx2", out);
  console.log(uastc, out.length);
}
