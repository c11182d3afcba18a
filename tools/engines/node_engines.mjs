// Poses a glTF file in three.js or Babylon.js itself, in Node (no GPU: both skin on the CPU),
// and compares every vertex with `rigscope export --engine three|babylon` at the same moment.
//
//   node node_engines.mjs three|babylon FILE.gltf|glb CLIP TIME RIGSCOPE.obj [POSED.txt]
//
// ENGINES_DIR names the folder whose node_modules holds three, @babylonjs/core and
// @babylonjs/loaders (npm install three @babylonjs/core @babylonjs/loaders there). Textures are
// left out (there is no DOM to decode images): the file is read, its images, textures and
// texture references dropped, and handed to the engine as one .gltf with its buffers inline.
//
// three.js: GLTFLoader.parse, AnimationMixer.setTime, SkinnedMesh.getVertexPosition (morphs,
// then applyBoneTransform), the mesh's matrixWorld. Babylon.js: NullEngine, the glTF loader,
// AnimationGroup.goToFrame, computeBonesUsingShaders = false (its CPU skinning, applySkin),
// the mesh's world matrix, then back through the loader's __root__ (Babylon is left-handed).
//
// Prints the farthest vertex apart as a fraction of Rigscope's height, vertex by vertex when
// the two list the same number of vertices in the same order, else nearest vertex to nearest
// vertex both ways (as tools/importers/compare.py does).
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [engine, file, clipArg, timeArg, objPath, posedOut] = process.argv.slice(2);
const modules = join(resolve(process.env.ENGINES_DIR ?? "/tmp/node-engines"), "node_modules");
const time = Number(timeArg);
// three's FileLoader reports progress with the DOM's ProgressEvent, which Node lacks.
globalThis.ProgressEvent ??= class ProgressEvent extends Event {
  constructor(type, init = {}) {
    super(type);
    Object.assign(this, init);
  }
};

/// The file as one glTF JSON document: buffers inline as data URIs, no images or textures.
function documentWithoutTextures(path) {
  const bytes = readFileSync(path);
  let json;
  let bin = null;
  if (bytes.readUInt32LE(0) === 0x46546c67) {
    const jsonLength = bytes.readUInt32LE(12);
    json = JSON.parse(bytes.subarray(20, 20 + jsonLength).toString("utf8"));
    const binStart = 20 + jsonLength;
    if (binStart + 8 <= bytes.length) {
      const binLength = bytes.readUInt32LE(binStart);
      bin = bytes.subarray(binStart + 8, binStart + 8 + binLength);
    }
  } else {
    json = JSON.parse(bytes.toString("utf8"));
  }
  for (const [i, buffer] of (json.buffers ?? []).entries()) {
    let data;
    if (buffer.uri === undefined) data = i === 0 ? bin : Buffer.alloc(buffer.byteLength);
    else if (buffer.uri.startsWith("data:")) continue;
    else data = readFileSync(join(dirname(path), decodeURIComponent(buffer.uri)));
    buffer.uri = "data:application/octet-stream;base64," + Buffer.from(data).toString("base64");
  }
  delete json.images;
  delete json.textures;
  delete json.samplers;
  const dropTextures = (value) => {
    if (Array.isArray(value)) value.forEach(dropTextures);
    else if (value && typeof value === "object") {
      for (const key of Object.keys(value)) {
        if (/texture$/i.test(key)) delete value[key];
        else dropTextures(value[key]);
      }
    }
  };
  dropTextures(json.materials ?? []);
  return json;
}

/// The clip's index: a number, or a name.
function clipIndex(clips) {
  const byName = clips.findIndex((c) => c.name === clipArg);
  return byName >= 0 ? byName : Number(clipArg);
}

async function poseInThree(json) {
  const THREE = await import(pathToFileURL(join(modules, "three/build/three.module.js")));
  const { GLTFLoader } = await import(pathToFileURL(join(modules, "three/examples/jsm/loaders/GLTFLoader.js")));
  const gltf = await new GLTFLoader().parseAsync(JSON.stringify(json), "");
  const scene = gltf.scene;
  const clip = gltf.animations[clipIndex(gltf.animations)];
  if (clip) {
    const mixer = new THREE.AnimationMixer(scene);
    // Played once and held: a time equal to the clip's duration is its last key, not its first.
    const action = mixer.clipAction(clip);
    action.setLoop(THREE.LoopOnce);
    action.clampWhenFinished = true;
    action.play();
    mixer.setTime(time);
  }
  scene.updateMatrixWorld(true);
  const out = [];
  const at = new THREE.Vector3();
  // Meshes in the file's order (node, then primitive), as Rigscope lists them.
  const meshes = [];
  scene.traverse((o) => {
    if (o.isMesh) meshes.push(o);
  });
  const order = (m) => {
    const a = gltf.parser.associations.get(m) ?? {};
    const node = gltf.parser.associations.get(m.parent)?.nodes ?? a.nodes ?? 0;
    return [a.nodes ?? node, a.primitives ?? 0];
  };
  meshes.sort((x, y) => {
    const [a, b] = [order(x), order(y)];
    return a[0] - b[0] || a[1] - b[1];
  });
  for (const mesh of meshes) {
    const count = mesh.geometry.attributes.position.count;
    for (let v = 0; v < count; v++) {
      mesh.getVertexPosition(v, at);
      at.applyMatrix4(mesh.matrixWorld);
      out.push([at.x, at.y, at.z]);
    }
  }
  return out;
}

