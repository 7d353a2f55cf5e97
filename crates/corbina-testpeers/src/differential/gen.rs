//! The seeded generator: random TypeCodes and random values of them. One seed gives one
//! case, the same on every machine (SplitMix64, no outside randomness).

use super::model::{value_members, Graph, Node, Typed, Val};
use corbina::giop::Ior;
use corbina::typecode::{StructMember, TcKind, UnionLabel, UnionMember, ValueMember};
use corbina::TypeCode;

/// SplitMix64: small, fast and the same everywhere.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x6a09_e667_f3bc_c908)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability `pct`/100.
    pub fn pct(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
}

/// What the generator may use: the peer's capabilities less its known defects.
#[derive(Debug, Clone)]
pub struct Profile {
    /// `long double` (omniORBpy: BAD_TYPECODE).
    pub long_double: bool,
    /// `long double` sent big-endian (omniORB C++ garbles it); else cases holding one go
    /// little-endian only.
    pub long_double_big_endian: bool,
    /// A union's `default` member may come first (omniORBpy segfaults on it).
    pub default_first: bool,
    /// A union's `default` member may come after other members (JacORB reads the default
    /// label as an octet, not as a discriminator value: after a member whose TypeCode ends
    /// unaligned, an enum's, it misreads the TypeCode).
    pub default_later: bool,
    /// `wchar` inside an `any` (omniORBpy misreads it at GIOP 1.2).
    pub wchar_in_any: bool,
    /// `unsigned long long` values ≥ 2⁶³ in sequences (omniORBpy clamps them).
    pub big_ulonglong_in_seq: bool,
    /// Non-ASCII characters in bounded strings (omniORBpy counts UTF-8 bytes).
    pub non_ascii_bounded: bool,
    /// Valuetypes (shared nodes, cycles, truncatable chains, boxes).
    pub values: bool,
    /// Object references (`objref`, abstract interfaces holding one).
    pub objrefs: bool,
    /// Exceptions in `Any`s (omniORBpy 4.3.3 dies on one: seed 5 at GIOP 1.0).
    pub exceptions: bool,
    /// GIOP 1.1 fragments (Corbina sends GIOP 1.1 messages whole since it cut 8-byte
    /// primitives there, which omniORB refused: seeds 67, 162, 292).
    pub giop_1_1_fragments: bool,
    /// Unions switching on `wchar`.
    pub wchar_disc: bool,
    /// Truncatable value types (chunked values).
    pub truncatable: bool,
    /// `fixed`.
    pub fixed: bool,
    /// Bounded strings and wide strings.
    pub bounded_strings: bool,
    /// Abstract interfaces.
    pub abstract_interfaces: bool,
    /// Abstract interfaces holding values (`dt::ThingNode`, whose factory the peer must
    /// have), besides references and null.
    pub abstract_values: bool,
    /// Non-ASCII characters in strings at GIOP 1.0 (no code set negotiation there).
    pub non_ascii_giop_1_0: bool,
    /// Unions switching on `long long` or `unsigned long long`.
    pub longlong_disc: bool,
    /// Wide characters at GIOP 1.1 (else such cases go at 1.2).
    pub wide_giop_1_1: bool,
    /// Boxed strings that are empty (JacORB's Java strings make two distinct empty boxes
    /// one: it sends the second as an indirection to the first).
    pub empty_string_boxes: bool,
    /// Custom valuetypes (state written as the TypeCode's members, chunked). Off in every
    /// profile: Corbina's `Any` walker skips a custom value but cannot copy one, so only the
    /// raw probe ([`super::probe_custom`]) sends them.
    pub custom_values: bool,
    /// Union discriminators that no label names (the default member, or none): JacORB's
    /// generated unions replace them with one of their own.
    pub unlabelled_disc: bool,
    /// U+FEFF or U+FFFE as a `wchar` or first in a `wstring` (JacORB takes it for a
    /// byte-order mark, `bom-units`): else the generator puts U+FEFC in its place (no draw
    /// more, so every other case stays the same).
    pub bom_units: bool,
    /// Largest nesting of constructed types.
    pub max_depth: u32,
}

