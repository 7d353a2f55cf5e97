//! Straight-line encode statements and decode expressions for one value of an IDL type.

use crate::context::Gen;
use corbina_idl::model::DefinitionKind;
use corbina_idl::Type;

const ENC: &str = "::corbina::cdr::CdrEncode";
const DEC: &str = "::corbina::cdr::CdrDecode";
const ERR: &str = "::corbina::cdr::MarshalError";

/// How generated code reaches a value being encoded.
pub struct Val {
    /// The value itself (`self.x`, `*s`).
    pub place: String,
    /// A shared reference to it (`&self.x`, `s`).
    pub reference: String,
    /// A method receiver (`self.x`, `s`).
    pub recv: String,
}

impl Val {
    /// A place expression such as `self.x`.
    pub fn owned(place: &str) -> Val {
        Val {
            place: place.into(),
            reference: format!("&{place}"),
            recv: place.into(),
        }
    }

    /// A variable holding a shared reference.
    pub fn borrowed(var: &str) -> Val {
        Val {
            place: format!("*{var}"),
            reference: var.into(),
            recv: var.into(),
        }
    }

    /// A variable holding a `&mut` reference (read only here).
    pub fn inout(var: &str) -> Val {
        Val {
            place: format!("*{var}"),
            reference: format!("&*{var}"),
            recv: var.into(),
        }
    }
}

/// The writer or reader method for a primitive, and its Rust type.
pub fn primitive(ty: &Type) -> Option<(&'static str, &'static str)> {
    Some(match ty {
        Type::Short => ("short", "i16"),
        Type::UShort => ("ushort", "u16"),
        Type::Long => ("long", "i32"),
        Type::ULong => ("ulong", "u32"),
        Type::LongLong => ("longlong", "i64"),
        Type::ULongLong => ("ulonglong", "u64"),
        Type::Float => ("float", "f32"),
        Type::Double => ("double", "f64"),
        _ => return None,
    })
}

/// `MarshalError::BoundExceeded` for `len` against `bound`.
pub fn bound_error(len: &str, bound: u32) -> String {
    format!("{ERR}::BoundExceeded {{ length: {len} as u64, bound: {bound} }}")
}

fn bound_check(len: &str, bound: Option<u32>) -> Option<String> {
    bound.map(|b| {
        format!(
            "if {len} > {b} {{\n    return Err({});\n}}",
            bound_error(len, b)
        )
    })
}

/// A decode-side bound check: an overlong value from the wire is `MARSHAL` (the encode side's
/// `BoundExceeded` is `BAD_PARAM`). Written with `?` so it works where the error type is
/// `MarshalError` and where it is `SystemException` (skeletons).
pub fn decode_bound_check(len: &str, bound: Option<u32>, r: &str) -> Option<String> {
    bound.map(|b| {
        format!(
            "if {len} > {b} {{\n    Err::<(), _>({ERR}::InvalidValue {{ offset: {r}.position(), reason: \"longer than its IDL bound\" }})?;\n}}"
        )
    })
}

