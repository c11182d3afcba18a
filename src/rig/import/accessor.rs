//! Typed reads of glTF accessors, checked against the real bytes before anything is allocated.
//!
//! Every read states which component types it accepts, checks that the accessor's elements lie
//! inside its buffer view and the view inside its buffer, and charges the decoded size to a
//! [`Budget`] first, so that a file claiming a billion vertices in a kilobyte is refused with a
//! message instead of an allocation. Accessors without a buffer view read as zeros and sparse
//! substitutions are applied, as the glTF specification says.

use crate::rig::{Codec, RigError};
use gltf::accessor::{DataType, Dimensions};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

/// Decoded bytes (vertex arrays, keyframes, images) one import may allocate.
///
/// Real files decode to a small multiple of their own size; the allowance is a fixed floor plus
/// [`Budget::PER_INPUT_BYTE`] times the bytes read, capped at [`Budget::CAP`].
#[derive(Debug, Clone)]
pub struct Budget {
    left: u64,
    limit: u64,
}

impl Budget {
    pub const FLOOR: u64 = 64 << 20;
    pub const PER_INPUT_BYTE: u64 = 16;
    pub const CAP: u64 = 8 << 30;

    /// The allowance for a file whose JSON, binary chunk and external buffers total `input_bytes`.
    pub fn for_input(input_bytes: u64) -> Budget {
        let limit = Self::FLOOR
            .saturating_add(input_bytes.saturating_mul(Self::PER_INPUT_BYTE))
            .min(Self::CAP);
        Budget { left: limit, limit }
    }

    /// Takes `bytes` from the allowance, or explains what did not fit.
    pub fn charge(&mut self, bytes: u64, what: &str) -> Result<(), BudgetExceeded> {
        if bytes > self.left {
            return Err(BudgetExceeded(format!(
                "{what} would need {} of memory, beyond the {} this file may use (the limit is {} plus {}× the file's size)",
                human_bytes(bytes),
                human_bytes(self.left),
                human_bytes(Self::FLOOR),
                Self::PER_INPUT_BYTE
            )));
        }
        self.left -= bytes;
        Ok(())
    }

    pub fn used(&self) -> u64 {
        self.limit - self.left
    }

    pub fn left(&self) -> u64 {
        self.left
    }
}

pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// The memory budget ran out: the whole load fails, whatever was being read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct BudgetExceeded(pub String);

/// A failed read: out of memory budget (fatal for the whole file), or bad data (which may only
/// cost the part that needed it).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Budget(#[from] BudgetExceeded),
    #[error("{0}")]
    Data(String),
}

impl From<String> for ReadError {
    fn from(message: String) -> Self {
        ReadError::Data(message)
    }
}

/// A read that stops the load: running out of budget stays a budget failure, anything else is
/// bad data.
impl From<ReadError> for RigError {
    fn from(e: ReadError) -> RigError {
        match e {
            ReadError::Budget(e) => RigError::Budget(e),
            ReadError::Data(message) => RigError::Data(message),
        }
    }
}

impl ReadError {
    /// The load error a failed read while decoding `codec`'s data becomes.
    pub fn in_decoder(self, codec: Codec) -> RigError {
        match self {
            ReadError::Budget(e) => RigError::Budget(e),
            ReadError::Data(message) => RigError::Decoder { codec, message },
        }
    }

    /// The same error, its message prefixed with what was being read.
    pub fn context(self, what: &str) -> ReadError {
        match self {
            ReadError::Budget(BudgetExceeded(m)) => ReadError::Budget(BudgetExceeded(format!("{what}: {m}"))),
            ReadError::Data(m) => ReadError::Data(format!("{what}: {m}")),
        }
    }
}

/// The bytes of one buffer: borrowed from the GLB binary chunk, read from a data URI or a file
/// (shared when several buffers name the same file), or absent — a placeholder, a compression
/// fallback or a remote file — which is an error only when something reads it.
pub enum BufferData<'a> {
    Borrowed(&'a [u8]),
    Shared(Rc<Vec<u8>>),
    Absent(String),
}

