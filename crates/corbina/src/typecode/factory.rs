//! The ORB's TypeCode factory operations (`ORB::create_struct_tc` …), checking their
//! arguments as the specification requires (`BAD_PARAM` with OMG minor codes).

use super::{Arm, Body, Node, TcKind, TcResult, TypeCode, TypeCodeError, VMember};
use crate::error::minor;

/// A struct or exception member for [`TypeCode::create_struct_tc`].
#[derive(Debug, Clone)]
pub struct StructMember {
    /// Member name.
    pub name: String,
    /// Member type.
    pub ty: TypeCode,
}

impl StructMember {
    /// A member `ty name;`.
    pub fn new(name: impl Into<String>, ty: impl Into<TypeCode>) -> Self {
        StructMember {
            name: name.into(),
            ty: ty.into(),
        }
    }
}

/// A union case label: a discriminator value or `default`.
///
/// Values are integers whatever the discriminator type: booleans 0/1, `char`/`wchar` their
/// code, enums the enumerator's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnionLabel {
    /// `default:`.
    Default,
    /// `case value:`.
    Value(i128),
}

/// A union member for [`TypeCode::create_union_tc`].
#[derive(Debug, Clone)]
pub struct UnionMember {
    /// Member name.
    pub name: String,
    /// Its label (a member with several labels is given once per label).
    pub label: UnionLabel,
    /// Member type.
    pub ty: TypeCode,
}

impl UnionMember {
    /// `case label: ty name;`.
    pub fn new(name: impl Into<String>, label: UnionLabel, ty: impl Into<TypeCode>) -> Self {
        UnionMember {
            name: name.into(),
            label,
            ty: ty.into(),
        }
    }
}

/// A valuetype state member for [`TypeCode::create_value_tc`].
#[derive(Debug, Clone)]
pub struct ValueMember {
    /// Member name.
    pub name: String,
    /// Member type.
    pub ty: TypeCode,
    /// `PRIVATE_MEMBER` (0) or `PUBLIC_MEMBER` (1).
    pub visibility: i16,
}

impl ValueMember {
    /// A state member.
    pub fn new(name: impl Into<String>, ty: impl Into<TypeCode>, visibility: i16) -> Self {
        ValueMember {
            name: name.into(),
            ty: ty.into(),
            visibility,
        }
    }
}

fn bad(minor: u32, reason: &'static str) -> TypeCodeError {
    TypeCodeError::BadParam { minor, reason }
}

/// Repository ids are `FORMAT:rest`; empty is allowed where the spec allows it.
fn check_id(id: &str, may_be_empty: bool) -> TcResult<()> {
    if id.is_empty() {
        return if may_be_empty {
            Ok(())
        } else {
            Err(bad(
                minor::BAD_PARAM_BAD_REPOSITORY_ID,
                "empty repository id",
            ))
        };
    }
    if !id.contains(':') || id.contains('\0') {
        return Err(bad(
            minor::BAD_PARAM_BAD_REPOSITORY_ID,
            "repository id must be of the form FORMAT:…",
        ));
    }
    Ok(())
}

/// IDL identifiers (empty names are allowed: compact TypeCodes have none).
fn check_name(name: &str) -> TcResult<()> {
    let ok = name.is_empty()
        || (name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    if ok {
        Ok(())
    } else {
        Err(bad(
            minor::BAD_PARAM_BAD_NAME,
            "name is not an IDL identifier",
        ))
    }
}

fn check_unique<'a>(names: impl Iterator<Item = &'a str>) -> TcResult<()> {
    let mut seen = std::collections::HashSet::new();
    for n in names {
        if !n.is_empty() && !seen.insert(n.to_ascii_lowercase()) {
            return Err(bad(
                minor::BAD_PARAM_BAD_MEMBER_NAME,
                "duplicate member name",
            ));
        }
    }
    Ok(())
}

