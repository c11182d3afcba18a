//! The BVH text: the hierarchy (joints, offsets, channels, end sites), the motion header
//! (`Frames:`, `Frame Time:`) and the frame lines, read with the line of every problem.
//!
//! Words are split at ASCII whitespace, so tabs and spaces mix freely; a line ends at `\n`,
//! `\r\n` or a lone `\r`. Keywords and channel names are read whatever their case, as other
//! readers (Blender's among them) read them. A joint's name is the rest of its line, since some
//! exporters (3ds Max's `Bip01 L Thigh`) put spaces in names. Each frame is one line of numbers,
//! one per channel, in hierarchy order.

use super::error::{BvhError, BvhErrorKind};
use glam::DVec3;

/// Deepest nesting of joints read: a deeper file is refused rather than walked, as the FBX
/// reader refuses one (a real skeleton is a few dozen joints deep at most).
pub const DEPTH_LIMIT: usize = 1024;

/// An axis of the file's (right-handed, Y up) space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    X,
    Y,
    Z,
}

impl Axis {
    pub fn index(self) -> usize {
        match self {
            Axis::X => 0,
            Axis::Y => 1,
            Axis::Z => 2,
        }
    }

    pub fn unit(self) -> DVec3 {
        match self {
            Axis::X => DVec3::X,
            Axis::Y => DVec3::Y,
            Axis::Z => DVec3::Z,
        }
    }
}

/// What one value of a frame sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelKind {
    /// The joint's place along an axis of its parent, in file units; it replaces the
    /// `OFFSET`'s component (as Blender and three.js read it).
    Position(Axis),
    /// A turn about an axis of the parent, in degrees. A joint's turns compose in the order its
    /// `CHANNELS` lists them: `Zrotation Xrotation Yrotation` is Rz·Rx·Ry.
    Rotation(Axis),
}

impl ChannelKind {
    fn parse(word: &str) -> Option<ChannelKind> {
        let (axis, rest) = word.split_at_checked(1)?;
        let axis = match axis {
            "X" | "x" => Axis::X,
            "Y" | "y" => Axis::Y,
            "Z" | "z" => Axis::Z,
            _ => return None,
        };
        if rest.eq_ignore_ascii_case("position") {
            Some(ChannelKind::Position(axis))
        } else if rest.eq_ignore_ascii_case("rotation") {
            Some(ChannelKind::Rotation(axis))
        } else {
            None
        }
    }
}

/// A `ROOT`, `JOINT` or `End Site` as the file gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Joint {
    /// The name in the file; an end site is named after its joint, `NAME_End` (`NAME_End2`
    /// for a second one).
    pub name: String,
    /// Always an earlier joint: joints are listed parents first.
    pub parent: Option<usize>,
    /// Where the joint sits in its parent's space at rest, in file units.
    pub offset: DVec3,
    /// The values the joint reads from each frame, in file order (none for an end site).
    pub channels: Vec<ChannelKind>,
    pub end_site: bool,
}

/// The hierarchy and the motion header; the frames follow in [`Header::frames`].
pub struct Header<'a> {
    pub joints: Vec<Joint>,
    /// Frames the motion section declares (and holds: [`Frames`] checks that).
    pub frames: usize,
    /// Seconds between frames, as written.
    pub frame_time: f64,
    /// Values per frame: every joint's channels together.
    pub channels: usize,
    /// The text after the `Frame Time:` line.
    motion: Cursor<'a>,
}

impl<'a> Header<'a> {
    /// The frame lines, read one by one.
    pub fn frames(&self) -> Frames<'a> {
        Frames {
            cursor: self.motion.clone(),
            declared: self.frames,
            read: 0,
            width: self.channels,
        }
    }
}

/// A place in the text and the line it is on.
#[derive(Debug, Clone)]
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
}

impl<'a> Cursor<'a> {
    /// Skips spaces and line breaks, counting the lines.
    fn skip_space(&mut self) {
        let bytes = self.text.as_bytes();
        while let Some(&byte) = bytes.get(self.pos) {
            match byte {
                b'\n' => self.line += 1,
                // A lone `\r` ends a line too; in `\r\n`, the `\n` counts it.
                b'\r' if bytes.get(self.pos + 1) != Some(&b'\n') => self.line += 1,
                byte if byte.is_ascii_whitespace() => {}
                _ => break,
            }
            self.pos += 1;
        }
    }