/// The data of every buffer, each cut to its declared `byteLength`, plus what extension decoders
/// produced: whole buffer views (EXT_meshopt_compression) and whole accessors, tightly packed
/// (KHR_draco_mesh_compression). Reads prefer decoded data to the buffer bytes it replaces.
pub struct Buffers<'a> {
    pub buffers: Vec<(BufferData<'a>, usize)>,
    pub decoded_views: HashMap<usize, Vec<u8>>,
    pub decoded_accessors: HashMap<usize, Vec<u8>>,
    /// Whether the file uses KHR_mesh_quantization, which allows integer positions, normals,
    /// texture coordinates and morph offsets where core glTF wants floats.
    pub quantized_geometry: bool,
    /// Accessors whose `type` or `componentType` is not one glTF defines, and what it is.
    pub unknown_layouts: BTreeMap<usize, String>,
}

impl<'a> Buffers<'a> {
    pub fn new(buffers: Vec<(BufferData<'a>, usize)>) -> Self {
        Buffers {
            buffers,
            decoded_views: HashMap::new(),
            decoded_accessors: HashMap::new(),
            quantized_geometry: false,
            unknown_layouts: BTreeMap::new(),
        }
    }

    /// Buffer `index`, cut to its declared length.
    pub fn bytes(&self, index: usize) -> Result<&[u8], ReadError> {
        let (data, length) = self
            .buffers
            .get(index)
            .ok_or_else(|| ReadError::Data(format!("buffer {index} does not exist")))?;
        let bytes = match data {
            BufferData::Borrowed(b) => b.get(..*length),
            BufferData::Shared(b) => b.get(..*length),
            BufferData::Absent(why) => return Err(ReadError::Data(format!("buffer {index} {why}"))),
        };
        bytes.ok_or_else(|| ReadError::Data(format!("buffer {index} is shorter than its declared {length} bytes")))
    }

    /// Whether buffer `index` has bytes (placeholders and fallbacks have none).
    pub fn has_data(&self, index: usize) -> bool {
        matches!(
            self.buffers.get(index),
            Some((BufferData::Borrowed(_) | BufferData::Shared(_), _))
        )
    }

    /// The bytes of a buffer view (decoded, when an extension compressed it), checked against
    /// its buffer.
    pub fn view(&self, view: &gltf::buffer::View) -> Result<&[u8], ReadError> {
        if let Some(decoded) = self.decoded_views.get(&view.index()) {
            return Ok(decoded);
        }
        let buffer = self
            .bytes(view.buffer().index())
            .map_err(|e| e.context(&format!("buffer view {}", view.index())))?;
        slice_of(buffer, view.offset(), view.length()).ok_or_else(|| {
            ReadError::Data(format!(
                "buffer view {} covers bytes {}..{} of buffer {}, which has only {} bytes",
                view.index(),
                view.offset(),
                view.offset().saturating_add(view.length()),
                view.buffer().index(),
                buffer.len()
            ))
        })
    }
}

impl Buffers<'_> {
    /// An accessor's component type and element type, or why they cannot be read: the `gltf`
    /// crate panics on values it did not recognize, and a valid file may hold such an accessor
    /// as long as nothing reads it.
    pub fn layout(&self, accessor: &gltf::Accessor) -> Result<(DataType, Dimensions), ReadError> {
        match self.unknown_layouts.get(&accessor.index()) {
            Some(why) => Err(ReadError::Data(format!("accessor {}: {why}", accessor.index()))),
            None => Ok((accessor.data_type(), accessor.dimensions())),
        }
    }
}

/// `length` bytes of `data` from `offset`, when they are all there.
pub fn slice_of(data: &[u8], offset: usize, length: usize) -> Option<&[u8]> {
    data.get(offset..offset.checked_add(length)?)
}

/// A component type an accessor read accepts. Integer types read as floats are taken as
/// normalized (`u8 / 255`, `max(i8 / 127, -1)`, …), which is what glTF requires wherever it
/// allows them in place of floats.
pub const FLOAT: &[DataType] = &[DataType::F32];
pub const FLOAT_OR_UNORM: &[DataType] = &[DataType::F32, DataType::U8, DataType::U16];
pub const FLOAT_OR_NORM: &[DataType] = &[DataType::F32, DataType::I8, DataType::U8, DataType::I16, DataType::U16];
pub const FLOAT_OR_SNORM: &[DataType] = &[DataType::F32, DataType::I8, DataType::I16];
pub const UINT_8_16: &[DataType] = &[DataType::U8, DataType::U16];
pub const UINT_ANY: &[DataType] = &[DataType::U8, DataType::U16, DataType::U32];

pub fn type_name(data_type: DataType) -> &'static str {
    match data_type {
        DataType::I8 => "signed byte",
        DataType::U8 => "unsigned byte",
        DataType::I16 => "signed short",
        DataType::U16 => "unsigned short",
        DataType::U32 => "unsigned int",
        DataType::F32 => "float",
    }
}