/// Member types may not be `void`, `null` or exceptions.
fn check_member_type(t: &TypeCode) -> TcResult<()> {
    match t.kind() {
        TcKind::Void | TcKind::Except => Err(TypeCodeError::IllegalMemberType {
            reason: "illegal member type",
        }),
        TcKind::Null if !t.is_unresolved_recursive() => Err(TypeCodeError::IllegalMemberType {
            reason: "illegal member type",
        }),
        _ => Ok(()),
    }
}

/// The inclusive range of label values a discriminator kind admits.
pub(crate) fn label_range(disc: &Node) -> Option<(i128, i128)> {
    Some(match disc.kind {
        TcKind::Short => (i16::MIN.into(), i16::MAX.into()),
        TcKind::UShort => (0, u16::MAX.into()),
        TcKind::Long => (i32::MIN.into(), i32::MAX.into()),
        TcKind::ULong => (0, u32::MAX.into()),
        TcKind::LongLong => (i64::MIN.into(), i64::MAX.into()),
        TcKind::ULongLong => (0, u64::MAX.into()),
        TcKind::Boolean => (0, 1),
        TcKind::Char => (0, 255),
        TcKind::WChar => (0, 0xffff),
        TcKind::Enum => match &disc.body {
            Body::Enum { members, .. } => (0, members.len() as i128 - 1),
            _ => return None,
        },
        TcKind::Alias => match &disc.body {
            Body::Alias { content, .. } => return label_range(content),
            _ => return None,
        },
        _ => return None,
    })
}

impl TypeCode {
    /// `create_struct_tc(id, name, members)`.
    pub fn create_struct_tc(
        id: &str,
        name: &str,
        members: Vec<StructMember>,
    ) -> TcResult<TypeCode> {
        Self::struct_like(TcKind::Struct, id, name, members)
    }

    /// `create_exception_tc(id, name, members)`.
    pub fn create_exception_tc(
        id: &str,
        name: &str,
        members: Vec<StructMember>,
    ) -> TcResult<TypeCode> {
        Self::struct_like(TcKind::Except, id, name, members)
    }

    fn struct_like(
        kind: TcKind,
        id: &str,
        name: &str,
        members: Vec<StructMember>,
    ) -> TcResult<TypeCode> {
        check_id(id, false)?;
        check_name(name)?;
        check_unique(members.iter().map(|m| m.name.as_str()))?;
        let mut ms = Vec::with_capacity(members.len());
        for m in members {
            check_name(&m.name)?;
            check_member_type(&m.ty)?;
            ms.push((m.name, m.ty.closed_node()));
        }
        Ok(TypeCode::from_node(Node::new(
            kind,
            Body::Struct {
                id: id.into(),
                name: name.into(),
                members: ms.into_boxed_slice(),
            },
        )))
    }

    /// `create_union_tc(id, name, discriminator_type, members)`: at most one member may have
    /// the `default` label, labels must be distinct and fit the discriminator type.
    pub fn create_union_tc(
        id: &str,
        name: &str,
        discriminator_type: impl Into<TypeCode>,
        members: Vec<UnionMember>,
    ) -> TcResult<TypeCode> {
        check_id(id, false)?;
        check_name(name)?;
        let disc = discriminator_type.into().closed_node();
        let range = if disc.kind.is_discriminator()
            || (disc.kind == TcKind::Alias && label_range(&disc).is_some())
        {
            label_range(&disc).ok_or(bad(
                minor::BAD_PARAM_BAD_DISCRIMINATOR,
                "illegal discriminator type",
            ))?
        } else {
            return Err(bad(
                minor::BAD_PARAM_BAD_DISCRIMINATOR,
                "illegal discriminator type",
            ));
        };
        let mut default_index = -1i32;
        let mut labels = std::collections::HashSet::new();
        let mut arms = Vec::with_capacity(members.len());
        for (i, m) in members.into_iter().enumerate() {
            check_name(&m.name)?;
            check_member_type(&m.ty)?;
            match m.label {
                UnionLabel::Default => {
                    if default_index >= 0 {
                        return Err(bad(
                            minor::BAD_PARAM_DUPLICATE_LABEL,
                            "more than one default label",
                        ));
                    }
                    default_index = i32::try_from(i)
                        .map_err(|_| bad(minor::BAD_PARAM_TYPECODE_ARGUMENT, "too many members"))?;
                }
                UnionLabel::Value(v) => {
                    if v < range.0 || v > range.1 {
                        return Err(bad(
                            minor::BAD_PARAM_INCOMPATIBLE_LABEL,
                            "label does not fit the discriminator type",
                        ));
                    }
                    if !labels.insert(v) {
                        return Err(bad(minor::BAD_PARAM_DUPLICATE_LABEL, "duplicate label"));
                    }
                }
            }
            // Members with the same name must be adjacent and of one type (several labels).
            arms.push(Arm {
                label: m.label,
                name: m.name,
                ty: m.ty.closed_node(),
            });
        }
        Ok(TypeCode::from_node(Node::new(
            TcKind::Union,
            Body::Union {
                id: id.into(),
                name: name.into(),
                disc,
                default_index,
                arms: arms.into_boxed_slice(),
            },
        )))
    }