    /// The next word and its line.
    fn word(&mut self) -> Option<(usize, &'a str)> {
        self.skip_space();
        let start = self.pos;
        let bytes = self.text.as_bytes();
        while bytes.get(self.pos).is_some_and(|b| !b.is_ascii_whitespace()) {
            self.pos += 1;
        }
        // Only ASCII whitespace ends a word, so both ends are character boundaries.
        (self.pos > start).then(|| (self.line, &self.text[start..self.pos]))
    }

    /// The rest of the current line and its line; the cursor stops at the line break.
    fn rest_of_line(&mut self) -> (usize, &'a str) {
        let start = self.pos;
        let end = self.text[start..]
            .find(['\n', '\r'])
            .map_or(self.text.len(), |i| start + i);
        self.pos = end;
        (self.line, &self.text[start..end])
    }

    /// The line after the current one, or `None` past the end of the text.
    fn next_line(&mut self) -> Option<(usize, &'a str)> {
        // Whatever is left of the current line is passed over.
        self.rest_of_line();
        let bytes = self.text.as_bytes();
        match bytes.get(self.pos)? {
            b'\r' if bytes.get(self.pos + 1) == Some(&b'\n') => self.pos += 2,
            _ => self.pos += 1,
        }
        self.line += 1;
        (self.pos < self.text.len()).then(|| self.rest_of_line())
    }

    fn error(&self, kind: BvhErrorKind) -> BvhError {
        BvhError { line: self.line, kind }
    }
}

fn error(line: usize, kind: BvhErrorKind) -> BvhError {
    BvhError { line, kind }
}

/// A finite number, or why `word` is not one.
fn number(word: &str, line: usize) -> Result<f64, BvhError> {
    match word.parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(value),
        Ok(_) => Err(error(line, BvhErrorKind::NotFinite(word.to_owned()))),
        Err(_) => Err(error(line, BvhErrorKind::NotANumber(word.to_owned()))),
    }
}

/// A joint whose block is open (its `}` not yet read).
struct Open {
    joint: usize,
    has_offset: bool,
    has_channels: bool,
    /// End sites read inside it so far.
    end_sites: usize,
}

/// Reads the hierarchy and the motion header of `text`.
pub fn header(text: &str) -> Result<Header<'_>, BvhError> {
    let mut cursor = Cursor { text, pos: 0, line: 1 };
    match cursor.word() {
        Some((_, word)) if word.eq_ignore_ascii_case("HIERARCHY") => {}
        Some((line, word)) => return Err(error(line, BvhErrorKind::NoHierarchy(word.to_owned()))),
        None => return Err(cursor.error(BvhErrorKind::UnexpectedEnd { expected: "HIERARCHY" })),
    }
    let joints = hierarchy(&mut cursor)?;
    let channels = joints.iter().map(|j| j.channels.len()).sum();
    let (frames_line, frames) = frame_count(&mut cursor)?;
    let frame_time = frame_time(&mut cursor)?;
    cursor.rest_of_line();
    // Each value takes a character and a separator, so the rest of the text bounds the frames
    // before anything is reserved for them.
    let bytes = text.len() - cursor.pos;
    let values = u128::from(frames) * channels as u128;
    if channels > 0 && values > (bytes as u128).div_ceil(2) {
        return Err(error(
            frames_line,
            BvhErrorKind::FramesBeyondText {
                frames,
                channels,
                bytes,
            },
        ));
    }
    let frames = usize::try_from(frames).map_err(|_| {
        error(
            frames_line,
            BvhErrorKind::Expected {
                expected: "a frame count this machine can hold",
                found: frames.to_string(),
            },
        )
    })?;
    Ok(Header {
        joints,
        frames,
        frame_time,
        channels,
        motion: cursor,
    })
}