fn dimensions_name(dimensions: Dimensions) -> &'static str {
    match dimensions {
        Dimensions::Scalar => "SCALAR",
        Dimensions::Vec2 => "VEC2",
        Dimensions::Vec3 => "VEC3",
        Dimensions::Vec4 => "VEC4",
        Dimensions::Mat2 => "MAT2",
        Dimensions::Mat3 => "MAT3",
        Dimensions::Mat4 => "MAT4",
    }
}

fn expected_dimensions(n: usize) -> &'static str {
    match n {
        1 => "SCALAR",
        2 => "VEC2",
        3 => "VEC3",
        4 => "VEC4",
        16 => "MAT4",
        _ => "?",
    }
}

/// Component value as a float, normalized for integer types.
fn component_normalized(data_type: DataType, bytes: &[u8]) -> f32 {
    match data_type {
        DataType::F32 => f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
        DataType::U8 => bytes[0] as f32 / 255.0,
        DataType::I8 => (bytes[0] as i8 as f32 / 127.0).max(-1.0),
        DataType::U16 => u16::from_le_bytes([bytes[0], bytes[1]]) as f32 / 65535.0,
        DataType::I16 => (i16::from_le_bytes([bytes[0], bytes[1]]) as f32 / 32767.0).max(-1.0),
        DataType::U32 => u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as f32,
    }
}

/// Component value as a float, integer types taken at their integer value (KHR_mesh_quantization's
/// unnormalized positions, texture coordinates and morph offsets).
fn component_unnormalized(data_type: DataType, bytes: &[u8]) -> f32 {
    match data_type {
        DataType::F32 => f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
        DataType::U8 => bytes[0] as f32,
        DataType::I8 => bytes[0] as i8 as f32,
        DataType::U16 => u16::from_le_bytes([bytes[0], bytes[1]]) as f32,
        DataType::I16 => i16::from_le_bytes([bytes[0], bytes[1]]) as f32,
        DataType::U32 => u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as f32,
    }
}

pub(super) fn component_u32(data_type: DataType, bytes: &[u8]) -> u32 {
    match data_type {
        DataType::U8 => bytes[0] as u32,
        DataType::U16 => u16::from_le_bytes([bytes[0], bytes[1]]) as u32,
        DataType::U32 => u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
        DataType::I8 => bytes[0] as i8 as u32,
        DataType::I16 => i16::from_le_bytes([bytes[0], bytes[1]]) as u32,
        DataType::F32 => f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as u32,
    }
}

/// Reads `accessor` as `N` floats per element, integer components normalized (where glTF allows
/// integers only as normalized values: weights, rotations, morph weights, normals).
pub fn read_f32<const N: usize>(
    accessor: &gltf::Accessor,
    allowed: &[DataType],
    buffers: &Buffers,
    budget: &mut Budget,
) -> Result<Vec<[f32; N]>, ReadError> {
    read(accessor, allowed, buffers, budget, component_normalized)
}

/// Reads a geometry attribute as `N` floats per element: of the types `core` allows, or, in a
/// file that uses KHR_mesh_quantization, of any 8-, 16- or 32-bit type, integer components
/// normalized only when the accessor says `normalized`.
pub fn read_f32_quantized<const N: usize>(
    accessor: &gltf::Accessor,
    core: &[DataType],
    buffers: &Buffers,
    budget: &mut Budget,
) -> Result<Vec<[f32; N]>, ReadError> {
    let convert = if accessor.normalized() {
        component_normalized
    } else {
        component_unnormalized
    };
    let allowed = if buffers.quantized_geometry {
        FLOAT_OR_NORM
    } else {
        core
    };
    read(accessor, allowed, buffers, budget, convert)
}

/// Reads `accessor` as `N` unsigned integers per element.
pub fn read_u32<const N: usize>(
    accessor: &gltf::Accessor,
    allowed: &[DataType],
    buffers: &Buffers,
    budget: &mut Budget,
) -> Result<Vec<[u32; N]>, ReadError> {
    read(accessor, allowed, buffers, budget, component_u32)
}

/// Where `count` elements of `element` bytes, `stride` apart, start inside `data`; `None` when
/// they do not fit.
pub(super) fn elements_fit(data_len: usize, offset: u64, stride: u64, element: u64, count: u64) -> bool {
    count
        .checked_sub(1)
        .and_then(|last| last.checked_mul(stride))
        .and_then(|v| v.checked_add(offset))
        .and_then(|v| v.checked_add(element))
        .is_some_and(|end| end <= data_len as u64)
}