    /// `create_enum_tc(id, name, members)`.
    pub fn create_enum_tc<S: AsRef<str>>(
        id: &str,
        name: &str,
        members: &[S],
    ) -> TcResult<TypeCode> {
        check_id(id, false)?;
        check_name(name)?;
        check_unique(members.iter().map(|m| m.as_ref()))?;
        if members.is_empty() || u32::try_from(members.len()).is_err() {
            return Err(bad(
                minor::BAD_PARAM_TYPECODE_ARGUMENT,
                "an enum needs 1 to 2^32-1 enumerators",
            ));
        }
        for m in members {
            check_name(m.as_ref())?;
        }
        Ok(TypeCode::from_node(Node::new(
            TcKind::Enum,
            Body::Enum {
                id: id.into(),
                name: name.into(),
                members: members.iter().map(|m| m.as_ref().to_string()).collect(),
            },
        )))
    }

    /// `create_alias_tc(id, name, original_type)`.
    pub fn create_alias_tc(
        id: &str,
        name: &str,
        original_type: impl Into<TypeCode>,
    ) -> TcResult<TypeCode> {
        check_id(id, false)?;
        check_name(name)?;
        let t = original_type.into();
        check_member_type(&t)?;
        Ok(TypeCode::from_node(Node::new(
            TcKind::Alias,
            Body::Alias {
                id: id.into(),
                name: name.into(),
                content: t.closed_node(),
            },
        )))
    }

    fn named(kind: TcKind, id: &str, name: &str, may_be_empty: bool) -> TcResult<TypeCode> {
        check_id(id, may_be_empty)?;
        check_name(name)?;
        Ok(TypeCode::from_node(Node::new(
            kind,
            Body::Named {
                id: id.into(),
                name: name.into(),
            },
        )))
    }

    /// `create_interface_tc(id, name)` (tk_objref). `IDL:omg.org/CORBA/Object:1.0` is
    /// `Object`.
    pub fn create_interface_tc(id: &str, name: &str) -> TcResult<TypeCode> {
        Self::named(TcKind::Objref, id, name, true)
    }

    /// `create_native_tc(id, name)`.
    pub fn create_native_tc(id: &str, name: &str) -> TcResult<TypeCode> {
        Self::named(TcKind::Native, id, name, false)
    }

    /// `create_abstract_interface_tc(id, name)`.
    pub fn create_abstract_interface_tc(id: &str, name: &str) -> TcResult<TypeCode> {
        Self::named(TcKind::AbstractInterface, id, name, false)
    }

    /// `create_local_interface_tc(id, name)`.
    pub fn create_local_interface_tc(id: &str, name: &str) -> TcResult<TypeCode> {
        Self::named(TcKind::LocalInterface, id, name, false)
    }

    /// `create_component_tc(id, name)`.
    pub fn create_component_tc(id: &str, name: &str) -> TcResult<TypeCode> {
        Self::named(TcKind::Component, id, name, false)
    }

