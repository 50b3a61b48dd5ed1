//! `#[derive(Encode)]` on every shape it writes, against serde's derive
//! through serde_json on the same values: the text must be the same byte
//! for byte (the journal's digests are over it).

use lifeline_encode::Encode;
use serde::Serialize;

fn same<T: Encode + Serialize>(value: &T) {
    let mut w = lifeline_encode::Writer::default();
    value.encode(&mut w);
    assert_eq!(w.finish(), serde_json::to_string(value).unwrap());
}

#[derive(Clone, Serialize, Encode)]
struct Fields {
    plain: u32,
    #[serde(rename = "renamed")]
    r#type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    maybe: Option<i64>,
    #[serde(skip_serializing)]
    hidden: bool,
    #[serde(with = "doubled")]
    with: u32,
    nested: Vec<Inner>,
}

mod doubled {
    pub fn encode(value: &u32, w: &mut lifeline_encode::Writer) {
        w.u64(u64::from(*value) * 2);
    }
    pub fn serialize<S: serde::Serializer>(value: &u32, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::from(*value) * 2)
    }
}

#[derive(Clone, Serialize, Encode)]
struct Inner {
    a: bool,
}

#[derive(Clone, Serialize, Encode)]
struct Empty {}

#[derive(Clone, Serialize, Encode)]
struct Newtype(u8);

#[derive(Clone, Serialize, Encode)]
struct Pair(u8, String);

#[derive(Clone, Serialize, Encode)]
struct Unit;

#[derive(Clone, Serialize, Encode)]
#[serde(transparent)]
struct Transparent {
    inner: String,
}

#[derive(Clone, Serialize, Encode)]
#[serde(rename_all = "snake_case")]
enum External {
    UnitVariant,
    NewtypeVariant(Inner),
    TupleVariant(u8, u8),
    StructVariant {
        first_field: u8,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        list: Vec<u8>,
    },
    #[serde(rename = "other")]
    Renamed,
}

#[derive(Clone, Serialize, Encode)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Internal {
    Unit,
    Newtype(Inner),
    NewtypeEmpty(Empty),
    NewtypeNested(External2),
    Struct {
        a: u8,
        #[serde(skip_serializing_if = "Option::is_none")]
        b: Option<u8>,
    },
}

#[derive(Clone, Serialize, Encode)]
#[serde(rename_all = "snake_case")]
enum Names {
    First,
    #[serde(rename = "2nd")]
    Second,
    ThirdOne,
}

#[derive(Clone, Serialize, Encode)]
#[serde(tag = "type", rename_all = "snake_case")]
enum TaggedNames {
    One,
    Two,
}

#[derive(Clone, Serialize, Encode)]
#[serde(tag = "kind")]
enum External2 {
    One { x: u8 },
}

#[derive(Clone, Serialize, Encode)]
#[serde(tag = "t", content = "c", rename_all = "snake_case")]
enum Adjacent {
    Unit,
    Newtype(String),
    Tuple(u8, bool),
    Struct { a: Option<u8> },
}

#[derive(Clone, Serialize, Encode)]
#[serde(into = "Newtype")]
struct Into(u8);

impl From<Into> for Newtype {
    fn from(value: Into) -> Newtype {
        Newtype(value.0 + 1)
    }
}

#[derive(Clone, Serialize, Encode)]
struct Generic<T> {
    value: T,
}

#[test]
fn structs() {
    let fields = |maybe| Fields {
        plain: 7,
        r#type: "a \"quoted\"\nline".into(),
        maybe,
        hidden: true,
        with: 21,
        nested: vec![Inner { a: true }, Inner { a: false }],
    };
    same(&fields(None));
    same(&fields(Some(-3)));
    same(&Empty {});
    same(&Newtype(9));
    same(&Pair(1, "two".into()));
    same(&Unit);
    same(&Transparent { inner: "x".into() });
    same(&Into(4));
    same(&Generic {
        value: vec![Some(1u8), None],
    });
}

#[test]
fn externally_tagged() {
    same(&External::UnitVariant);
    same(&External::NewtypeVariant(Inner { a: true }));
    same(&External::TupleVariant(1, 2));
    same(&External::StructVariant {
        first_field: 1,
        list: vec![],
    });
    same(&External::StructVariant {
        first_field: 1,
        list: vec![2, 3],
    });
    same(&External::Renamed);
    same(&vec![External::UnitVariant, External::Renamed]);
}

#[test]
fn names_only() {
    same(&vec![Names::First, Names::Second, Names::ThirdOne]);
    same(&vec![TaggedNames::One, TaggedNames::Two]);
}

#[test]
fn internally_tagged() {
    same(&Internal::Unit);
    same(&Internal::Newtype(Inner { a: false }));
    same(&Internal::NewtypeEmpty(Empty {}));
    same(&Internal::NewtypeNested(External2::One { x: 5 }));
    same(&Internal::Struct { a: 1, b: None });
    same(&Internal::Struct { a: 1, b: Some(2) });
}

#[test]
fn adjacently_tagged() {
    same(&Adjacent::Unit);
    same(&Adjacent::Newtype("n".into()));
    same(&Adjacent::Tuple(3, true));
    same(&Adjacent::Struct { a: None });
}
