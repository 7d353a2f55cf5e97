//! Structs, exceptions, enums, unions, typedefs and constants.

use crate::context::Gen;
use crate::marshal::Val;
use crate::names::{camel, unique};
use crate::naming::{enumerator_names, member_names};
use corbina_idl::model::{CaseLabel, Const, Definition, DefinitionKind, Enum, Member, Union};
use corbina_idl::{ConstValue, Type};

const ENC_FN: &str =
    "fn encode<'a>(&'a self, w: &mut ::corbina::cdr::CdrWriter<'a>) -> ::corbina::cdr::Result<()>";

impl Gen<'_> {
    fn check_members(&mut self, def: &Definition, members: &[Member]) -> bool {
        let mut ok = true;
        for m in members {
            ok &= self.check_type(
                &m.ty,
                &m.loc,
                &format!("member '{}' of '{}'", m.name, def.scoped_name),
            );
        }
        ok
    }

    fn doc(&mut self, what: &str, def: &Definition) {
        self.out.line(format!(
            "/// IDL {what} `{}` (`{}`).",
            def.scoped_name, def.repository_id
        ));
    }

    /// A struct (`exception: false`) or an exception.
    pub fn gen_struct(&mut self, def: &Definition, members: &[Member], exception: bool) {
        if !self.check_members(def, members) {
            return;
        }
        let name = self.names.item(&def.scoped_name);
        let fields = member_names(members);
        let ty = corbina_idl::Type::Named {
            name: def.scoped_name.clone(),
            kind: corbina_idl::model::NamedKind::Struct,
        };
        let caps = if exception {
            members.iter().fold(self.caps(&Type::Boolean), |c, m| {
                let mc = self.caps(&m.ty);
                crate::context::Caps {
                    default: c.default && mc.default,
                    eq: c.eq && mc.eq,
                    copy: false,
                }
            })
        } else {
            self.caps(&ty)
        };
        self.doc(if exception { "exception" } else { "struct" }, def);
        self.out.line(caps.derives(!exception));
        if members.is_empty() {
            self.out.line(format!("pub struct {name} {{}}"));
        } else {
            self.out.open(format!("pub struct {name}"));
            for (m, f) in members.iter().zip(&fields) {
                let t = self.rust_type(&m.ty);
                self.out.line(format!("pub {f}: {t},"));
            }
            self.out.close();
        }
        self.out.blank();
        if exception {
            self.out
                .open(format!("impl ::core::fmt::Display for {name}"));
            self.out
                .open("fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result");
            self.out.line(format!(
                "write!(f, \"IDL exception {}: {{self:?}}\")",
                def.scoped_name
            ));
            self.out.close();
            self.out.close();
            self.out.blank();
            self.out
                .line(format!("impl ::std::error::Error for {name} {{}}"));
            self.out.blank();
            self.out
                .open(format!("impl ::corbina::UserException for {name}"));
            self.out.line(format!(
                "const REPOSITORY_ID: &'static str = {:?};",
                def.repository_id
            ));
            self.out.close();
            self.out.blank();
            self.out.open(format!("impl {name}"));
            self.gen_type_code_fn(def);
            self.out.close();
        } else {
            self.out.open(format!("impl {name}"));
            self.out.line("/// The repository id.");
            self.out.line(format!(
                "pub const REPOSITORY_ID: &'static str = {:?};",
                def.repository_id
            ));
            self.out.blank();
            self.gen_type_code_fn(def);
            self.out.close();
        }
        self.out.blank();
        let layout = match (&def.kind, exception) {
            (DefinitionKind::Struct(s), false) => self.struct_layout(s),
            _ => None,
        };
        if let Some(l) = &layout {
            self.out.line(format!(
                "// Fixed layout: {} bytes from a {}-aligned start, stride {}; offsets {}.",
                l.size,
                l.align,
                l.stride,
                self.offsets_comment(members, &fields)
            ));
        }
        if exception {
            self.out.line(
                "/// Writes the repository id, then the members (a user exception reply body).",
            );
        }
        self.out
            .open(format!("impl ::corbina::cdr::CdrEncode for {name}"));
        let w = if members.is_empty() && !exception {
            "_w"
        } else {
            "w"
        };
        self.out.open(ENC_FN.replacen("w:", &format!("{w}:"), 1));
        if exception {
            self.out.line("::corbina::exception::write_exception_id(w, <Self as ::corbina::UserException>::REPOSITORY_ID)?;");
        }
        // Values in the members share one stream state: one reachable twice is sent once.
        let shared_values = !exception && self.struct_holds_values(def);
        if shared_values {
            self.out.line("::corbina::valuetype::ValueMember::write_member(self, w, &mut ::corbina::valuetype::ValueOutput::new())");
        } else {
            for (m, f) in members.iter().zip(&fields) {
                self.encode_value(&m.ty, &Val::owned(&format!("self.{f}")), "w", 0);
            }
            self.out.line("Ok(())");
        }
        self.out.close();
        if let Some(l) = &layout {
            self.out.blank();
            self.write_block_encode(l);
        }
        self.out.close();
        self.out.blank();
        if exception {
            self.out
                .line("/// Reads the members (the repository id has been read already).");
        }
        self.out
            .open(format!("impl<'a> ::corbina::cdr::CdrDecode<'a> for {name}"));
        let min: usize = members.iter().map(|m| self.min_wire_size(&m.ty)).sum();
        self.out
            .line(format!("const MIN_WIRE_SIZE: usize = {};", min.max(1)));
        let r = if members.is_empty() { "_r" } else { "r" };
        self.out.open(format!(
            "fn decode({r}: &mut ::corbina::cdr::CdrReader<'a>) -> ::corbina::cdr::Result<Self>"
        ));
        if members.is_empty() {
            self.out.line("Ok(Self {})");
        } else if shared_values {
            self.out.line("::corbina::valuetype::ValueMember::read_member(r, &mut ::corbina::valuetype::ValueInput::new())");
        } else {
            self.out.open("Ok(Self");
            for (m, f) in members.iter().zip(&fields) {
                let d = self.decode_value(&m.ty, "r");
                self.out.line(format!("{f}: {d},"));
            }
            self.out.close_with(")");
        }
        self.out.close();
        if let Some(l) = &layout {
            self.out.blank();
            self.write_block_decode(l);
        }
        self.out.close();
        if !exception {
            self.gen_struct_value_member(def, members);
        }
        self.gen_any_insert(&name);
    }

    fn offsets_comment(&self, members: &[Member], fields: &[String]) -> String {
        // Top-level member offsets (from the precomputed layout) for readers of the code.
        let mut off = 0usize;
        let mut parts = Vec::new();
        for (m, f) in members.iter().zip(fields) {
            let (size, align) = self.size_align(&m.ty);
            off = off.div_ceil(align) * align;
            parts.push(format!("{f}@{off}"));
            off += size;
        }
        parts.join(", ")
    }

    fn size_align(&self, ty: &Type) -> (usize, usize) {
        match self.resolve(ty) {
            Type::Short | Type::UShort => (2, 2),
            Type::Long | Type::ULong | Type::Float => (4, 4),
            Type::LongLong | Type::ULongLong | Type::Double => (8, 8),
            Type::Array { elem, dims } => {
                let (s, a) = self.size_align(elem);
                (dims.iter().fold(s, |s, &d| s * d as usize), a)
            }
            Type::Named { name, .. } => match self.lookup(name).map(|d| &d.kind) {
                Some(DefinitionKind::Enum(_)) => (4, 4),
                Some(DefinitionKind::Struct(s)) => self
                    .struct_layout(s)
                    .map_or((0, 1), |l| (l.size, l.first_align)),
                _ => (1, 1),
            },
            _ => (1, 1),
        }
    }

    pub fn gen_enum(&mut self, def: &Definition, e: &Enum) {
        let name = self.names.item(&def.scoped_name);
        let vars = enumerator_names(e);
        let n = vars.len();
        self.doc("enum", def);
        self.out
            .line("#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]");
        self.out.line("#[repr(u32)]");
        self.out.open(format!("pub enum {name}"));
        for (i, v) in vars.iter().enumerate() {
            if i == 0 {
                self.out.line("#[default]");
            }
            self.out.line(format!("{v} = {i},"));
        }
        self.out.close();
        self.out.blank();
        self.out.open(format!("impl {name}"));
        self.out.line("/// The repository id.");
        self.out.line(format!(
            "pub const REPOSITORY_ID: &'static str = {:?};",
            def.repository_id
        ));
        self.out.line("/// Every enumerator, in order.");
        let all: Vec<String> = vars.iter().map(|v| format!("Self::{v}")).collect();
        self.out.line(format!(
            "pub const VALUES: [Self; {n}] = [{}];",
            all.join(", ")
        ));
        self.out.blank();
        self.gen_type_code_fn(def);
        self.out.close();
        self.out.blank();
        self.out
            .open(format!("impl ::core::convert::TryFrom<u32> for {name}"));
        self.out.line("type Error = u32;");
        self.out
            .open("fn try_from(v: u32) -> ::core::result::Result<Self, u32>");
        self.out.open("match v");
        for (i, v) in vars.iter().enumerate() {
            self.out.line(format!("{i} => Ok(Self::{v}),"));
        }
        self.out.line("_ => Err(v),");
        self.out.close();
        self.out.close();
        self.out.close();
        self.out.blank();
        self.out
            .open(format!("impl ::corbina::cdr::CdrEncode for {name}"));
        self.out.open(ENC_FN);
        self.out.line("w.write_ulong(*self as u32);");
        self.out.line("Ok(())");
        self.out.close();
        self.out.close();
        self.out.blank();
        self.out
            .open(format!("impl<'a> ::corbina::cdr::CdrDecode<'a> for {name}"));
        self.out.line("const MIN_WIRE_SIZE: usize = 4;");
        self.out.open(
            "fn decode(r: &mut ::corbina::cdr::CdrReader<'a>) -> ::corbina::cdr::Result<Self>",
        );
        self.out.open(format!("Ok(match r.read_enum({n})?"));
        for (i, v) in vars.iter().enumerate() {
            let pat = if i + 1 == n {
                "_".to_string()
            } else {
                i.to_string()
            };
            self.out.line(format!("{pat} => Self::{v},"));
        }
        self.out.close_with(")");
        self.out.close();
        self.out.close();
        self.gen_any_insert(&name);
    }

    /// A label value as a Rust literal or path of the discriminator's type.
    pub(crate) fn literal(&self, v: &ConstValue, ty: &Type) -> String {
        match v {
            ConstValue::Integer(i) => match (self.resolve(ty), *i) {
                (Type::LongLong, i) if i == i128::from(i64::MIN) => "i64::MIN".into(),
                (Type::Long, i) if i == i128::from(i32::MIN) => "i32::MIN".into(),
                (Type::Short, i) if i == i128::from(i16::MIN) => "i16::MIN".into(),
                (_, i) => i.to_string(),
            },
            ConstValue::Float(f) => {
                if f.is_nan() {
                    "f64::NAN".into()
                } else if f.is_infinite() {
                    if *f > 0.0 {
                        "f64::INFINITY".into()
                    } else {
                        "f64::NEG_INFINITY".into()
                    }
                } else {
                    format!("{f:?}")
                }
            }
            ConstValue::Fixed(fx) => {
                let (digits, scale) = match self.resolve(ty) {
                    Type::Fixed { digits, scale } if *digits > 0 => (*digits, *scale),
                    _ => {
                        let d = fx.value.unsigned_abs().to_string().len() as u16;
                        (d.max(fx.scale).max(1), fx.scale)
                    }
                };
                format!(
                    "::corbina::Fixed {{ value: {}, digits: {digits}, scale: {scale} }}",
                    fx.value
                )
            }
            ConstValue::Char(c) => {
                if c.is_ascii_graphic() && *c != b'\'' && *c != b'\\' {
                    format!("b'{}'", *c as char)
                } else {
                    format!("b'\\x{c:02x}'")
                }
            }
            ConstValue::Octet(o) => o.to_string(),
            ConstValue::WChar(c) => format!("{c:?}"),
            ConstValue::String(s) | ConstValue::WString(s) => format!("{s:?}"),
            ConstValue::Boolean(b) => b.to_string(),
            ConstValue::Enum {
                enum_name,
                enumerator,
                ..
            } => {
                let variant = match self.lookup(enum_name).map(|d| &d.kind) {
                    Some(DefinitionKind::Enum(e)) => e
                        .enumerators
                        .iter()
                        .position(|x| x == enumerator)
                        .map(|i| enumerator_names(e).swap_remove(i)),
                    _ => None,
                };
                let variant = variant.unwrap_or_else(|| camel(enumerator));
                format!("{}::{variant}", self.type_path(enum_name))
            }
        }
    }

    pub fn gen_const(&mut self, def: &Definition, c: &Const) {
        let t = match self.resolve(&c.ty) {
            Type::String { .. } | Type::WString { .. } => "&str".to_string(),
            _ => self.rust_type(&c.ty),
        };
        self.out.line(format!(
            "/// IDL constant `{}` = `{}`.",
            def.scoped_name, c.value
        ));
        self.out.line(format!(
            "pub const {}: {t} = {};",
            self.names.item(&def.scoped_name),
            self.literal(&c.value, &c.ty)
        ));
    }

    pub fn gen_alias(&mut self, def: &Definition, ty: &Type) {
        if !self.check_type(ty, &def.loc, &format!("typedef '{}'", def.scoped_name)) {
            return;
        }
        self.out.line(format!(
            "/// IDL typedef `{}` (`{}`).",
            def.scoped_name, def.repository_id
        ));
        self.out.line(format!(
            "pub type {} = {};",
            self.names.item(&def.scoped_name),
            self.rust_type(ty)
        ));
        self.out.blank();
        self.gen_alias_type_code(def);
        self.gen_alias_any(def, ty);
    }

    /// `<alias>_insert` and `<alias>_extract`: the typedef's values in an `Any` with the
    /// alias TypeCode. A typedef names no Rust type of its own (`Vec<T>` cannot implement
    /// `AnyInsert` here), so these are functions, marshalling as the IDL type says.
    fn gen_alias_any(&mut self, def: &Definition, ty: &Type) {
        let tc_fn = self.names.alias_fn(&def.scoped_name);
        let stem = tc_fn
            .rfind("_type_code")
            .map_or(tc_fn.as_str(), |i| &tc_fn[..i]);
        let rest = &tc_fn[stem.len() + "_type_code".len()..];
        let (ins, ext) = (
            format!("{stem}_insert{rest}"),
            format!("{stem}_extract{rest}"),
        );
        let alias = self.names.item(&def.scoped_name);
        self.out.blank();
        self.out.line(format!(
            "/// An `Any` holding `v` as typedef `{}` (its alias TypeCode).",
            def.scoped_name
        ));
        self.out.open(format!(
            "pub fn {ins}(v: &{alias}) -> ::corbina::cdr::Result<::corbina::Any>"
        ));
        // `_V`: a leading underscore, which no IDL-derived name has.
        self.out.line(format!("struct _V<'v>(&'v {alias});"));
        self.out.open("impl ::corbina::cdr::CdrEncode for _V<'_>");
        self.out.open(ENC_FN);
        self.out.line("let v = self.0;");
        self.encode_value(ty, &Val::borrowed("v"), "w", 0);
        self.out.line("Ok(())");
        self.out.close();
        self.out.close();
        self.out
            .line(format!("::corbina::Any::insert_as({tc_fn}(), &_V(v))"));
        self.out.close();
        self.out.blank();
        self.out.line(format!(
            "/// The value of an `Any` whose TypeCode is equivalent to typedef `{}`'s.",
            def.scoped_name
        ));
        self.out.open(format!(
            "pub fn {ext}(a: &::corbina::Any) -> ::core::option::Option<{alias}>"
        ));
        self.out.line(format!("struct _V({alias});"));
        self.out
            .open("impl<'a> ::corbina::cdr::CdrDecode<'a> for _V");
        self.out.line(format!(
            "const MIN_WIRE_SIZE: usize = {};",
            self.min_wire_size(ty).max(1)
        ));
        self.out.open(
            "fn decode(r: &mut ::corbina::cdr::CdrReader<'a>) -> ::corbina::cdr::Result<Self>",
        );
        let d = self.decode_value(ty, "r");
        self.out.line(format!("Ok(_V({d}))"));
        self.out.close();
        self.out.close();
        self.out
            .line(format!("a.extract_as::<_V>(&{tc_fn}()).map(|v| v.0)"));
        self.out.close();
    }

    /// A union's variants as [`Gen::gen_union`] maps them (names, label patterns, whether the
    /// variant keeps the discriminator).
    pub(crate) fn union_shape(&self, u: &Union) -> UnionShape {
        let disc = self.resolve(&u.discriminator).clone();
        let labels: Vec<&ConstValue> = u
            .cases
            .iter()
            .flat_map(|c| c.labels.iter())
            .filter_map(|l| match l {
                CaseLabel::Value(v) => Some(v),
                CaseLabel::Default => None,
            })
            .collect();
        let covered = match &disc {
            Type::Boolean => labels.len() >= 2,
            Type::Named { name, .. } => match self.lookup(name).map(|d| &d.kind) {
                Some(DefinitionKind::Enum(e)) => labels.len() >= e.enumerators.len(),
                _ => false,
            },
            Type::Char | Type::Octet => labels.len() >= 256,
            _ => false,
        };
        let has_default = u
            .cases
            .iter()
            .any(|c| c.labels.contains(&CaseLabel::Default));
        let all_pats: Vec<String> = labels.iter().map(|v| self.literal(v, &disc)).collect();
        let implicit_default = !has_default && !covered;
        let reserved: &[&str] = if implicit_default { &["Default_"] } else { &[] };
        let names = unique(u.cases.iter().map(|c| camel(&c.member.name)), reserved);
        let vars = u
            .cases
            .iter()
            .zip(names)
            .map(|(c, name)| {
                let is_default = c.labels.contains(&CaseLabel::Default);
                let pats: Vec<String> = c
                    .labels
                    .iter()
                    .filter_map(|l| match l {
                        CaseLabel::Value(v) => Some(self.literal(v, &disc)),
                        CaseLabel::Default => None,
                    })
                    .collect();
                UnionVariant {
                    name,
                    holds_disc: is_default || pats.len() > 1,
                    pats,
                    is_default,
                    ty: c.member.ty.clone(),
                }
            })
            .collect();
        UnionShape {
            disc,
            vars,
            all_pats,
            implicit_default,
            covered,
        }
    }

    /// `Ok(match d { … })`: the variant of `vars` that discriminator `d` selects, its member
    /// read by `read` (an expression for a type).
    pub(crate) fn gen_union_read_match(
        &mut self,
        vars: &[UnionVariant],
        covered: bool,
        implicit_default: bool,
        read: impl Fn(&Self, &Type) -> String,
    ) {
        if covered && vars.iter().any(|v| v.is_default) {
            self.out.line("#[allow(unreachable_patterns)]");
        }
        self.out.open("Ok(match d");
        let mut default_arm = None;
        for v in vars {
            let val = read(self, &v.ty);
            let ctor = if v.holds_disc {
                format!("Self::{}(d, {val})", v.name)
            } else {
                format!("Self::{}({val})", v.name)
            };
            if !v.pats.is_empty() {
                self.out.line(format!("{} => {ctor},", v.pats.join(" | ")));
            }
            if v.is_default {
                default_arm = Some(ctor);
            }
        }
        if let Some(ctor) = default_arm {
            self.out.line(format!("_ => {ctor},"));
        } else if implicit_default {
            self.out.line("_ => Self::Default_(d),");
        }
        self.out.close_with(")");
    }

    pub fn gen_union(&mut self, def: &Definition, u: &Union) {
        let members: Vec<Member> = u.cases.iter().map(|c| c.member.clone()).collect();
        if !self.check_members(def, &members) {
            return;
        }
        let name = self.names.item(&def.scoped_name);
        let dt = self.rust_type(&u.discriminator);
        let UnionShape {
            disc,
            vars,
            all_pats,
            implicit_default,
            covered,
        } = self.union_shape(u);
        for (c, v) in u.cases.iter().zip(&vars) {
            let mapped = camel(&c.member.name);
            if v.name != mapped {
                let idl = def.scoped_name.child(&c.member.name);
                let msg = crate::naming::renamed("the union variant of", &idl, &v.name, &mapped);
                self.warn(&c.member.loc, msg);
            }
        }
        let caps = self.caps(&Type::Named {
            name: def.scoped_name.clone(),
            kind: corbina_idl::model::NamedKind::Union,
        });
        self.doc("union", def);
        self.out.line(caps.derives(true));
        self.out.open(format!("pub enum {name}"));
        for v in &vars {
            let t = self.rust_type(&v.ty);
            let label = if v.is_default {
                "the `default` case; holds the discriminator".to_string()
            } else {
                format!("case {}", v.pats.join(", "))
            };
            self.out.line(format!("/// {label}"));
            if v.holds_disc {
                self.out.line(format!("{}({dt}, {t}),", v.name));
            } else {
                self.out.line(format!("{}({t}),", v.name));
            }
        }
        if implicit_default {
            self.out
                .line("/// No member: a discriminator value that no case label names.");
            self.out.line(format!("Default_({dt}),"));
        }
        self.out.close();
        self.out.blank();
        self.out.open(format!("impl {name}"));
        self.out.line("/// The repository id.");
        self.out.line(format!(
            "pub const REPOSITORY_ID: &'static str = {:?};",
            def.repository_id
        ));
        self.out.blank();
        self.out
            .line("/// The discriminator value sent on the wire.");
        self.out
            .open(format!("pub fn discriminator(&self) -> {dt}"));
        self.out.open("match self");
        for v in &vars {
            if v.holds_disc {
                self.out.line(format!("Self::{}(d, _) => *d,", v.name));
            } else {
                self.out
                    .line(format!("Self::{}(_) => {},", v.name, v.pats[0]));
            }
        }
        if implicit_default {
            self.out.line("Self::Default_(d) => *d,");
        }
        self.out.close();
        self.out.close();
        self.out.blank();
        self.gen_type_code_fn(def);
        self.out.close();
        self.out.blank();
        if self.gen_union_codec_with_values(def, u, &name) {
            return;
        }
        // Encode.
        self.out
            .open(format!("impl ::corbina::cdr::CdrEncode for {name}"));
        self.out.open(ENC_FN);
        self.out.open("match self");
        let bad_disc = "return Err(::corbina::cdr::MarshalError::InvalidValue { offset: w.position(), reason: \"the discriminator does not select this member\" });";
        let mut arms: Vec<(String, Option<String>, Option<&Type>)> = Vec::new();
        for v in &vars {
            if v.holds_disc {
                let check = if v.is_default {
                    (!all_pats.is_empty())
                        .then(|| format!("if matches!(*d, {})", all_pats.join(" | ")))
                } else {
                    Some(format!("if !matches!(*d, {})", v.pats.join(" | ")))
                };
                arms.push((format!("Self::{}(d, v)", v.name), check, Some(&v.ty)));
            } else {
                arms.push((format!("Self::{}(v)", v.name), None, Some(&v.ty)));
            }
        }
        if implicit_default {
            let check = (!all_pats.is_empty())
                .then(|| format!("if matches!(*d, {})", all_pats.join(" | ")));
            arms.push(("Self::Default_(d)".into(), check, None));
        }
        for (i, (pat, check, ty)) in arms.into_iter().enumerate() {
            self.out.open(format!("{pat} =>"));
            if let Some(c) = check {
                self.out.open(c);
                self.out.line(bad_disc);
                self.out.close();
            }
            if pat.contains("(d") {
                self.encode_value(&disc, &Val::borrowed("d"), "w", 0);
            } else {
                self.out.line(format!("let d: {dt} = {};", vars[i].pats[0]));
                self.encode_value(&disc, &Val::owned("d"), "w", 0);
            }
            if let Some(t) = ty {
                self.encode_value(t, &Val::borrowed("v"), "w", 0);
            }
            self.out.close();
        }
        self.out.close();
        self.out.line("Ok(())");
        self.out.close();
        self.out.close();
        self.out.blank();
        // Decode.
        self.out
            .open(format!("impl<'a> ::corbina::cdr::CdrDecode<'a> for {name}"));
        self.out.line(format!(
            "const MIN_WIRE_SIZE: usize = {};",
            self.min_wire_size(&disc)
        ));
        self.out.open(
            "fn decode(r: &mut ::corbina::cdr::CdrReader<'a>) -> ::corbina::cdr::Result<Self>",
        );
        self.out
            .line(format!("let d: {dt} = {};", self.decode_value(&disc, "r")));
        self.gen_union_read_match(&vars, covered, implicit_default, |g, ty| {
            g.decode_value(ty, "r")
        });
        self.out.close();
        self.out.close();
        self.gen_any_insert(&name);
    }
}

/// A union as mapped to a Rust enum (see [`Gen::union_shape`]).
pub(crate) struct UnionShape {
    /// The discriminator's type, typedefs resolved.
    pub disc: Type,
    pub vars: Vec<UnionVariant>,
    /// Every case label, as Rust patterns.
    pub all_pats: Vec<String>,
    /// Whether there is a `Default_` variant (no `default` case, labels not covering the type).
    pub implicit_default: bool,
    /// Whether the labels cover every discriminator value.
    pub covered: bool,
}

/// One case of a union.
pub(crate) struct UnionVariant {
    pub name: String,
    /// Its labels as Rust patterns (none for `default` alone).
    pub pats: Vec<String>,
    /// Whether the variant holds the discriminator (a `default` case, or several labels).
    pub holds_disc: bool,
    pub is_default: bool,
    pub ty: Type,
}