    /// `create_home_tc(id, name)`.
    pub fn create_home_tc(id: &str, name: &str) -> TcResult<TypeCode> {
        Self::named(TcKind::Home, id, name, false)
    }

    /// `create_string_tc(bound)` (0: unbounded).
    pub fn create_string_tc(bound: u32) -> TypeCode {
        TypeCode::from_node(Node::new(TcKind::String, Body::Bound(bound)))
    }

    /// `create_wstring_tc(bound)` (0: unbounded).
    pub fn create_wstring_tc(bound: u32) -> TypeCode {
        TypeCode::from_node(Node::new(TcKind::WString, Body::Bound(bound)))
    }

    /// `create_fixed_tc(digits, scale)`: 1 to 31 digits, scale at most `digits`.
    pub fn create_fixed_tc(digits: u16, scale: i16) -> TcResult<TypeCode> {
        if digits == 0 || digits > 31 || scale < 0 || scale as u16 > digits {
            return Err(bad(
                2,
                "fixed digits must be 1..=31 and 0 <= scale <= digits",
            ));
        }
        Ok(TypeCode::from_node(Node::new(
            TcKind::Fixed,
            Body::Fixed { digits, scale },
        )))
    }

    /// `create_sequence_tc(bound, element_type)` (bound 0: unbounded).
    pub fn create_sequence_tc(bound: u32, element_type: impl Into<TypeCode>) -> TypeCode {
        let t = element_type.into();
        TypeCode::from_node(Node::new(
            TcKind::Sequence,
            Body::Seq {
                bound,
                content: t.closed_node(),
            },
        ))
    }

    /// `create_array_tc(length, element_type)`; the length must be positive.
    pub fn create_array_tc(length: u32, element_type: impl Into<TypeCode>) -> TcResult<TypeCode> {
        if length == 0 {
            return Err(bad(
                minor::BAD_PARAM_TYPECODE_ARGUMENT,
                "array length must be positive",
            ));
        }
        let t = element_type.into();
        check_member_type(&t)?;
        Ok(TypeCode::from_node(Node::new(
            TcKind::Array,
            Body::Seq {
                bound: length,
                content: t.closed_node(),
            },
        )))
    }

    /// `create_value_tc(id, name, type_modifier, concrete_base, members)`.
    pub fn create_value_tc(
        id: &str,
        name: &str,
        type_modifier: i16,
        concrete_base: Option<TypeCode>,
        members: Vec<ValueMember>,
    ) -> TcResult<TypeCode> {
        Self::value_like(
            TcKind::Value,
            id,
            name,
            type_modifier,
            concrete_base,
            members,
        )
    }

    /// `create_event_tc(id, name, type_modifier, concrete_base, members)`.
    pub fn create_event_tc(
        id: &str,
        name: &str,
        type_modifier: i16,
        concrete_base: Option<TypeCode>,
        members: Vec<ValueMember>,
    ) -> TcResult<TypeCode> {
        Self::value_like(
            TcKind::Event,
            id,
            name,
            type_modifier,
            concrete_base,
            members,
        )
    }

    fn value_like(
        kind: TcKind,
        id: &str,
        name: &str,
        type_modifier: i16,
        concrete_base: Option<TypeCode>,
        members: Vec<ValueMember>,
    ) -> TcResult<TypeCode> {
        check_id(id, false)?;
        check_name(name)?;
        if !(0..=3).contains(&type_modifier) {
            return Err(bad(
                minor::BAD_PARAM_TYPECODE_ARGUMENT,
                "bad value type modifier",
            ));
        }
        check_unique(members.iter().map(|m| m.name.as_str()))?;
        let base = match concrete_base {
            Some(b) if b.kind() == TcKind::Null && !b.is_unresolved_recursive() => None,
            Some(b) if matches!(b.kind(), TcKind::Value | TcKind::Event) => Some(b.closed_node()),
            Some(_) => {
                return Err(bad(
                    minor::BAD_PARAM_TYPECODE_ARGUMENT,
                    "concrete base must be a value type",
                ))
            }
            None => None,
        };
        let mut ms = Vec::with_capacity(members.len());
        for m in members {
            check_name(&m.name)?;
            check_member_type(&m.ty)?;
            if !(0..=1).contains(&m.visibility) {
                return Err(bad(
                    minor::BAD_PARAM_TYPECODE_ARGUMENT,
                    "bad member visibility",
                ));
            }
            ms.push(VMember {
                name: m.name,
                ty: m.ty.closed_node(),
                visibility: m.visibility,
            });
        }
        Ok(TypeCode::from_node(Node::new(
            kind,
            Body::Value {
                id: id.into(),
                name: name.into(),
                modifier: type_modifier,
                base,
                members: ms.into_boxed_slice(),
            },
        )))
    }

