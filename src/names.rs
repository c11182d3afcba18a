//! Enum ↔ name, one way for every enum whose variants users type or read (view modes, the
//! deformation measure, skinning path and method, layer blends, anti-aliasing, theme, finding
//! codes): strum derives the names (`IntoStaticStr` and `Display` write them, `EnumString`
//! reads them, `VariantArray` lists the variants), serde writes them, and the command line and
//! the settings file read them through [`cli`] and [`or_default`]. `named_enum!` declares such
//! an enum.

use std::str::FromStr;
use strum::VariantArray;

/// Declares a [`Named`] enum: the derives that give it its names (spelled by its own
/// `#[strum(serialize_all = …)]` or `#[strum(serialize = …)]` attributes), and serde writing
/// them. It is `Copy` and has a `#[default]` variant.
macro_rules! named_enum {
    ($(#[$attribute:meta])* $visibility:vis enum $name:ident { $($body:tt)* }) => {
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            Default,
            strum::IntoStaticStr,
            strum::EnumString,
            strum::Display,
            strum::VariantArray,
            serde::Serialize,
        )]
        #[serde(into = "&'static str")]
        $(#[$attribute])*
        $visibility enum $name { $($body)* }
    };
}
pub(crate) use named_enum;

/// An enum with a stable name per variant (the strum derives above).
pub trait Named: Copy + Into<&'static str> + FromStr + VariantArray {
    /// The variant's name, as the command line and the settings file spell it.
    fn name(self) -> &'static str {
        self.into()
    }

    /// Every variant's name, in declaration order.
    fn names() -> impl Iterator<Item = &'static str> {
        Self::VARIANTS.iter().map(|&v| v.name())
    }

    /// The variant named `name`, ignoring ASCII case.
    fn from_name_ignoring_case(name: &str) -> Option<Self> {
        Self::VARIANTS
            .iter()
            .copied()
            .find(|v| v.name().eq_ignore_ascii_case(name))
    }
}

impl<T: Copy + Into<&'static str> + FromStr + VariantArray> Named for T {}

/// The command-line parser of `T`: exactly its names, which clap lists in `--help` and in the
/// error for a name it does not know.
pub fn cli<T>() -> impl clap::builder::TypedValueParser<Value = T>
where
    T: Named + Clone + Send + Sync + 'static,
    T::Err: std::error::Error + Send + Sync + 'static,
{
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(T::names()).try_map(|name| name.parse::<T>())
}

/// Reads a [`Named`] field of the settings file (`#[serde(deserialize_with =
/// "crate::names::or_default")]`): ignoring case, and a name the program does not know
/// reads as the default, so that a hand-edited or older settings file keeps its other settings.
pub fn or_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Named + Default,
{
    let name = <String as serde::Deserialize>::deserialize(deserializer)?;
    Ok(T::from_name_ignoring_case(&name).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::builder::TypedValueParser;

    named_enum! {
        #[strum(serialize_all = "kebab-case")]
        enum Sample {
            #[default]
            First,
            SecondOne,
            #[strum(serialize = "3x")]
            Third,
        }
    }

    #[test]
    fn names_come_from_the_derive_and_parse_back() {
        assert_eq!(Sample::names().collect::<Vec<_>>(), ["first", "second-one", "3x"]);
        for &v in Sample::VARIANTS {
            assert_eq!(v.name().parse::<Sample>(), Ok(v));
        }
        assert_eq!(Sample::from_name_ignoring_case("Second-ONE"), Some(Sample::SecondOne));
        assert_eq!(Sample::from_name_ignoring_case("second_one"), None);
    }

    #[test]
    fn the_command_line_takes_exactly_the_names() {
        let command = clap::Command::new("t");
        let parse = |text: &str| cli::<Sample>().parse_ref(&command, None, std::ffi::OsStr::new(text));
        assert_eq!(parse("3x").unwrap(), Sample::Third);
        assert_eq!(parse("second-one").unwrap(), Sample::SecondOne);
        let error = parse("SECOND-ONE").unwrap_err();
        assert_eq!(error.kind(), clap::error::ErrorKind::InvalidValue);
        assert_eq!(
            parse("fourth").unwrap_err().kind(),
            clap::error::ErrorKind::InvalidValue
        );
    }

    #[test]
    fn the_names_users_type_are_kept() {
        use crate::render::{DeformationMeasure, Msaa, ViewMode};
        use crate::skin::{SkinningMethod, SkinningPath};
        let views = [
            "shaded",
            "weights",
            "joints",
            "influences",
            "weight-error",
            "normals",
            "deformation",
            "symmetry",
            "weight-difference",
            "dqs-blend",
            "engine-distance",
        ];
        assert_eq!(ViewMode::names().collect::<Vec<_>>(), views);
        assert_eq!(DeformationMeasure::names().collect::<Vec<_>>(), ["area", "stretch"]);
        assert_eq!(SkinningPath::names().collect::<Vec<_>>(), ["gpu", "cpu"]);
        assert_eq!(SkinningMethod::names().collect::<Vec<_>>(), ["lbs", "dqs", "blended"]);
        assert_eq!(Msaa::names().collect::<Vec<_>>(), ["auto", "off", "2x", "4x"]);
        assert_eq!(crate::settings::Theme::names().collect::<Vec<_>>(), ["dark", "light"]);
        assert_eq!(crate::anim::BlendMode::names().collect::<Vec<_>>(), ["mix", "add"]);
    }

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Holder {
        #[serde(deserialize_with = "or_default")]
        sample: Sample,
    }

    #[test]
    fn settings_write_the_name_and_read_unknown_names_as_the_default() {
        let text = toml::to_string(&Holder { sample: Sample::Third }).unwrap();
        assert_eq!(text.trim(), "sample = \"3x\"");
        let read = |text: &str| toml::from_str::<Holder>(text).ok().map(|h| h.sample);
        assert_eq!(read("sample = \"3X\""), Some(Sample::Third));
        assert_eq!(read("sample = \"second-one\""), Some(Sample::SecondOne));
        assert_eq!(read("sample = \"no-such\""), Some(Sample::First));
        assert_eq!(read("sample = 3"), None);
    }
}
