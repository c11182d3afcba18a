//! A loaded and drawn rig holds no decoded texture pixels: the GPU has them, and what needs
//! them again (export, diff, Save as… of an FBX) decodes the file's image again. Checked on
//! shared rigs against the file's own images, decoded here from the file without the importer.

use crate::common::{Doc, base64_decode, gpu, shared_folder};
use rigscope::save::new_gltf::png_bytes;
use rigscope::screenshot::render_view;
use rigscope::viewer::Viewer;
use std::path::Path;

/// The RGBA pixels of the image glTF texture `texture` of `file` samples, read from the file
/// (buffer view, data URI or file beside it) and decoded here.
fn file_image(doc: &Doc, dir: &Path, texture: usize) -> image::RgbaImage {
    let t = &doc.json["textures"][texture];
    let source = ["EXT_texture_webp", "KHR_texture_basisu"]
        .iter()
        .find_map(|e| t["extensions"][e]["source"].as_u64())
        .or_else(|| t["source"].as_u64())
        .expect("the texture names an image") as usize;
    let image = &doc.json["images"][source];
    let bytes = match (image["bufferView"].as_u64(), image["uri"].as_str()) {
        (Some(view), _) => {
            let view = &doc.json["bufferViews"][view as usize];
            let buffer = &doc.buffers[view["buffer"].as_u64().unwrap() as usize];
            let offset = view["byteOffset"].as_u64().unwrap_or(0) as usize;
            buffer[offset..offset + view["byteLength"].as_u64().unwrap() as usize].to_vec()
        }
        (None, Some(uri)) if uri.starts_with("data:") => base64_decode(uri.split_once(";base64,").unwrap().1),
        (None, Some(uri)) => std::fs::read(dir.join(uri)).unwrap(),
        (None, None) => panic!("image {source} has no bytes"),
    };
    image::load_from_memory(&bytes).unwrap().to_rgba8()
}

#[test]
fn drawn_rigs_keep_no_pixels_and_give_the_files_pixels_back() {
    let (Some(rigs), Some(corpus)) = (shared_folder("rigs"), shared_folder("corpus/rigs")) else {
        return;
    };
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let files = [
        rigs.join("Fox.glb"),
        corpus.join("CesiumMan.gltf"),
        corpus.join("Soldier.glb"),
        corpus.join("articuno/scene.gltf"),
        corpus.join("LittlestTokyo.glb"),
    ];
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy();
        let rig = rigscope::rig::load_file(file).unwrap_or_else(|e| panic!("{name}: {e}"));
        let doc = Doc::open(file);
        assert_eq!(rig.textures.len(), doc.array("textures").len(), "{name}");
        assert!(!rig.textures.is_empty(), "{name} has textures");
        let mut viewer = Viewer::new(rig, Some(file.clone()));
        render_view(&gpu, &mut viewer, 64, 48).unwrap_or_else(|e| panic!("{name}: {e}"));
        for (i, texture) in viewer.rig().textures.iter().enumerate() {
            assert!(
                !texture.holds_pixels(),
                "{name}: texture {i} still holds its pixels after the upload"
            );
            let want = file_image(&doc, file.parent().unwrap(), i);
            assert_eq!(
                (texture.width, texture.height),
                want.dimensions(),
                "{name}: texture {i}"
            );
            assert!(
                *texture.rgba8() == *want.as_raw(),
                "{name}: texture {i}'s pixels differ from the file's"
            );
            // What export and Save as… of an FBX write: PNG, which keeps every pixel.
            let png = png_bytes(texture).unwrap_or_else(|| panic!("{name}: texture {i} wrote no PNG"));
            let written = image::load_from_memory(&png).unwrap().to_rgba8();
            assert!(
                written == want,
                "{name}: texture {i}'s written pixels differ from the file's"
            );
            assert!(
                !texture.holds_pixels(),
                "{name}: texture {i} kept the pixels it was read for"
            );
        }
    }
}
