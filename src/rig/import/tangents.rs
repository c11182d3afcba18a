//! Tangents for normal-mapped primitives whose file gives none, generated with MikkTSpace as the
//! glTF specification asks ("client implementations SHOULD calculate tangents using default
//! MikkTSpace algorithms with the specified vertex positions, normals, and texture coordinates
//! associated with the normal texture") — the tangent frames the normal maps were baked in.

use glam::{Vec2, Vec3, Vec4};

/// The primitive's triangles as MikkTSpace reads them, and the tangents it writes back.
struct Triangles<'a> {
    positions: &'a [Vec3],
    normals: &'a [Vec3],
    uvs: &'a [Vec2],
    indices: &'a [u32],
    tangents: Vec<Vec4>,
}

impl Triangles<'_> {
    fn vertex(&self, face: usize, corner: usize) -> usize {
        self.indices[face * 3 + corner] as usize
    }
}

impl bevy_mikktspace::Geometry for Triangles<'_> {
    fn num_faces(&self) -> usize {
        self.indices.len() / 3
    }

    fn num_vertices_of_face(&self, _face: usize) -> usize {
        3
    }

    fn position(&self, face: usize, corner: usize) -> [f32; 3] {
        self.positions[self.vertex(face, corner)].to_array()
    }

    fn normal(&self, face: usize, corner: usize) -> [f32; 3] {
        self.normals[self.vertex(face, corner)].to_array()
    }

    fn tex_coord(&self, face: usize, corner: usize) -> [f32; 2] {
        // MikkTSpace works with V up (OpenGL's convention); glTF's V points down the image.
        let uv = self.uvs[self.vertex(face, corner)];
        [uv.x, 1.0 - uv.y]
    }

    fn set_tangent(&mut self, space: Option<bevy_mikktspace::TangentSpace>, face: usize, corner: usize) {
        // A vertex shared by faces gets one tangent: the vertex's attributes are the same on every
        // face, so MikkTSpace's welding gives them one frame except across a mirrored seam, where
        // a per-vertex attribute cannot hold two (as for the file's own TANGENT).
        if let Some(space) = space {
            let vertex = self.vertex(face, corner);
            let [x, y, z, w] = space.tangent_encoded();
            self.tangents[vertex] = Vec4::new(x, y, z, w);
        }
    }
}

/// MikkTSpace tangents (xyz, and the bitangent's sign in w, as glTF's TANGENT) for the triangle
/// list `indices` over the vertices; `None` when the lengths disagree, an index is out of range,
/// or MikkTSpace finds no triangle to work on. Vertices no triangle gives a frame keep
/// (1, 0, 0, 1).
pub fn mikktspace_tangents(positions: &[Vec3], normals: &[Vec3], uvs: &[Vec2], indices: &[u32]) -> Option<Vec<Vec4>> {
    let n = positions.len();
    let consistent = normals.len() == n
        && uvs.len() == n
        && indices.len().is_multiple_of(3)
        && indices.iter().all(|&i| (i as usize) < n);
    if !consistent {
        return None;
    }
    let mut triangles = Triangles {
        positions,
        normals,
        uvs,
        indices,
        tangents: vec![Vec4::new(1.0, 0.0, 0.0, 1.0); n],
    };
    bevy_mikktspace::generate_tangents(&mut triangles).ok()?;
    Some(triangles.tangents)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A quad in the XY plane facing +Z with U along +X and V (glTF's, down the image) along −Y:
    /// the tangent follows +U, the bitangent +V in the image's upward sense, i.e. +Y here.
    #[test]
    fn a_flat_quad_gets_its_u_axis_as_tangent_and_a_right_handed_frame() {
        let positions = [Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y];
        let normals = [Vec3::Z; 4];
        let uvs = [
            Vec2::new(0.0, 1.0),
            Vec2::new(1.0, 1.0),
            Vec2::new(1.0, 0.0),
            Vec2::ZERO,
        ];
        let tangents = mikktspace_tangents(&positions, &normals, &uvs, &[0, 1, 2, 0, 2, 3]).unwrap();
        for t in tangents {
            assert!((t.truncate() - Vec3::X).length() < 1e-6, "{t}");
            // bitangent = cross(N, T) · w = Z × X = +Y
            assert_eq!(t.w, 1.0);
        }
    }

    #[test]
    fn mirrored_texture_coordinates_flip_the_bitangent_sign() {
        let positions = [Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y];
        let normals = [Vec3::Z; 4];
        // U runs along −X now: the tangent turns round and the frame is left-handed.
        let uvs = [
            Vec2::new(1.0, 1.0),
            Vec2::new(0.0, 1.0),
            Vec2::new(0.0, 0.0),
            Vec2::new(1.0, 0.0),
        ];
        let tangents = mikktspace_tangents(&positions, &normals, &uvs, &[0, 1, 2, 0, 2, 3]).unwrap();
        for t in tangents {
            assert!((t.truncate() + Vec3::X).length() < 1e-6, "{t}");
            assert_eq!(t.w, -1.0);
        }
    }

    #[test]
    fn an_index_out_of_range_or_a_short_attribute_gives_none() {
        let positions = [Vec3::ZERO, Vec3::X, Vec3::Y];
        let uvs = [Vec2::ZERO, Vec2::X, Vec2::Y];
        assert!(mikktspace_tangents(&positions, &[Vec3::Z; 3], &uvs, &[0, 1, 3]).is_none());
        assert!(mikktspace_tangents(&positions, &[Vec3::Z; 2], &uvs, &[0, 1, 2]).is_none());
        assert!(mikktspace_tangents(&positions, &[Vec3::Z; 3], &uvs, &[0, 1]).is_none());
    }
}