impl Gen<'_> {
    /// Writes statements encoding `v` (of IDL type `ty`) with writer `w`.
    pub fn encode_value(&mut self, ty: &Type, v: &Val, w: &str, depth: usize) {
        let ty = self.resolve(ty).clone();
        let (p, r, recv) = (&v.place, &v.reference, &v.recv);
        let line = match &ty {
            t if self.local_ref(t).is_some() => {
                format!("::corbina::local::write_local({w}, {r})?;")
            }
            t if self.objref(t).is_some() => format!(
                "::corbina::object::write_ref::<{}>({w}, {r})?;",
                self.objref(t).unwrap_or_default()
            ),
            t if primitive(t).is_some() => {
                format!("{w}.write_{}({p});", primitive(t).map_or("", |x| x.0))
            }
            Type::Boolean => format!("{w}.write_boolean({p});"),
            Type::Octet | Type::Char => format!("{w}.write_octet({p});"),
            Type::WChar => format!("{w}.write_wchar({p})?;"),
            Type::LongDouble => format!("{w}.write_long_double({p});"),
            t if self.is_enum(t) => format!("{w}.write_ulong({p} as u32);"),
            Type::String { bound: None } => format!("{w}.write_string({r})?;"),
            Type::String { bound: Some(b) } => format!("{w}.write_bounded_string({r}, {b})?;"),
            Type::WString { bound } => {
                if let Some(c) = bound_check(&format!("{recv}.chars().count()"), *bound) {
                    self.out.line(c);
                }
                format!("{w}.write_wstring({r})?;")
            }
            Type::Fixed { digits, scale } => {
                self.out.open(format!(
                    "if {recv}.digits != {digits} || {recv}.scale != {scale}"
                ));
                self.out.line(format!(
                    "return Err({ERR}::InvalidFixed {{ offset: {w}.position(), reason: \"value is not a fixed<{digits},{scale}>\" }});"
                ));
                self.out.close();
                format!("{recv}.encode({w})?;")
            }
            Type::Sequence { elem, bound } => {
                if let Some(c) = bound_check(&format!("{recv}.len()"), *bound) {
                    self.out.line(c);
                }
                let elem = self.resolve(elem).clone();
                match &elem {
                    Type::Octet | Type::Char => format!("{w}.write_octet_seq({r})?;"),
                    Type::Boolean => format!("{w}.write_boolean_seq({r})?;"),
                    t if primitive(t).is_some() => format!("{w}.write_primitive_seq({r})?;"),
                    _ => {
                        self.out.line(format!("{w}.write_length({recv}.len())?;"));
                        if self.plain(&elem) {
                            format!(
                                "<{} as {ENC}>::encode_slice({r}, {w})?;",
                                self.rust_type(&elem)
                            )
                        } else {
                            let item = format!(
                                "item{}",
                                if depth == 0 {
                                    String::new()
                                } else {
                                    depth.to_string()
                                }
                            );
                            self.out.open(format!("for {item} in {recv}.iter()"));
                            self.encode_value(&elem, &Val::borrowed(&item), w, depth + 1);
                            self.out.close();
                            return;
                        }
                    }
                }
            }
            Type::Array { elem, dims } => {
                if self.plain(&ty) {
                    format!("{ENC}::encode({r}, {w})?;")
                } else {
                    let inner = if dims.len() > 1 {
                        Type::Array {
                            elem: elem.clone(),
                            dims: dims[1..].to_vec(),
                        }
                    } else {
                        (**elem).clone()
                    };
                    let item = format!(
                        "item{}",
                        if depth == 0 {
                            String::new()
                        } else {
                            depth.to_string()
                        }
                    );
                    self.out.open(format!("for {item} in {recv}.iter()"));
                    self.encode_value(&inner, &Val::borrowed(&item), w, depth + 1);
                    self.out.close();
                    return;
                }
            }
            _ => format!("{ENC}::encode({r}, {w})?;"),
        };
        self.out.line(line);
    }

    /// An expression decoding one value of `ty` with reader `r` (may span several lines).
    pub fn decode_value(&self, ty: &Type, r: &str) -> String {
        if let Some(t) = self.local_ref(ty) {
            return format!("::corbina::local::read_local::<{t}>({r})?");
        }
        if let Some(t) = self.objref(ty) {
            return format!("::corbina::object::read_ref::<{t}>({r})?");
        }
        let ty = self.resolve(ty);
        match ty {
            t if primitive(t).is_some() => {
                format!("{r}.read_{}()?", primitive(t).map_or("", |x| x.0))
            }
            Type::Boolean => format!("{r}.read_boolean()?"),
            Type::Octet | Type::Char => format!("{r}.read_octet()?"),
            Type::WChar => format!("{r}.read_wchar()?"),
            Type::LongDouble => format!("{r}.read_long_double()?"),
            Type::String { bound: None } => format!("{r}.read_string()?"),
            Type::String { bound } => block(&[
                format!("let s = {r}.read_string()?;"),
                decode_bound_check("s.chars().count()", *bound, r).unwrap_or_default(),
                "s".into(),
            ]),
            Type::WString { bound: None } => format!("{r}.read_wstring()?"),
            Type::WString { bound } => block(&[
                format!("let s = {r}.read_wstring()?;"),
                decode_bound_check("s.chars().count()", *bound, r).unwrap_or_default(),
                "s".into(),
            ]),
            Type::Fixed { digits, scale } => {
                format!("::corbina::Fixed::decode({r}, {digits}, {scale})?")
            }
            Type::Sequence { elem, bound } => self.decode_sequence(elem, *bound, r),
            Type::Array { elem, dims } => {
                let t = self.rust_type(ty);
                if self.plain(ty) {
                    return format!("<{t} as {DEC}>::decode({r})?");
                }
                let inner = if dims.len() > 1 {
                    Type::Array {
                        elem: elem.clone(),
                        dims: dims[1..].to_vec(),
                    }
                } else {
                    (**elem).clone()
                };
                let it = self.rust_type(&inner);
                let n = dims[0];
                block(&[
                    format!("let mut v = ::std::vec::Vec::with_capacity({n});"),
                    format!("for _ in 0..{n} {{\n{}\n}}", indent(&format!("v.push({});", self.decode_value(&inner, r)))),
                    format!("let offset = {r}.position();"),
                    format!(
                        "<{t} as ::core::convert::TryFrom<::std::vec::Vec<{it}>>>::try_from(v)\n    .map_err(|_| {ERR}::InvalidValue {{ offset, reason: \"array length\" }})?"
                    ),
                ])
            }
            _ => format!("<{} as {DEC}>::decode({r})?", self.rust_type(ty)),
        }
    }

    fn decode_sequence(&self, elem: &Type, bound: Option<u32>, r: &str) -> String {
        let elem = self.resolve(elem);
        let checked = |read: String, len: &str| match decode_bound_check(len, bound, r) {
            None => read,
            Some(c) => block(&[format!("let s = {read};"), c, "s".into()]),
        };
        match elem {
            Type::Octet | Type::Char => match bound {
                None => format!("{r}.read_octet_seq()?.to_vec()"),
                Some(_) => block(&[
                    format!("let s = {r}.read_octet_seq()?;"),
                    decode_bound_check("s.len()", bound, r).unwrap_or_default(),
                    "s.to_vec()".into(),
                ]),
            },
            Type::Boolean => checked(format!("{r}.read_boolean_seq()?"), "s.len()"),
            t if primitive(t).is_some() => checked(
                format!(
                    "{r}.read_primitive_seq::<{}>()?",
                    primitive(t).map_or("", |x| x.1)
                ),
                "s.len()",
            ),
            _ => {
                let et = self.rust_type(elem);
                if self.plain(elem) && bound.is_none() {
                    return format!("<::std::vec::Vec<{et}> as {DEC}>::decode({r})?");
                }
                let min = self.min_wire_size(elem).max(1);
                let mut lines = vec![format!("let n = {r}.read_length({min})?;")];
                lines.extend(decode_bound_check("n", bound, r));
                lines.push(format!("{r}.enter()?;"));
                if self.plain(elem) {
                    lines.push(format!("let v = <{et} as {DEC}>::decode_vec({r}, n);"));
                    lines.push(format!("{r}.leave();"));
                    lines.push("v?".into());
                } else {
                    lines.push(format!(
                        "let mut v = ::std::vec::Vec::with_capacity(::corbina::cdr::prealloc_count::<{et}>(n));"
                    ));
                    lines.push(format!(
                        "for _ in 0..n {{\n{}\n}}",
                        indent(&format!("v.push({});", self.decode_value(elem, r)))
                    ));
                    lines.push(format!("{r}.leave();"));
                    lines.push("v".into());
                }
                block(&lines)
            }
        }
    }

    /// Whether `ty` (resolved) is an enum.
    pub fn is_enum(&self, ty: &Type) -> bool {
        match self.resolve(ty) {
            Type::Named { name, .. } => {
                matches!(
                    self.lookup(name).map(|d| &d.kind),
                    Some(DefinitionKind::Enum(_))
                )
            }
            _ => false,
        }
    }
}

/// Indents every non-empty line by four spaces.
pub fn indent(s: &str) -> String {
    s.split('\n')
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("    {l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A block expression `{ lines }`.
pub fn block(lines: &[String]) -> String {
    let body: Vec<String> = lines
        .iter()
        .filter(|l| !l.is_empty())
        .map(|l| indent(l))
        .collect();
    format!("{{\n{}\n}}", body.join("\n"))
}