impl Profile {
    /// Sets the switch named `name` (its field name); `false` for an unknown name.
    pub fn set(&mut self, name: &str, on: bool) -> bool {
        let f = match name {
            "long_double" => &mut self.long_double,
            "long_double_big_endian" => &mut self.long_double_big_endian,
            "default_first" => &mut self.default_first,
            "default_later" => &mut self.default_later,
            "wchar_in_any" => &mut self.wchar_in_any,
            "big_ulonglong_in_seq" => &mut self.big_ulonglong_in_seq,
            "non_ascii_bounded" => &mut self.non_ascii_bounded,
            "values" => &mut self.values,
            "objrefs" => &mut self.objrefs,
            "exceptions" => &mut self.exceptions,
            "giop_1_1_fragments" => &mut self.giop_1_1_fragments,
            "wchar_disc" => &mut self.wchar_disc,
            "truncatable" => &mut self.truncatable,
            "fixed" => &mut self.fixed,
            "bounded_strings" => &mut self.bounded_strings,
            "abstract_interfaces" => &mut self.abstract_interfaces,
            "abstract_values" => &mut self.abstract_values,
            "non_ascii_giop_1_0" => &mut self.non_ascii_giop_1_0,
            "longlong_disc" => &mut self.longlong_disc,
            "wide_giop_1_1" => &mut self.wide_giop_1_1,
            "unlabelled_disc" => &mut self.unlabelled_disc,
            "custom_values" => &mut self.custom_values,
            "empty_string_boxes" => &mut self.empty_string_boxes,
            "bom_units" => &mut self.bom_units,
            _ => return false,
        };
        *f = on;
        true
    }

    /// Everything: for peers without known defects (and Corbina against itself).
    pub fn full() -> Profile {
        Profile {
            long_double: true,
            long_double_big_endian: true,
            default_first: true,
            default_later: true,
            wchar_in_any: true,
            big_ulonglong_in_seq: true,
            non_ascii_bounded: true,
            values: true,
            objrefs: true,
            exceptions: true,
            giop_1_1_fragments: true,
            wchar_disc: true,
            truncatable: true,
            fixed: true,
            bounded_strings: true,
            abstract_interfaces: true,
            abstract_values: true,
            non_ascii_giop_1_0: true,
            longlong_disc: true,
            wide_giop_1_1: true,
            unlabelled_disc: true,
            custom_values: false,
            empty_string_boxes: true,
            bom_units: true,
            max_depth: 4,
        }
    }
}

/// Builds one random case.
pub struct Gen<'p> {
    pub rng: Rng,
    /// For choices added later (abstract interfaces holding values): drawn from apart, so
    /// that `rng` makes the same cases as before wherever they are not taken.
    aux: Rng,
    profile: &'p Profile,
    /// IORs an object reference may be (besides nil).
    iors: Vec<Ior>,
    next_id: u32,
    /// Value types made so far, to reuse (so values of one type can be shared).
    value_types: Vec<TypeCode>,
    graph: Graph,
    /// Whether the value being made is inside a sequence (for the ulonglong defect).
    in_seq: u32,
}

fn tc_err(e: corbina::typecode::TypeCodeError) -> String {
    e.to_string()
}

