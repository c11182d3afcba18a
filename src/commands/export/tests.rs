use super::*;

#[test]
fn the_extension_names_the_format() {
    assert_eq!(
        ExportFormat::of_path(Path::new("a/b.obj")).ok(),
        Some(ExportFormat::Obj)
    );
    assert_eq!(ExportFormat::of_path(Path::new("b.GLB")).ok(), Some(ExportFormat::Glb));
    for refused in ["b.gltf", "b.stl", "b", "obj"] {
        let error = ExportFormat::of_path(Path::new(refused)).unwrap_err();
        assert!(matches!(error, ExportError::Extension(_)), "{refused}: {error:?}");
    }
}

#[test]
fn names_are_made_unique_and_obj_words() {
    let mut taken = HashSet::new();
    assert_eq!(unique_name(&mut taken, "a".into()), "a");
    assert_eq!(unique_name(&mut taken, "a".into()), "a_2");
    assert_eq!(unique_name(&mut taken, "a_2".into()), "a_2_2");
    assert_eq!(obj_word("Body Mesh #1"), "Body_Mesh__1");
    assert_eq!(obj_word(""), "unnamed");
}

#[test]
fn times_outside_the_clip_are_refused() {
    let demo = crate::rig::load_slice(crate::rig::demo::DEMO_GLB, None, "demo.glb").unwrap();
    let duration = demo.clips[0].duration;
    assert!(check_time(&demo, Some(0), 0.0).is_ok() && check_time(&demo, Some(0), duration).is_ok());
    for time in [-0.01, duration + 0.01, f32::NAN, f32::INFINITY] {
        assert!(check_time(&demo, Some(0), time).is_err(), "{time}");
    }
    assert!(check_time(&demo, None, 0.0).is_ok());
    assert!(matches!(
        check_time(&demo, None, 0.5),
        Err(ExportError::TimeWithoutClip(..))
    ));
}