fn read<const N: usize, T: Copy + Default>(
    accessor: &gltf::Accessor,
    allowed: &[DataType],
    buffers: &Buffers,
    budget: &mut Budget,
    convert: fn(DataType, &[u8]) -> T,
) -> Result<Vec<[T; N]>, ReadError> {
    let index = accessor.index();
    let (data_type, dimensions) = buffers.layout(accessor)?;
    if dimensions.multiplicity() != N || !allowed.contains(&data_type) {
        let names: Vec<&str> = allowed.iter().map(|&t| type_name(t)).collect();
        return Err(ReadError::Data(format!(
            "accessor {index} is {} of {}; expected {} of {}",
            dimensions_name(dimensions),
            type_name(data_type),
            expected_dimensions(N),
            names.join(" or ")
        )));
    }
    let count = accessor.count();
    if count == 0 {
        return Err(ReadError::Data(format!(
            "accessor {index} has count 0 (glTF requires at least one element)"
        )));
    }
    let elements = Elements::<T, N> { data_type, convert };
    let source = dense_source(accessor, buffers, count, elements.size())?;
    budget.charge(
        (count as u64).saturating_mul(std::mem::size_of::<[T; N]>() as u64),
        &format!("accessor {index} ({count} elements)"),
    )?;
    let element = elements.size();
    let mut out = match source {
        None => vec![[T::default(); N]; count],
        Some(DenseElements { data, stride, offset }) => (0..count)
            .map(|i| elements.at(&data[offset + i * stride..offset + i * stride + element]))
            .collect(),
    };
    if let Some(sparse) = accessor.sparse() {
        substitute_sparse(&sparse, index, buffers, &elements, &mut out)?;
    }
    Ok(out)
}

/// How an accessor's elements are laid out in bytes and turned into values.
struct Elements<T, const N: usize> {
    data_type: DataType,
    convert: fn(DataType, &[u8]) -> T,
}

impl<T, const N: usize> Elements<T, N> {
    fn size(&self) -> usize {
        self.data_type.size() * N
    }

    fn at(&self, bytes: &[u8]) -> [T; N] {
        let component = self.data_type.size();
        std::array::from_fn(|c| (self.convert)(self.data_type, &bytes[c * component..]))
    }
}

/// Where an accessor's dense elements lie: `data[offset + i * stride..]` for element `i`.
struct DenseElements<'a> {
    data: &'a [u8],
    stride: usize,
    offset: usize,
}

/// Where the accessor's `count` dense elements of `element` bytes are (or `None`: all zero until
/// sparse substitution). The claim is checked against the bytes really present before anything
/// is allocated.
fn dense_source<'a>(
    accessor: &gltf::Accessor,
    buffers: &'a Buffers,
    count: usize,
    element: usize,
) -> Result<Option<DenseElements<'a>>, ReadError> {
    let index = accessor.index();
    if let Some(decoded) = buffers.decoded_accessors.get(&index) {
        if decoded.len() as u64 != (count as u64).saturating_mul(element as u64) {
            return Err(ReadError::Data(format!(
                "accessor {index} claims {count} elements of {element} bytes but its decoded data has {} bytes",
                decoded.len()
            )));
        }
        return Ok(Some(DenseElements {
            data: decoded.as_slice(),
            stride: element,
            offset: 0,
        }));
    }
    let Some(view) = accessor.view() else {
        return Ok(None);
    };
    let data = buffers
        .view(&view)
        .map_err(|e| e.context(&format!("accessor {index}")))?;
    let stride = view.stride().unwrap_or(element);
    if stride < element {
        return Err(ReadError::Data(format!(
            "accessor {index}: buffer view {} has a byte stride of {stride}, less than the {element}-byte element",
            view.index()
        )));
    }
    let offset = accessor.offset();
    if !elements_fit(data.len(), offset as u64, stride as u64, element as u64, count as u64) {
        return Err(ReadError::Data(format!(
            "accessor {index} claims {count} elements of {element} bytes (stride {stride}, offset {offset}) but buffer view {} holds only {} bytes",
            view.index(),
            data.len()
        )));
    }
    Ok(Some(DenseElements { data, stride, offset }))
}

/// The indices or the values of a sparse accessor: `count` items each.
struct SparsePart<'a> {
    what: &'a str,
    count: usize,
}