/// Every joint from the first `ROOT` up to `MOTION`, parents first.
fn hierarchy(cursor: &mut Cursor) -> Result<Vec<Joint>, BvhError> {
    let mut joints: Vec<Joint> = Vec::new();
    let mut open: Vec<Open> = Vec::new();
    loop {
        let Some((line, word)) = cursor.word() else {
            let expected = if open.is_empty() { "MOTION" } else { "'}'" };
            return Err(cursor.error(BvhErrorKind::UnexpectedEnd { expected }));
        };
        let keyword = |name: &str| word.eq_ignore_ascii_case(name);
        let misplaced = |what: &str| error(line, BvhErrorKind::Misplaced(what.to_owned()));
        if keyword("ROOT") || keyword("JOINT") {
            let parent = match (keyword("ROOT"), open.last()) {
                (true, None) => None,
                (true, Some(_)) => return Err(misplaced("ROOT inside a joint: a ROOT starts a hierarchy of its own")),
                (false, None) => return Err(misplaced("JOINT outside any ROOT")),
                (false, Some(p)) if joints[p.joint].end_site => {
                    return Err(misplaced("JOINT inside an End Site, which ends its chain"));
                }
                (false, Some(p)) => Some(p.joint),
            };
            if open.len() >= DEPTH_LIMIT {
                return Err(error(line, BvhErrorKind::TooDeep(DEPTH_LIMIT)));
            }
            let (_, rest) = cursor.rest_of_line();
            let (name, brace) = without_open_brace(rest);
            if name.is_empty() {
                return Err(error(
                    line,
                    BvhErrorKind::Expected {
                        expected: "a joint name",
                        found: rest.trim().to_owned(),
                    },
                ));
            }
            open_block(cursor, brace)?;
            joints.push(Joint {
                name: name.to_owned(),
                parent,
                offset: DVec3::ZERO,
                channels: Vec::new(),
                end_site: false,
            });
            open.push(Open {
                joint: joints.len() - 1,
                has_offset: false,
                has_channels: false,
                end_sites: 0,
            });
        } else if keyword("End") {
            let (parent, sites_before) = match open.last_mut() {
                None => return Err(misplaced("End Site outside any joint")),
                Some(p) if joints[p.joint].end_site => return Err(misplaced("End Site inside an End Site")),
                Some(p) => {
                    p.end_sites += 1;
                    (p.joint, p.end_sites - 1)
                }
            };
            let (_, rest) = cursor.rest_of_line();
            // Some exporters name the end site after `Site`; the name is not kept.
            let (site, brace) = without_open_brace(rest);
            if !site
                .split_ascii_whitespace()
                .next()
                .is_some_and(|w| w.eq_ignore_ascii_case("Site"))
            {
                return Err(error(
                    line,
                    BvhErrorKind::Expected {
                        expected: "End Site",
                        found: format!("End {}", rest.trim()),
                    },
                ));
            }
            open_block(cursor, brace)?;
            joints.push(Joint {
                // A joint's first end site is `NAME_End`, a second `NAME_End2`, and so on.
                name: match sites_before {
                    0 => format!("{}_End", joints[parent].name),
                    n => format!("{}_End{}", joints[parent].name, n + 1),
                },
                parent: Some(parent),
                offset: DVec3::ZERO,
                channels: Vec::new(),
                end_site: true,
            });
            open.push(Open {
                joint: joints.len() - 1,
                has_offset: false,
                has_channels: false,
                end_sites: 0,
            });
        } else if keyword("OFFSET") {
            let Some(top) = open.last_mut() else {
                return Err(misplaced("OFFSET outside any joint"));
            };
            if std::mem::replace(&mut top.has_offset, true) {
                return Err(error(line, BvhErrorKind::Repeated("OFFSET")));
            }
            joints[top.joint].offset = offset(cursor)?;
        } else if keyword("CHANNELS") {
            let Some(top) = open.last_mut() else {
                return Err(misplaced("CHANNELS outside any joint"));
            };
            if joints[top.joint].end_site {
                return Err(misplaced("CHANNELS inside an End Site, which does not move"));
            }
            if std::mem::replace(&mut top.has_channels, true) {
                return Err(error(line, BvhErrorKind::Repeated("CHANNELS")));
            }
            joints[top.joint].channels = channel_list(cursor)?;
        } else if word == "}" {
            let Some(closed) = open.pop() else {
                return Err(misplaced("a '}' that closes no joint"));
            };
            if !closed.has_offset {
                return Err(error(
                    line,
                    BvhErrorKind::MissingOffset(joints[closed.joint].name.clone()),
                ));
            }
        } else if keyword("MOTION") {
            if !open.is_empty() {
                return Err(error(
                    line,
                    BvhErrorKind::Expected {
                        expected: "'}'",
                        found: word.to_owned(),
                    },
                ));
            }
            if joints.is_empty() {
                return Err(error(line, BvhErrorKind::NoRoot));
            }
            return Ok(joints);
        } else if joints.is_empty() {
            return Err(error(
                line,
                BvhErrorKind::Expected {
                    expected: "ROOT",
                    found: word.to_owned(),
                },
            ));
        } else {
            return Err(error(line, BvhErrorKind::UnknownKeyword(word.to_owned())));
        }
    }
}