    /// `create_value_box_tc(id, name, boxed_type)`.
    pub fn create_value_box_tc(
        id: &str,
        name: &str,
        boxed_type: impl Into<TypeCode>,
    ) -> TcResult<TypeCode> {
        check_id(id, false)?;
        check_name(name)?;
        let t = boxed_type.into();
        if matches!(t.kind(), TcKind::Value | TcKind::ValueBox | TcKind::Event) {
            return Err(bad(
                minor::BAD_PARAM_TYPECODE_ARGUMENT,
                "a value box cannot box a value type",
            ));
        }
        check_member_type(&t)?;
        Ok(TypeCode::from_node(Node::new(
            TcKind::ValueBox,
            Body::Alias {
                id: id.into(),
                name: name.into(),
                content: t.closed_node(),
            },
        )))
    }

    /// `create_recursive_tc(id)`: a reference to the enclosing struct, union or value type
    /// with repository id `id`, to embed (inside a sequence, or a value member) in that
    /// type's own definition.
    pub fn create_recursive_tc(id: &str) -> TypeCode {
        TypeCode::from_node(Node::new(TcKind::Null, Body::Recursive { id: id.into() }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factory_checks() {
        assert!(TypeCode::create_struct_tc("", "S", vec![]).is_err());
        assert!(TypeCode::create_struct_tc("IDL:S:1.0", "9S", vec![]).is_err());
        let dup = vec![
            StructMember::new("a", TypeCode::LONG),
            StructMember::new("A", TypeCode::SHORT),
        ];
        assert!(matches!(
            TypeCode::create_struct_tc("IDL:S:1.0", "S", dup),
            Err(TypeCodeError::BadParam {
                minor: minor::BAD_PARAM_BAD_MEMBER_NAME,
                ..
            })
        ));
        let void = vec![StructMember::new("a", TypeCode::VOID)];
        assert!(TypeCode::create_struct_tc("IDL:S:1.0", "S", void).is_err());
        assert!(TypeCode::create_fixed_tc(32, 0).is_err());
        assert!(TypeCode::create_array_tc(0, TypeCode::LONG).is_err());
        assert!(TypeCode::create_enum_tc::<&str>("IDL:E:1.0", "E", &[]).is_err());
        let two_defaults = vec![
            UnionMember::new("a", UnionLabel::Default, TypeCode::LONG),
            UnionMember::new("b", UnionLabel::Default, TypeCode::LONG),
        ];
        assert!(TypeCode::create_union_tc("IDL:U:1.0", "U", TypeCode::LONG, two_defaults).is_err());
        let out_of_range = vec![UnionMember::new("a", UnionLabel::Value(2), TypeCode::LONG)];
        assert!(
            TypeCode::create_union_tc("IDL:U:1.0", "U", TypeCode::BOOLEAN, out_of_range).is_err()
        );
        let dup_label = vec![
            UnionMember::new("a", UnionLabel::Value(1), TypeCode::LONG),
            UnionMember::new("b", UnionLabel::Value(1), TypeCode::LONG),
        ];
        assert!(TypeCode::create_union_tc("IDL:U:1.0", "U", TypeCode::LONG, dup_label).is_err());
        assert!(TypeCode::create_union_tc("IDL:U:1.0", "U", TypeCode::DOUBLE, vec![]).is_err());
    }
}