impl SparsePart<'_> {
    /// The bytes of buffer view `view`, once `count` items of `size` bytes from `offset` are
    /// checked to fit in it.
    fn bytes<'b>(
        &self,
        buffers: &'b Buffers,
        view: &gltf::buffer::View,
        offset: usize,
        size: usize,
        items: &str,
    ) -> Result<&'b [u8], ReadError> {
        let what = self.what;
        let data = buffers.view(view).map_err(|e| e.context(what))?;
        if !elements_fit(data.len(), offset as u64, size as u64, size as u64, self.count as u64) {
            return Err(ReadError::Data(format!(
                "{what}: {} {items} do not fit in buffer view {} ({} bytes)",
                self.count,
                view.index(),
                data.len()
            )));
        }
        Ok(data)
    }
}

/// Writes a sparse accessor's substitutions into `out`, checking that its indices and values fit
/// their views and that the indices increase within the accessor's count.
fn substitute_sparse<T, const N: usize>(
    sparse: &gltf::accessor::sparse::Sparse,
    index: usize,
    buffers: &Buffers,
    elements: &Elements<T, N>,
    out: &mut [[T; N]],
) -> Result<(), ReadError> {
    let what = format!("accessor {index} (sparse)");
    let (count, element) = (out.len(), elements.size());
    let sparse_count = sparse.count();
    if sparse_count == 0 || sparse_count > count {
        return Err(ReadError::Data(format!(
            "{what}: {sparse_count} substitutions for {count} elements (must be 1..={count})"
        )));
    }
    let indices = sparse.indices();
    let index_type = match indices.index_type() {
        gltf::accessor::sparse::IndexType::U8 => DataType::U8,
        gltf::accessor::sparse::IndexType::U16 => DataType::U16,
        gltf::accessor::sparse::IndexType::U32 => DataType::U32,
    };
    let index_size = index_type.size();
    let part = SparsePart {
        what: &what,
        count: sparse_count,
    };
    let index_data = part.bytes(buffers, &indices.view(), indices.offset(), index_size, "indices")?;
    let values = sparse.values();
    let value_data = part.bytes(buffers, &values.view(), values.offset(), element, "values")?;
    let mut previous: Option<u32> = None;
    for k in 0..sparse_count {
        let at = indices.offset() + k * index_size;
        let target = component_u32(index_type, &index_data[at..at + index_size]);
        if target as usize >= count || previous.is_some_and(|p| target <= p) {
            return Err(ReadError::Data(format!(
                "{what}: index {target} (substitution {k}) is out of range or not increasing"
            )));
        }
        previous = Some(target);
        let at = values.offset() + k * element;
        out[target as usize] = elements.at(&value_data[at..at + element]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_bounds_use_checked_arithmetic() {
        assert!(elements_fit(24, 0, 12, 12, 2));
        assert!(!elements_fit(24, 0, 12, 12, 3));
        assert!(!elements_fit(24, 4, 12, 12, 2));
        assert!(!elements_fit(24, 0, 12, 12, 0));
        assert!(!elements_fit(usize::MAX, 0, u64::MAX, 12, 3));
        assert!(!elements_fit(usize::MAX, u64::MAX, 1, 12, 1));
    }

    #[test]
    fn budget_refuses_what_does_not_fit_and_says_how_much() {
        let mut budget = Budget::for_input(1024);
        assert_eq!(budget.left, Budget::FLOOR + 16 * 1024);
        budget.charge(1 << 20, "a").unwrap();
        let e = budget
            .charge(12_000_000_000, "accessor 0 (1000000000 elements)")
            .unwrap_err();
        assert!(
            e.0.contains("accessor 0 (1000000000 elements)") && e.0.contains("11.2 GiB"),
            "{e}"
        );
        assert_eq!(budget.used(), 1 << 20);
        assert_eq!(Budget::for_input(u64::MAX).limit, Budget::CAP);
    }

    #[test]
    fn normalized_components_convert_as_gltf_says() {
        assert_eq!(component_normalized(DataType::U8, &[255]), 1.0);
        assert_eq!(component_normalized(DataType::I8, &[0x80]), -1.0);
        assert_eq!(component_normalized(DataType::I16, &(-32767i16).to_le_bytes()), -1.0);
        assert_eq!(
            component_normalized(DataType::U16, &32768u16.to_le_bytes()),
            32768.0 / 65535.0
        );
        assert_eq!(component_u32(DataType::U16, &65535u16.to_le_bytes()), 65535);
    }
}