/// `text` trimmed, without a `{` that ends it, and whether it had one.
fn without_open_brace(text: &str) -> (&str, bool) {
    let text = text.trim();
    match text.strip_suffix('{') {
        Some(before) => (before.trim_end(), true),
        None => (text, false),
    }
}

/// Reads the `{` that opens a joint's block, unless its line already had it.
fn open_block(cursor: &mut Cursor, already_open: bool) -> Result<(), BvhError> {
    if already_open {
        return Ok(());
    }
    match cursor.word() {
        Some((_, "{")) => Ok(()),
        Some((line, found)) => Err(error(
            line,
            BvhErrorKind::Expected {
                expected: "'{'",
                found: found.to_owned(),
            },
        )),
        None => Err(cursor.error(BvhErrorKind::UnexpectedEnd { expected: "'{'" })),
    }
}

/// The three numbers on the rest of an `OFFSET` line.
fn offset(cursor: &mut Cursor) -> Result<DVec3, BvhError> {
    let (line, rest) = cursor.rest_of_line();
    let mut words = rest.split_ascii_whitespace();
    let mut offset = [0.0; 3];
    for component in &mut offset {
        let Some(word) = words.next() else {
            return Err(error(
                line,
                BvhErrorKind::Expected {
                    expected: "three numbers after OFFSET",
                    found: rest.trim().to_owned(),
                },
            ));
        };
        *component = number(word, line)?;
    }
    if let Some(extra) = words.next() {
        return Err(error(
            line,
            BvhErrorKind::Expected {
                expected: "the end of the OFFSET line after three numbers",
                found: extra.to_owned(),
            },
        ));
    }
    Ok(DVec3::from_array(offset))
}

/// The channel names on the rest of a `CHANNELS N` line, checked against `N`.
fn channel_list(cursor: &mut Cursor) -> Result<Vec<ChannelKind>, BvhError> {
    let (line, rest) = cursor.rest_of_line();
    let mut words = rest.split_ascii_whitespace();
    let Some(declared) = words.next() else {
        return Err(error(
            line,
            BvhErrorKind::Expected {
                expected: "the number of channels after CHANNELS",
                found: String::new(),
            },
        ));
    };
    let count = declared
        .parse::<u64>()
        .map_err(|_| error(line, BvhErrorKind::NotANumber(declared.to_owned())))?;
    // At most the six distinct kinds: a seventh name repeats one, which is refused below.
    let mut channels: Vec<ChannelKind> = Vec::with_capacity(6);
    for word in words {
        let kind =
            ChannelKind::parse(word).ok_or_else(|| error(line, BvhErrorKind::UnknownChannel(word.to_owned())))?;
        if channels.contains(&kind) {
            return Err(error(line, BvhErrorKind::RepeatedChannel(word.to_owned())));
        }
        channels.push(kind);
    }
    if count != channels.len() as u64 {
        return Err(error(
            line,
            BvhErrorKind::ChannelCount {
                declared: declared.to_owned(),
                listed: channels.len(),
            },
        ));
    }
    Ok(channels)
}

/// `Frames: N` (the number may be glued to the colon) and its line.
fn frame_count(cursor: &mut Cursor) -> Result<(usize, u64), BvhError> {
    let Some((line, word)) = cursor.word() else {
        return Err(cursor.error(BvhErrorKind::UnexpectedEnd { expected: "Frames:" }));
    };
    let Some(glued) = strip_prefix_ignoring_case(word, "Frames:") else {
        return Err(error(
            line,
            BvhErrorKind::Expected {
                expected: "Frames:",
                found: word.to_owned(),
            },
        ));
    };
    let (line, count) = value_after(cursor, line, glued, "the number of frames")?;
    let frames = count
        .parse::<u64>()
        .map_err(|_| error(line, BvhErrorKind::NotANumber(count.to_owned())))?;
    Ok((line, frames))
}

