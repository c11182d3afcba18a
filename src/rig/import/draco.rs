//! KHR_draco_mesh_compression: primitives whose indices and attributes are one Draco stream.
//! Each is decoded once at load and written, in the component type its glTF accessor declares,
//! into [`Buffers::decoded_accessors`], so that the rest of the import reads them like any
//! accessor (attributes the stream does not hold, such as morph targets, stay ordinary
//! accessors).
//!
//! Decoding uses `draco-core`, a pure Rust decoder of the Draco bitstream (no C++ build on the
//! 2-core machines, and its decode limits bound what a hostile stream can make it allocate).

use super::accessor::{Budget, Buffers, ReadError};
use crate::rig::{Codec, RigError};
use draco_core::{DataType as DracoType, DecodeLimits, DecoderBuffer, FaceIndex, MeshDecoder, PointAttribute};
use gltf::accessor::DataType;

/// Decodes every Draco-compressed primitive of the document, charging the output to `budget`.
pub fn decode_primitives(
    document: &gltf::Document,
    buffers: &mut Buffers,
    budget: &mut Budget,
) -> Result<(), RigError> {
    for mesh in document.meshes() {
        for primitive in mesh.primitives() {
            let Some(extension) = primitive.extension_value("KHR_draco_mesh_compression") else {
                continue;
            };
            let decoded = decode_primitive(document, &primitive, extension, buffers, budget).map_err(|e| {
                e.context(&format!(
                    "mesh {} primitive {} (KHR_draco_mesh_compression)",
                    mesh.index(),
                    primitive.index()
                ))
                .in_decoder(Codec::Draco)
            })?;
            buffers.decoded_accessors.extend(decoded);
        }
    }
    Ok(())
}

/// The accessors one Draco primitive fills, by accessor index, with their bytes.
fn decode_primitive(
    document: &gltf::Document,
    primitive: &gltf::Primitive,
    extension: &serde_json::Value,
    buffers: &Buffers,
    budget: &mut Budget,
) -> Result<Vec<(usize, Vec<u8>)>, ReadError> {
    let view_index = extension
        .get("bufferView")
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| "the extension has no bufferView".to_owned())?;
    let view = document
        .views()
        .nth(view_index as usize)
        .ok_or_else(|| format!("bufferView {view_index} does not exist"))?;
    let attributes = extension
        .get("attributes")
        .and_then(serde_json::Value::as_object)
        .ok_or_else(|| "the extension has no attributes".to_owned())?;
    let stream = buffers.view(&view)?;

    let limits = DecodeLimits::default().with_max_decoded_bytes(budget.left());
    let mut input = DecoderBuffer::new(stream).with_limits(limits);
    let mut mesh = draco_core::Mesh::new();
    MeshDecoder::new()
        .decode(&mut input, &mut mesh)
        .map_err(|e| format!("the Draco stream does not decode: {e}"))?;
    let points = mesh.num_points();

    let mut out = Vec::new();
    let indices = primitive
        .indices()
        .ok_or_else(|| "the primitive has no indices accessor for the stream's triangles".to_owned())?;
    let (index_type, _) = buffers.layout(&indices)?;
    let corners = mesh.num_faces().saturating_mul(3);
    if indices.count() != corners {
        return Err(ReadError::Data(format!(
            "the indices accessor has {} elements but the stream has {} triangles",
            indices.count(),
            mesh.num_faces()
        )));
    }
    budget.charge((corners * index_type.size()) as u64, "Draco indices")?;
    let mut index_values = Vec::with_capacity(corners);
    for face in 0..mesh.num_faces() {
        index_values.extend(mesh.face(FaceIndex(face as u32)).map(|p| p.0 as f64));
    }
    out.push((indices.index(), encode(&index_values, index_type, "indices")?));

    for (semantic, id) in attributes {
        let id = id
            .as_u64()
            .and_then(|id| u32::try_from(id).ok())
            .ok_or_else(|| format!("attribute {semantic} has no valid Draco id"))?;
        let accessor = primitive
            .attributes()
            .find(|(s, _)| s.to_string() == *semantic)
            .map(|(_, accessor)| accessor)
            .ok_or_else(|| format!("{semantic} is in the stream but not among the primitive's attributes"))?;
        let attribute = mesh
            .attribute_by_unique_id(id)
            .ok_or_else(|| format!("{semantic}: the stream has no attribute with id {id}"))?;
        let (data_type, dimensions) = buffers.layout(&accessor)?;
        let components = dimensions.multiplicity();
        if accessor.count() != points {
            return Err(ReadError::Data(format!(
                "{semantic}: its accessor has {} elements but the stream decodes {points} points",
                accessor.count()
            )));
        }
        if (attribute.data_type() == DracoType::Float32) != (data_type == DataType::F32) {
            return Err(ReadError::Data(format!(
                "{semantic}: the stream stores {:?} values but the accessor declares {}",
                attribute.data_type(),
                super::accessor::type_name(data_type)
            )));
        }
        budget.charge(
            (points * components * data_type.size()) as u64,
            &format!("Draco {semantic}"),
        )?;
        let values = read_values(attribute, points, components);
        out.push((accessor.index(), encode(&values, data_type, semantic)?));
    }
    Ok(out)
}

fn read_values(attribute: &PointAttribute, points: usize, components: usize) -> Vec<f64> {
    attribute
        .read_f32s(points, components)
        .into_iter()
        .map(f64::from)
        .collect()
}

/// Values as little-endian components of `data_type`; integers must fit it exactly.
fn encode(values: &[f64], data_type: DataType, what: &str) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::with_capacity(values.len() * data_type.size());
    let (low, high) = match data_type {
        DataType::I8 => (i8::MIN as f64, i8::MAX as f64),
        DataType::U8 => (0.0, u8::MAX as f64),
        DataType::I16 => (i16::MIN as f64, i16::MAX as f64),
        DataType::U16 => (0.0, u16::MAX as f64),
        DataType::U32 => (0.0, u32::MAX as f64),
        DataType::F32 => (f64::NEG_INFINITY, f64::INFINITY),
    };
    for &v in values {
        if data_type != DataType::F32 && (v < low || v > high || v.fract() != 0.0) {
            return Err(ReadError::Data(format!(
                "{what}: the value {v} does not fit the accessor's {}",
                super::accessor::type_name(data_type)
            )));
        }
        match data_type {
            DataType::I8 => bytes.push(v as i8 as u8),
            DataType::U8 => bytes.push(v as u8),
            DataType::I16 => bytes.extend((v as i16).to_le_bytes()),
            DataType::U16 => bytes.extend((v as u16).to_le_bytes()),
            DataType::U32 => bytes.extend((v as u32).to_le_bytes()),
            DataType::F32 => bytes.extend((v as f32).to_le_bytes()),
        }
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_encode_in_the_accessor_type_and_out_of_range_ones_are_refused() {
        assert_eq!(encode(&[1.0, 258.0], DataType::U16, "x").unwrap(), vec![1, 0, 2, 1]);
        assert_eq!(encode(&[-1.0], DataType::I8, "x").unwrap(), vec![0xff]);
        assert_eq!(
            encode(&[0.5], DataType::F32, "x").unwrap(),
            0.5f32.to_le_bytes().to_vec()
        );
        let e = encode(&[256.0], DataType::U8, "JOINTS_0").unwrap_err().to_string();
        assert!(
            e.contains("JOINTS_0: the value 256 does not fit the accessor's unsigned byte"),
            "{e}"
        );
        assert!(encode(&[1.5], DataType::U16, "x").is_err());
    }
}