impl<'p> Gen<'p> {
    pub fn new(seed: u64, profile: &'p Profile, iors: Vec<Ior>) -> Gen<'p> {
        Gen {
            rng: Rng::new(seed),
            aux: Rng::new(seed ^ 0xbb67_ae85_84ca_a73b),
            profile,
            iors,
            next_id: 0,
            value_types: Vec::new(),
            graph: Graph::default(),
            in_seq: 0,
        }
    }

    fn fresh(&mut self, prefix: &str) -> (String, String) {
        self.next_id += 1;
        let name = format!("{prefix}{}", self.next_id);
        (format!("IDL:dt/{name}:1.0"), name)
    }

    /// One case: a random type and a random value of it.
    pub fn case(&mut self) -> Result<Typed, String> {
        let depth = self.profile.max_depth;
        let tc = self.any_ty(depth)?;
        let val = self.val(&tc, depth + 2)?;
        Ok(Typed {
            tc,
            val,
            graph: std::mem::take(&mut self.graph),
        })
    }

    /// A random value of the given type `tc` (a static type's).
    pub fn typed(&mut self, tc: &TypeCode) -> Result<Typed, String> {
        let val = self.val(tc, self.profile.max_depth + 2)?;
        Ok(Typed {
            tc: tc.clone(),
            val,
            graph: std::mem::take(&mut self.graph),
        })
    }

    fn primitive(&mut self) -> TypeCode {
        loop {
            let k = match self.rng.below(17) {
                0 => TcKind::Short,
                1 => TcKind::UShort,
                2 => TcKind::Long,
                3 => TcKind::ULong,
                4 => TcKind::LongLong,
                5 => TcKind::ULongLong,
                6 => TcKind::Float,
                7 => TcKind::Double,
                8 => TcKind::Boolean,
                9 => TcKind::Char,
                10 => TcKind::Octet,
                11 => TcKind::WChar,
                12 => TcKind::LongDouble,
                13 => {
                    let b = if self.profile.bounded_strings {
                        self.bound()
                    } else {
                        0
                    };
                    return TypeCode::create_string_tc(b);
                }
                14 => {
                    let b = if self.profile.bounded_strings {
                        self.bound()
                    } else {
                        0
                    };
                    return TypeCode::create_wstring_tc(b);
                }
                15 if self.profile.fixed => {
                    let d = self.rng.range(1, 31) as u16;
                    let s = self.rng.range(0, i64::from(d)) as i16;
                    return TypeCode::create_fixed_tc(d, s).expect("valid fixed");
                }
                15 => continue,
                _ => {
                    let (id, name) = self.fresh("E");
                    let n = self.rng.range(1, 6);
                    let ms: Vec<String> = (0..n).map(|i| format!("{name}_e{i}")).collect();
                    return TypeCode::create_enum_tc(&id, &name, &ms).expect("valid enum");
                }
            };
            if k == TcKind::LongDouble && !self.profile.long_double {
                continue;
            }
            if k == TcKind::WChar && !self.profile.wchar_in_any {
                continue;
            }
            return TypeCode::primitive(k);
        }
    }

    fn bound(&mut self) -> u32 {
        if self.rng.pct(30) {
            self.rng.range(1, 12) as u32
        } else {
            0
        }
    }

    /// The type of an `Any`'s value: any type, or now and then an exception (which only an
    /// `Any` may hold).
    pub fn any_ty(&mut self, depth: u32) -> Result<TypeCode, String> {
        if depth > 0 && self.rng.pct(8) && self.profile.exceptions {
            self.struct_ty(depth - 1, true)
        } else {
            self.ty(depth)
        }
    }

    /// A random type nesting at most `depth` constructed types.
    pub fn ty(&mut self, depth: u32) -> Result<TypeCode, String> {
        // References and abstract interfaces: the arm below is reached only without values.
        if depth > 0 && self.profile.objrefs && self.aux.pct(5) {
            return self.objref_ty();
        }
        if depth == 0 || self.rng.pct(30) {
            return Ok(self.primitive());
        }
        let d = depth - 1;
        Ok(match self.rng.below(14) {
            0 | 1 => self.struct_ty(d, false)?,
            2 | 3 => self.union_ty(d)?,
            4 | 5 => {
                let e = self.ty(d)?;
                TypeCode::create_sequence_tc(self.bound(), e)
            }
            6 => {
                let e = self.ty(d)?;
                TypeCode::create_array_tc(self.rng.range(1, 4) as u32, e).map_err(tc_err)?
            }
            7 => {
                let (id, name) = self.fresh("A");
                let t = self.ty(d)?;
                TypeCode::create_alias_tc(&id, &name, t).map_err(tc_err)?
            }
            8 => TypeCode::primitive(TcKind::Any),
            9 => TypeCode::primitive(TcKind::TypeCode),
            10 => self.recursive_struct(d)?,
            11 => self.struct_ty(d, false)?,
            12 | 13 if self.profile.values => self.value_ty(d)?,
            _ if self.profile.objrefs => self.objref_ty()?,
            _ => self.primitive(),
        })
    }

    /// An interface (`AnyEcho`) or, when the profile has them, the abstract interface
    /// `Thing`.
    fn objref_ty(&mut self) -> Result<TypeCode, String> {
        if self.rng.pct(50) || !self.profile.abstract_interfaces {
            TypeCode::create_interface_tc("IDL:dt/AnyEcho:1.0", "AnyEcho").map_err(tc_err)
        } else {
            TypeCode::create_abstract_interface_tc(super::thing::THING_ID, "Thing").map_err(tc_err)
        }
    }

    fn struct_ty(&mut self, d: u32, except: bool) -> Result<TypeCode, String> {
        let (id, name) = self.fresh(if except { "X" } else { "S" });
        let n = self.rng.range(if except { 0 } else { 1 }, 4);
        let mut ms = Vec::new();
        for i in 0..n {
            ms.push(StructMember::new(format!("m{i}"), self.ty(d)?));
        }
        if except {
            TypeCode::create_exception_tc(&id, &name, ms).map_err(tc_err)
        } else {
            TypeCode::create_struct_tc(&id, &name, ms).map_err(tc_err)
        }
    }

    /// `struct R { T v; sequence<R> kids; }`.
    fn recursive_struct(&mut self, d: u32) -> Result<TypeCode, String> {
        let (id, name) = self.fresh("R");
        let v = self.ty(d.min(1))?;
        TypeCode::create_struct_tc(
            &id,
            &name,
            vec![
                StructMember::new("v", v),
                StructMember::new(
                    "kids",
                    TypeCode::create_sequence_tc(0, TypeCode::create_recursive_tc(&id)),
                ),
            ],
        )
        .map_err(tc_err)
    }

    fn union_ty(&mut self, d: u32) -> Result<TypeCode, String> {
        let (id, name) = self.fresh("U");
        let (disc, lo, hi): (TypeCode, i128, i128) = match self.rng.below(10) {
            0 => (TypeCode::primitive(TcKind::Short), -32768, 32767),
            1 => (TypeCode::primitive(TcKind::UShort), 0, 65535),
            2 => (
                TypeCode::primitive(TcKind::Long),
                i32::MIN.into(),
                i32::MAX.into(),
            ),
            3 => (TypeCode::primitive(TcKind::ULong), 0, u32::MAX.into()),
            4 if self.profile.longlong_disc => (
                TypeCode::primitive(TcKind::LongLong),
                i64::MIN.into(),
                i64::MAX.into(),
            ),
            5 if self.profile.longlong_disc => {
                (TypeCode::primitive(TcKind::ULongLong), 0, u64::MAX.into())
            }
            6 => (TypeCode::primitive(TcKind::Boolean), 0, 1),
            7 => (TypeCode::primitive(TcKind::Char), 32, 126),
            8 if self.profile.wchar_in_any && self.profile.wchar_disc => {
                (TypeCode::primitive(TcKind::WChar), 32, 0xd7ff)
            }
            _ => {
                let (eid, ename) = self.fresh("D");
                let n = self.rng.range(1, 5);
                let ms: Vec<String> = (0..n).map(|i| format!("{ename}_e{i}")).collect();
                let tc = TypeCode::create_enum_tc(&eid, &ename, &ms).map_err(tc_err)?;
                (tc, 0, (n - 1) as i128)
            }
        };
        let span = (hi - lo + 1) as u128;
        let arms = self.rng.range(1, 4) as u128;
        let mut labels: Vec<i128> = Vec::new();
        let tries = arms.min(span);
        for _ in 0..tries * 3 {
            if labels.len() as u128 >= tries {
                break;
            }
            let v = self.label_in(lo, hi);
            if !labels.contains(&v) {
                labels.push(v);
            }
        }
        let mut members = Vec::new();
        for (i, l) in labels.iter().enumerate() {
            members.push(UnionMember::new(
                format!("u{i}"),
                UnionLabel::Value(*l),
                self.ty(d)?,
            ));
        }
        // The first member with a second label now and then (its entries stay adjacent).
        if (labels.len() as u128) < span && self.rng.pct(20) {
            if let Some(v) = (0..8)
                .map(|_| self.label_in(lo, hi))
                .find(|v| !labels.contains(v))
            {
                let ty = members[0].ty.clone();
                labels.push(v);
                members.insert(1, UnionMember::new("u0", UnionLabel::Value(v), ty));
            }
        }
        if (labels.len() as u128) < span && self.rng.pct(50) {
            let m = UnionMember::new("def", UnionLabel::Default, self.ty(d)?);
            // Only between members of different names.
            let mut slots: Vec<usize> = (0..=members.len())
                .filter(|&i| i == 0 || i == members.len() || members[i - 1].name != members[i].name)
                .collect();
            if !self.profile.default_first {
                slots.retain(|&i| i > 0);
            }
            if !self.profile.default_later {
                slots.retain(|&i| i == 0);
            }
            if !slots.is_empty() {
                let at = slots[self.rng.below(slots.len() as u64) as usize];
                members.insert(at, m);
            }
        }
        TypeCode::create_union_tc(&id, &name, disc, members).map_err(tc_err)
    }

    fn label_in(&mut self, lo: i128, hi: i128) -> i128 {
        let span = (hi - lo + 1) as u128;
        if span <= 64 || self.rng.pct(50) {
            // Small values and the ends of the range, where the encodings differ.
            match self.rng.below(4) {
                0 => lo,
                1 => hi,
                _ => (lo + (self.rng.below(span.min(64) as u64) as i128)).min(hi),
            }
        } else {
            lo + (u128::from(self.rng.next_u64()) % span) as i128
        }
    }

    /// A valuetype (maybe truncatable from a base, maybe with a member of its own type), a
    /// box, or one made before (so its values can be shared).
    fn value_ty(&mut self, d: u32) -> Result<TypeCode, String> {
        if !self.value_types.is_empty() && self.rng.pct(30) {
            let i = self.rng.below(self.value_types.len() as u64) as usize;
            return Ok(self.value_types[i].clone());
        }
        let tc = if self.rng.pct(25) {
            let (id, name) = self.fresh("B");
            let content = loop {
                let t = self.ty(d)?;
                if !matches!(t.unalias().kind(), TcKind::Value | TcKind::ValueBox) {
                    break t;
                }
            };
            TypeCode::create_value_box_tc(&id, &name, content).map_err(tc_err)?
        } else {
            let base = if self.profile.truncatable && self.rng.pct(30) {
                Some(self.plain_value(d, None)?)
            } else {
                None
            };
            self.plain_value(d, base)?
        };
        self.value_types.push(tc.clone());
        Ok(tc)
    }

    fn plain_value(&mut self, d: u32, base: Option<TypeCode>) -> Result<TypeCode, String> {
        let (id, name) = self.fresh("V");
        let n = self.rng.range(0, 3);
        let mut ms = Vec::new();
        for i in 0..n {
            let vis = self.rng.below(2) as i16;
            ms.push(ValueMember::new(format!("{name}_m{i}"), self.ty(d)?, vis));
        }
        if self.rng.pct(60) {
            ms.push(ValueMember::new(
                format!("{name}_next"),
                TypeCode::create_recursive_tc(&id),
                1,
            ));
        }
        let modifier = if base.is_some() {
            3
        } else if self.profile.custom_values && self.aux.pct(50) {
            1
        } else {
            0
        };
        TypeCode::create_value_tc(&id, &name, modifier, base, ms).map_err(tc_err)
    }

    /// A random value of `tc`; `budget` bounds recursion (recursive types end with empty
    /// sequences and null values once it is spent).
    pub fn val(&mut self, tc: &TypeCode, budget: u32) -> Result<Val, String> {
        let tc = tc.unalias();
        let r = &mut self.rng;
        Ok(match tc.kind() {
            TcKind::Null | TcKind::Void => Val::Unit,
            TcKind::Boolean => Val::Bool(r.pct(50)),
            TcKind::Octet => Val::Octet(r.next_u64() as u8),
            TcKind::Short => Val::Short(edge(r) as i16),
            TcKind::UShort => Val::UShort(edge(r) as u16),
            TcKind::Long => Val::Long(edge(r) as i32),
            TcKind::ULong => Val::ULong(edge(r) as u32),
            TcKind::LongLong => Val::LongLong(edge(r) as i64),
            TcKind::ULongLong => {
                let mut v = edge(r);
                if self.in_seq > 0 && !self.profile.big_ulonglong_in_seq {
                    v &= i64::MAX as u64;
                }
                Val::ULongLong(v)
            }
            TcKind::Float => {
                let v = f32::from_bits(r.next_u64() as u32);
                Val::Float(if v.is_nan() { 1.5f32 } else { v }.to_bits())
            }
            TcKind::Double => {
                let v = f64::from_bits(r.next_u64());
                Val::Double(if v.is_nan() { -2.25f64 } else { v }.to_bits())
            }
            TcKind::LongDouble => {
                // Values a C++ 80-bit long double holds exactly: those of a double.
                let v = f64::from_bits(r.next_u64());
                let v = if v.is_nan() { 0.5 } else { v };
                Val::LongDouble(corbina::LongDouble::from_f64(v).be_bytes)
            }
            TcKind::Char => Val::Char(char::from(r.range(32, 126) as u8)),
            TcKind::WChar => Val::WChar(unmarked(self.profile, wchar(r))),
            TcKind::String | TcKind::WString => {
                let bound = tc.length().unwrap_or(0) as usize;
                let len = if r.pct(80) { r.below(10) } else { r.below(40) } as usize;
                let len = if bound > 0 { len.min(bound) } else { len };
                let ascii =
                    tc.kind() == TcKind::String && bound > 0 && !self.profile.non_ascii_bounded;
                let mut s: String = (0..len)
                    .map(|_| {
                        if ascii || r.pct(80) {
                            char::from(r.range(32, 126) as u8)
                        } else {
                            wchar(r)
                        }
                    })
                    .collect();
                if tc.kind() == TcKind::String {
                    Val::Str(s)
                } else {
                    if let Some(first) = s.chars().next() {
                        let c = unmarked(self.profile, first);
                        s.replace_range(..first.len_utf8(), c.encode_utf8(&mut [0; 4]));
                    }
                    Val::WStr(s)
                }
            }
            TcKind::Fixed => {
                let d = u32::from(tc.fixed_digits().map_err(tc_err)?);
                let m = 10u128.pow(d);
                let v = (u128::from(r.next_u64()) << 64 | u128::from(r.next_u64())) % m;
                let v = v as i128;
                Val::Fixed(if r.pct(50) { -v } else { v })
            }
            TcKind::Enum => {
                Val::Enum(r.below(u64::from(tc.member_count().map_err(tc_err)?)) as u32)
            }
            TcKind::Struct | TcKind::Except => {
                let n = tc.member_count().map_err(tc_err)?;
                let mut ms = Vec::new();
                for i in 0..n {
                    let mt = tc.member_type(i).map_err(tc_err)?;
                    ms.push(self.val(&mt, budget.saturating_sub(1))?);
                }
                Val::Struct(ms)
            }
            TcKind::Union => self.union_val(&tc, budget)?,
            TcKind::Sequence => {
                let et = tc.content_type().map_err(tc_err)?;
                let bound = tc.length().map_err(tc_err)? as u64;
                let mut n = if budget == 0 { 0 } else { self.rng.below(5) };
                if bound > 0 {
                    n = n.min(bound);
                }
                let mut es = Vec::new();
                self.in_seq += 1;
                for _ in 0..n {
                    es.push(self.val(&et, budget.saturating_sub(1))?);
                }
                self.in_seq -= 1;
                Val::Seq(es)
            }
            TcKind::Array => {
                let et = tc.content_type().map_err(tc_err)?;
                let n = tc.length().map_err(tc_err)?;
                let mut es = Vec::new();
                self.in_seq += 1;
                for _ in 0..n {
                    es.push(self.val(&et, budget.saturating_sub(1))?);
                }
                self.in_seq -= 1;
                Val::Seq(es)
            }
            TcKind::Any => {
                let inner = if budget == 0 {
                    TypeCode::primitive(TcKind::Long)
                } else {
                    self.any_ty(budget.min(2) - 1)?
                };
                let v = self.val(&inner, budget.saturating_sub(1))?;
                Val::Any(inner, Box::new(v))
            }
            TcKind::TypeCode => Val::TypeCode(self.ty(1)?),
            TcKind::Objref => Val::ObjRef(self.ior()),
            TcKind::AbstractInterface if self.profile.abstract_values && self.aux.pct(50) => {
                // A ThingNode: null now and then, shared with (or pointing back to) another
                // one of the case.
                match self.value_val(&super::thing::thing_node_tc(), budget)? {
                    Val::Value(None) => Val::ObjRef(None),
                    v => v,
                }
            }
            TcKind::AbstractInterface => Val::ObjRef(self.ior()),
            TcKind::Value | TcKind::ValueBox | TcKind::Event => self.value_val(&tc, budget)?,
            k => return Err(format!("no values of {k:?}")),
        })
    }

    fn ior(&mut self) -> Option<Ior> {
        if self.iors.is_empty() || self.rng.pct(30) {
            return None;
        }
        let i = self.rng.below(self.iors.len() as u64) as usize;
        Some(self.iors[i].clone())
    }

    fn union_val(&mut self, tc: &TypeCode, budget: u32) -> Result<Val, String> {
        let n = tc.member_count().map_err(tc_err)?;
        let labels: Vec<i128> = (0..n)
            .filter_map(|i| match tc.member_label_value(i) {
                Ok(UnionLabel::Value(v)) => Some(v),
                _ => None,
            })
            .collect();
        let dt = tc.discriminator_type().map_err(tc_err)?.unalias();
        let (lo, hi): (i128, i128) = match dt.kind() {
            TcKind::Short => (-32768, 32767),
            TcKind::UShort => (0, 65535),
            TcKind::Long => (i32::MIN.into(), i32::MAX.into()),
            TcKind::ULong => (0, u32::MAX.into()),
            TcKind::LongLong => (i64::MIN.into(), i64::MAX.into()),
            TcKind::ULongLong => (0, u64::MAX.into()),
            TcKind::Boolean => (0, 1),
            TcKind::Char => (32, 126),
            TcKind::WChar => (32, 0xd7ff),
            _ => (0, i128::from(dt.member_count().map_err(tc_err)?) - 1),
        };
        // An explicit label most of the time; else a value no label names (the default
        // member, or no member at all).
        let d = if !labels.is_empty() && (!self.profile.unlabelled_disc || self.rng.pct(70)) {
            labels[self.rng.below(labels.len() as u64) as usize]
        } else {
            match (0..16)
                .map(|_| self.label_in(lo, hi))
                .find(|v| !labels.contains(v))
            {
                Some(v) => v,
                None if !labels.is_empty() => labels[0],
                None => lo,
            }
        };
        let arm = match super::model::select_arm(tc, d) {
            Some(i) => {
                let mt = tc.member_type(i).map_err(tc_err)?;
                Some((i, Box::new(self.val(&mt, budget.saturating_sub(1))?)))
            }
            None => None,
        };
        Ok(Val::Union(d, arm))
    }

    /// Null, a node made before of the same type (sharing; a cycle when it is an enclosing
    /// one), or a new node.
    fn value_val(&mut self, tc: &TypeCode, budget: u32) -> Result<Val, String> {
        if self.rng.pct(15) {
            return Ok(Val::Value(None));
        }
        let id = tc.id().map_err(tc_err)?.to_owned();
        let same: Vec<usize> = (0..self.graph.nodes.len())
            .filter(|&i| self.graph.nodes[i].tc.id().ok() == Some(id.as_str()))
            .collect();
        if !same.is_empty() && (budget == 0 || self.rng.pct(35)) {
            return Ok(Val::Value(Some(
                same[self.rng.below(same.len() as u64) as usize],
            )));
        }
        if budget == 0 {
            return Ok(Val::Value(None));
        }
        let idx = self.graph.nodes.len();
        self.graph.nodes.push(Node {
            tc: tc.clone(),
            state: Vec::new(),
        });
        let mut state = Vec::new();
        for t in value_members(tc).map_err(|e| e.to_string())? {
            state.push(self.val(&t, budget - 1)?);
        }
        if !self.profile.empty_string_boxes && tc.kind() == TcKind::ValueBox {
            if let Some(Val::Str(s)) = state.first_mut() {
                if s.is_empty() {
                    s.push('.');
                }
            }
        }
        self.graph.nodes[idx].state = state;
        Ok(Val::Value(Some(idx)))
    }
}

/// An integer, often at the edges of the ranges (0, ±1, the limits of each width).
fn edge(r: &mut Rng) -> u64 {
    match r.below(8) {
        0 => 0,
        1 => 1,
        2 => u64::MAX,
        3 => [
            0x7f,
            0x80,
            0x7fff,
            0x8000,
            0xffff,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_ffff,
        ][r.below(8) as usize],
        4 => 0x7fff_ffff_ffff_ffff + r.below(3),
        _ => r.next_u64(),
    }
}

/// `c`, or U+FEFC for a U+FEFF/U+FFFE that `profile` leaves out (`bom_units`).
fn unmarked(profile: &Profile, c: char) -> char {
    if !profile.bom_units && matches!(c, '\u{feff}' | '\u{fffe}') {
        '\u{fefc}'
    } else {
        c
    }
}

/// A BMP character that is not a surrogate, often outside Latin-1.
fn wchar(r: &mut Rng) -> char {
    loop {
        let c = match r.below(3) {
            0 => r.range(0xa0, 0xff),
            1 => r.range(0x100, 0x7ff),
            _ => r.range(0x800, 0xfffd),
        } as u32;
        if let Some(c) = char::from_u32(c) {
            return c;
        }
    }
}

/// The valuetype `Node { public long id; public string label; public Node next; }` of
/// issue 27 (omniORBpy's chunk padding): its TypeCode.
pub fn label_node_tc() -> TypeCode {
    let id = "IDL:dt/LabelNode:1.0";
    TypeCode::create_value_tc(
        id,
        "LabelNode",
        0,
        None,
        vec![
            ValueMember::new("id", TypeCode::primitive(TcKind::Long), 1),
            ValueMember::new("label", TypeCode::create_string_tc(0), 1),
            ValueMember::new("next", TypeCode::create_recursive_tc(id), 1),
        ],
    )
    .expect("valid value TypeCode")
}

/// Shapes of `LabelNode` graphs: `n` nodes whose labels have `label_len` characters each,
/// ending in null (`List`), pointing back to the first (`Cycle`) or to the middle (`Lasso`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    List,
    Cycle,
    Lasso,
}

/// A `LabelNode` graph as a case.
pub fn label_nodes(n: usize, label_len: usize, shape: Shape) -> Typed {
    let tc = label_node_tc();
    let mut graph = Graph::default();
    for i in 0..n {
        let next = if i + 1 < n {
            Some(i + 1)
        } else {
            match shape {
                Shape::List => None,
                Shape::Cycle => Some(0),
                Shape::Lasso => Some(n / 2),
            }
        };
        let label: String = (0..label_len)
            .map(|k| char::from(b'a' + ((i + k) % 26) as u8))
            .collect();
        graph.nodes.push(Node {
            tc: tc.clone(),
            state: vec![Val::Long(i as i32 + 1), Val::Str(label), Val::Value(next)],
        });
    }
    Typed {
        tc,
        val: Val::Value((n > 0).then_some(0)),
        graph,
    }
}