/// `Frame Time: T` (the number may be glued to the colon), in seconds.
fn frame_time(cursor: &mut Cursor) -> Result<f64, BvhError> {
    let expected = |found: &str, line| {
        error(
            line,
            BvhErrorKind::Expected {
                expected: "Frame Time:",
                found: found.to_owned(),
            },
        )
    };
    let Some((line, word)) = cursor.word() else {
        return Err(cursor.error(BvhErrorKind::UnexpectedEnd {
            expected: "Frame Time:",
        }));
    };
    if !word.eq_ignore_ascii_case("Frame") {
        return Err(expected(word, line));
    }
    let Some((line, word)) = cursor.word() else {
        return Err(cursor.error(BvhErrorKind::UnexpectedEnd {
            expected: "Frame Time:",
        }));
    };
    let Some(glued) = strip_prefix_ignoring_case(word, "Time:") else {
        return Err(expected(&format!("Frame {word}"), line));
    };
    let (line, text) = value_after(cursor, line, glued, "the frame time")?;
    match text.parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && seconds > 0.0 => Ok(seconds),
        _ => Err(error(line, BvhErrorKind::FrameTime(text.to_owned()))),
    }
}

fn strip_prefix_ignoring_case<'w>(word: &'w str, prefix: &str) -> Option<&'w str> {
    let head = word.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &word[prefix.len()..])
}

/// The value glued to a header's colon, else the next word.
fn value_after<'a>(
    cursor: &mut Cursor<'a>,
    line: usize,
    glued: &'a str,
    expected: &'static str,
) -> Result<(usize, &'a str), BvhError> {
    if !glued.is_empty() {
        return Ok((line, glued));
    }
    cursor
        .word()
        .ok_or_else(|| cursor.error(BvhErrorKind::UnexpectedEnd { expected }))
}

/// The frame lines after the header, each checked against the channel count.
pub struct Frames<'a> {
    cursor: Cursor<'a>,
    declared: usize,
    read: usize,
    width: usize,
}

impl Frames<'_> {
    /// Reads the next frame into `values` (one per channel, [`Header::channels`] of them);
    /// blank lines are passed over.
    pub fn read_into(&mut self, values: &mut [f64]) -> Result<(), BvhError> {
        let frame = self.read + 1;
        if self.width == 0 {
            // A hierarchy without channels has nothing to read in its frames.
            self.read += 1;
            return Ok(());
        }
        loop {
            let Some((line, text)) = self.cursor.next_line() else {
                return Err(self.cursor.error(BvhErrorKind::MotionCutShort {
                    declared: self.declared,
                    found: self.read,
                }));
            };
            let mut found = 0;
            for word in text.split_ascii_whitespace() {
                if let Some(slot) = values.get_mut(found) {
                    *slot = number(word, line)?;
                }
                found += 1;
            }
            if found == 0 {
                continue;
            }
            // A short last line is where a truncated file stops, not a frame written wrong.
            let last = self.cursor.text[self.cursor.pos..].trim().is_empty();
            if found < self.width && last {
                return Err(error(
                    line,
                    BvhErrorKind::MotionCutShort {
                        declared: self.declared,
                        found: self.read,
                    },
                ));
            }
            if found != self.width {
                return Err(error(
                    line,
                    BvhErrorKind::FrameWidth {
                        frame,
                        found,
                        expected: self.width,
                    },
                ));
            }
            self.read += 1;
            return Ok(());
        }
    }

    /// Checks that nothing but blank lines follows the last frame.
    pub fn finish(mut self) -> Result<(), BvhError> {
        while let Some((line, text)) = self.cursor.next_line() {
            if !text.trim().is_empty() {
                return Err(error(
                    line,
                    BvhErrorKind::ExtraFrames {
                        declared: self.declared,
                    },
                ));
            }
        }
        Ok(())
    }
}
