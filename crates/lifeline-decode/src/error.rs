//! Why a text did not decode: what was wrong, and where.
//!
//! An error never quotes a value from the text (it may be a secret), only
//! what kind of value it was; a variant's or a field's name is quoted,
//! cut short.

use core::fmt;

/// A decoding failure. Boxed: every read returns one, and a result that
/// carries a pointer rather than the failure itself keeps each derived
/// reader's error paths small.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(Box<Failure>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct Failure {
    what: What,
    /// Innermost first: the field or item the failure was found in, then
    /// the one holding it, and so on.
    path: Vec<Step>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum What {
    Syntax {
        what: &'static str,
        at: usize,
    },
    Type {
        expected: &'static str,
        found: &'static str,
    },
    Missing {
        field: &'static str,
    },
    Twice {
        field: &'static str,
    },
    UnknownVariant {
        found: String,
        expected: &'static [&'static str],
    },
    UnknownField(String),
    Invalid(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Field(&'static str),
    Item(usize),
}

/// Names longer than this are cut in an error.
const MAX_QUOTED: usize = 64;

fn quoted(name: &str) -> String {
    let mut end = name.len().min(MAX_QUOTED);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].to_string()
}

impl Error {
    #[inline(never)]
    fn new(what: What) -> Error {
        Error(Box::new(Failure {
            what,
            path: Vec::new(),
        }))
    }

    pub(crate) fn syntax(what: &'static str, at: usize) -> Error {
        Error::new(What::Syntax { what, at })
    }

    /// A value of another kind than the reader asked for.
    pub fn expected(expected: &'static str, found: &crate::Json<'_>) -> Error {
        Error::new(What::Type {
            expected,
            found: found.kind(),
        })
    }

    pub fn missing(field: &'static str) -> Error {
        Error::new(What::Missing { field })
    }

    pub(crate) fn twice(field: &'static str) -> Error {
        Error::new(What::Twice { field })
    }

    pub fn unknown_variant(found: &str, expected: &'static [&'static str]) -> Error {
        Error::new(What::UnknownVariant {
            found: quoted(found),
            expected,
        })
    }

    pub(crate) fn unknown_field(found: &str) -> Error {
        Error::new(What::UnknownField(quoted(found)))
    }

    /// A value of the right kind that its type refuses.
    pub fn invalid(detail: impl fmt::Display) -> Error {
        Error::new(What::Invalid(detail.to_string()))
    }

    /// The same error, found inside `field`.
    #[inline(never)]
    pub fn within(mut self, field: &'static str) -> Error {
        self.0.path.push(Step::Field(field));
        self
    }

    /// The same error, found in item `index` of an array.
    #[inline(never)]
    pub fn item(mut self, index: usize) -> Error {
        self.0.path.push(Step::Item(index));
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.what {
            What::Syntax { what, at } => write!(f, "not JSON: {what} at byte {at}")?,
            What::Type { expected, found } => {
                write!(f, "invalid type: {found}, expected {expected}")?
            }
            What::Missing { field } => write!(f, "missing field `{field}`")?,
            What::Twice { field } => write!(f, "duplicate field `{field}`")?,
            What::UnknownVariant { found, expected } => {
                write!(f, "unknown variant `{found}`, expected one of ")?;
                for (i, name) in expected.iter().enumerate() {
                    let comma = if i == 0 { "" } else { ", " };
                    write!(f, "{comma}`{name}`")?;
                }
            }
            What::UnknownField(found) => write!(f, "unknown field `{found}`")?,
            What::Invalid(detail) => f.write_str(detail)?,
        }
        if !self.0.path.is_empty() {
            f.write_str(" at ")?;
            for (i, step) in self.0.path.iter().rev().enumerate() {
                match step {
                    Step::Field(name) if i == 0 => f.write_str(name)?,
                    Step::Field(name) => write!(f, ".{name}")?,
                    Step::Item(index) => write!(f, "[{index}]")?,
                }
            }
        }
        Ok(())
    }
}

impl std::error::Error for Error {}
