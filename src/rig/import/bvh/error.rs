//! Why a BVH file could not be read: the kind of problem and the line it is on.

/// A BVH file the reader refused, with the (1-based) line the problem is on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("BVH line {line}: {kind}")]
pub struct BvhError {
    pub line: usize,
    pub kind: BvhErrorKind,
}

/// What is wrong with a BVH file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BvhErrorKind {
    /// The first word is not `HIERARCHY`.
    #[error("a BVH file starts with HIERARCHY, this one with '{0}'")]
    NoHierarchy(String),
    /// A word the hierarchy has no place for.
    #[error("unknown keyword '{0}'")]
    UnknownKeyword(String),
    /// A keyword in a place the format does not allow it (a `JOINT` outside any `ROOT`, an
    /// `End Site` with channels).
    #[error("{0}")]
    Misplaced(String),
    /// Something else where the format wants `expected`.
    #[error("expected {expected}, found '{found}'")]
    Expected { expected: &'static str, found: String },
    /// The text stops where the format wants `expected`.
    #[error("the file ends where {expected} should be")]
    UnexpectedEnd { expected: &'static str },
    #[error("'{0}' is not a number")]
    NotANumber(String),
    /// NaN or an infinity, which no joint can be posed with.
    #[error("'{0}' is not a finite number")]
    NotFinite(String),
    #[error("unknown channel '{0}' (a channel is Xposition, Yposition, Zposition, Xrotation, Yrotation or Zrotation)")]
    UnknownChannel(String),
    #[error("the channel {0} is listed twice for one joint")]
    RepeatedChannel(String),
    /// `CHANNELS N` followed by another number of channel names.
    #[error("CHANNELS says {declared} but names {listed}")]
    ChannelCount { declared: String, listed: usize },
    /// `OFFSET` or `CHANNELS` given twice in one joint.
    #[error("{0} is given twice for one joint")]
    Repeated(&'static str),
    #[error("'{0}' has no OFFSET")]
    MissingOffset(String),
    #[error("the hierarchy nests joints more than {0} deep")]
    TooDeep(usize),
    #[error("the hierarchy has no ROOT")]
    NoRoot,
    /// `Frames:` claims more values than the rest of the file has room for.
    #[error(
        "Frames: {frames} with {channels} channels each is {} values, more than the {bytes} bytes after it can hold",
        u128::from(*frames) * *channels as u128
    )]
    FramesBeyondText { frames: u64, channels: usize, bytes: usize },
    /// A frame line with another number of values than the hierarchy has channels.
    #[error("frame {frame} has {found} values, but the hierarchy has {expected} channels")]
    FrameWidth {
        frame: usize,
        found: usize,
        expected: usize,
    },
    /// The file ends before the frames `Frames:` declares, or in the middle of the last one.
    #[error("the motion section is cut short: it ends after {found} of the {declared} frames Frames: declares")]
    MotionCutShort { declared: usize, found: usize },
    /// More frame lines than `Frames:` declares.
    #[error("Frames: declares {declared} frames, but more lines of values follow")]
    ExtraFrames { declared: usize },
    #[error("Frame Time must be a positive number of seconds, not '{0}'")]
    FrameTime(String),
}