async function poseInBabylon(json) {
  const BABYLON = await import(pathToFileURL(join(modules, "@babylonjs/core/index.js")));
  await import(pathToFileURL(join(modules, "@babylonjs/loaders/glTF/index.js")));
  const engine3d = new BABYLON.NullEngine();
  const scene = new BABYLON.Scene(engine3d);
  // A frame is drawn (to nothing) to run the CPU skinning; drawing needs a camera.
  new BABYLON.FreeCamera("camera", BABYLON.Vector3.Zero(), scene);
  const data = "data:" + JSON.stringify(json);
  const loaded = await BABYLON.SceneLoader.ImportMeshAsync("", "", data, scene, null, ".gltf");
  const groups = loaded.animationGroups;
  groups.forEach((g) => g.stop());
  const group = groups[clipIndex(groups)];
  if (group) {
    group.start(false);
    group.pause();
    // The glTF loader keys time t at frame t · 60 (its animation frame rate).
    group.goToFrame(time * 60);
  }
  const skinned = loaded.meshes.filter((m) => m.getTotalVertices() > 0);
  for (const mesh of skinned) {
    mesh.computeBonesUsingShaders = false;
    // Skinned when drawn: drawn wherever the camera looks.
    mesh.alwaysSelectAsActiveMesh = true;
  }
  scene.render();
  const root = loaded.meshes.find((m) => m.name === "__root__");
  const fromBabylon = root.getWorldMatrix().clone().invert();
  const out = [];
  for (const mesh of skinned) {
    const positions = mesh.getVerticesData(BABYLON.VertexBuffer.PositionKind);
    const world = mesh.getWorldMatrix().multiply(fromBabylon);
    const p = new BABYLON.Vector3();
    for (let v = 0; v < positions.length; v += 3) {
      BABYLON.Vector3.TransformCoordinatesFromFloatsToRef(positions[v], positions[v + 1], positions[v + 2], world, p);
      out.push([p.x, p.y, p.z]);
    }
  }
  return out;
}

function readObj(path) {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.startsWith("v "))
    .map((l) => l.split(/\s+/).slice(1, 4).map(Number));
}

const distance = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

/// The farthest any point of `a` is from its nearest point of `b` (a grid of `cell`).
function farthestFromNearest(a, b, cell) {
  const key = (p) => p.map((c) => Math.floor(c / cell)).join(",");
  const grid = new Map();
  for (const p of b) {
    const k = key(p);
    if (!grid.has(k)) grid.set(k, []);
    grid.get(k).push(p);
  }
  let worst = 0;
  for (const p of a) {
    const [x, y, z] = p.map((c) => Math.floor(c / cell));
    let best = Infinity;
    for (let dx = -1; dx <= 1; dx++)
      for (let dy = -1; dy <= 1; dy++)
        for (let dz = -1; dz <= 1; dz++)
          for (const q of grid.get(`${x + dx},${y + dy},${z + dz}`) ?? []) best = Math.min(best, distance(p, q));
    if (best > cell) for (const q of b) best = Math.min(best, distance(p, q));
    worst = Math.max(worst, best);
  }
  return worst;
}

/// Nearest vertex to nearest vertex, both ways (non-finite vertices left out).
function nearest() {
  const finite = posed.filter((p) => p.every(Number.isFinite));
  const cell = height / 100;
  const worst = Math.max(farthestFromNearest(finite, rigscope, cell), farthestFromNearest(rigscope, finite, cell));
  return `nearest vertices: ${(worst / height).toExponential(3)} of the height (${posed.length} and ${rigscope.length} vertices)`;
}

const json = documentWithoutTextures(file);
const posed = engine === "three" ? await poseInThree(json) : await poseInBabylon(json);
if (posedOut) writeFileSync(posedOut, posed.map((p) => `v ${p.join(" ")}`).join("\n") + "\n");
const rigscope = readObj(objPath);
const ys = rigscope.map((p) => p[1]);
const height = Math.max(...ys) - Math.min(...ys) || 1;
let line;
if (posed.length === rigscope.length) {
  let worst = 0;
  let at = 0;
  // A vertex the engine cannot place (Babylon's CPU skinning of an all-zero row) is counted.
  const lost = [];
  posed.forEach((p, v) => {
    const d = distance(p, rigscope[v]);
    if (!Number.isFinite(d)) lost.push(v);
    else if (d > worst) [worst, at] = [d, v];
  });
  line = `vertex by vertex: ${(worst / height).toExponential(3)} of the height (vertex ${at}; ${posed.length} vertices)`;
  if (lost.length) line += `; not finite in ${engine}: vertices ${lost.join(", ")}`;
  // Far apart by index: the meshes may be listed in another order; nearest vertices tell.
  if (worst / height > 1e-4) line += `; ${nearest()}`;
} else {
  line = nearest();
}
console.log(line);
