//! IIOP profile bodies (`IIOP::ProfileBody_1_0`/`_1_1`) and the tagged components they carry.

use corbina_cdr::{ByteOrder, CdrReader, CdrWriter, CodeSetId};

use crate::encap;
use crate::error::{GiopError, Result};
use crate::header::Version;
use crate::ior::{TaggedProfile, TAG_INTERNET_IOP};
use crate::object_key::ObjectKey;

/// `IOP::TAG_ORB_TYPE`: which ORB made the reference.
pub const TAG_ORB_TYPE: u32 = 0;
/// `IOP::TAG_CODE_SETS`: the code sets the server can use.
pub const TAG_CODE_SETS: u32 = 1;
/// `IOP::TAG_ALTERNATE_IIOP_ADDRESS`: another host/port for the same object.
pub const TAG_ALTERNATE_IIOP_ADDRESS: u32 = 3;
/// `IOP::TAG_SSL_SEC_TRANS` (SSLIOP): the profile's host also accepts TLS, on another port.
pub const TAG_SSL_SEC_TRANS: u32 = 20;

/// `SSLIOP::SSL`: the TLS port of an IIOP profile's host and the security association
/// options (`Security::AssociationOptions` bits) the target supports and requires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SslSecTrans {
    /// `target_supports`.
    pub target_supports: u16,
    /// `target_requires`.
    pub target_requires: u16,
    /// `port`: the TLS port on the profile's host.
    pub port: u16,
}

impl SslSecTrans {
    /// `Security::NoProtection`: the target accepts plain IIOP too.
    pub const NO_PROTECTION: u16 = 0x01;
    /// `Security::Integrity`.
    pub const INTEGRITY: u16 = 0x02;
    /// `Security::Confidentiality`.
    pub const CONFIDENTIALITY: u16 = 0x04;
    /// `Security::EstablishTrustInTarget`.
    pub const ESTABLISH_TRUST_IN_TARGET: u16 = 0x20;
    /// `Security::EstablishTrustInClient`.
    pub const ESTABLISH_TRUST_IN_CLIENT: u16 = 0x40;
    /// What omniORB 4.2 publishes as both `target_supports` and `target_requires`
    /// (hard-wired in its `sslTransportImpl::addToIOR`): Integrity, Confidentiality,
    /// EstablishTrustInTarget and EstablishTrustInClient.
    pub const OMNIORB_OPTIONS: u16 = 0x66;

    /// The component for TLS on `port`, with omniORB's options.
    pub fn omniorb(port: u16) -> SslSecTrans {
        SslSecTrans {
            target_supports: Self::OMNIORB_OPTIONS,
            target_requires: Self::OMNIORB_OPTIONS,
            port,
        }
    }

    /// Whether the target refuses plain IIOP (it requires protection: any requirement bit
    /// but `NoProtection`).
    pub fn requires_tls(&self) -> bool {
        self.target_requires & !Self::NO_PROTECTION != 0
    }

    /// The TAG_SSL_SEC_TRANS component.
    pub fn to_component(&self, order: ByteOrder) -> Result<TaggedComponent> {
        let component_data = encap::write(order, |w| {
            w.write_ushort(self.target_supports);
            w.write_ushort(self.target_requires);
            w.write_ushort(self.port);
            Ok(())
        })?;
        Ok(TaggedComponent {
            tag: TAG_SSL_SEC_TRANS,
            component_data,
        })
    }

    /// Decodes a TAG_SSL_SEC_TRANS component's data: the standard `unsigned short`
    /// layout, or (as omniORB also reads it) Visibroker's with `unsigned long` options.
    fn decode(data: &[u8]) -> Result<SslSecTrans> {
        let mut r = encap::reader(data)?;
        let standard = data.len() == 8;
        let (target_supports, target_requires) = if standard {
            (r.read_ushort()?, r.read_ushort()?)
        } else {
            (r.read_ulong()? as u16, r.read_ulong()? as u16)
        };
        let port = r.read_ushort()?;
        r.expect_end()?;
        Ok(SslSecTrans {
            target_supports,
            target_requires,
            port,
        })
    }
}

/// A tagged component (`IOP::TaggedComponent`), kept byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TaggedComponent {
    /// `tag`.
    pub tag: u32,
    /// `component_data`: an encapsulation for the standard tags.
    pub component_data: Vec<u8>,
}

/// What a tagged component holds, for the tags this crate understands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Component<'a> {
    /// `TAG_ORB_TYPE`: the ORB type id (omniORB `0x41545400`, JacORB `0x4a414300`).
    OrbType(u32),
    /// `TAG_CODE_SETS`.
    CodeSets(CodeSetComponentInfo),
    /// `TAG_ALTERNATE_IIOP_ADDRESS`.
    AlternateIiopAddress {
        /// Host name or address.
        host: String,
        /// TCP port.
        port: u16,
    },
    /// `TAG_SSL_SEC_TRANS`.
    SslSecTrans(SslSecTrans),
    /// Any other tag, as it came.
    Other(&'a TaggedComponent),
}

/// `CONV_FRAME::CodeSetComponent`: a native code set and those it converts to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CodeSetComponent {
    /// The code set the server uses internally.
    pub native_code_set: CodeSetId,
    /// Code sets it can convert to and from.
    pub conversion_code_sets: Vec<CodeSetId>,
}

/// `CONV_FRAME::CodeSetComponentInfo`: the char and wchar code sets of a server.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CodeSetComponentInfo {
    /// For `char`/`string`.
    pub for_char_data: CodeSetComponent,
    /// For `wchar`/`wstring`.
    pub for_wchar_data: CodeSetComponent,
}

fn read_code_set_component(r: &mut CdrReader<'_>) -> Result<CodeSetComponent> {
    let native_code_set = CodeSetId(r.read_ulong()?);
    let conversion_code_sets = r
        .read_primitive_seq::<u32>()?
        .into_iter()
        .map(CodeSetId)
        .collect();
    Ok(CodeSetComponent {
        native_code_set,
        conversion_code_sets,
    })
}

fn write_code_set_component(
    w: &mut CdrWriter<'_>,
    c: &CodeSetComponent,
) -> Result<(), corbina_cdr::MarshalError> {
    w.write_ulong(c.native_code_set.0);
    w.write_length(c.conversion_code_sets.len())?;
    for id in &c.conversion_code_sets {
        w.write_ulong(id.0);
    }
    Ok(())
}

impl TaggedComponent {
    /// Decodes the data of the components this crate knows.
    pub fn decode_known(&self) -> Result<Component<'_>> {
        let known = match self.tag {
            TAG_ORB_TYPE => {
                let mut r = encap::reader(&self.component_data)?;
                let t = r.read_ulong()?;
                r.expect_end()?;
                Component::OrbType(t)
            }
            TAG_CODE_SETS => {
                let mut r = encap::reader(&self.component_data)?;
                let for_char_data = read_code_set_component(&mut r)?;
                let for_wchar_data = read_code_set_component(&mut r)?;
                r.expect_end()?;
                Component::CodeSets(CodeSetComponentInfo {
                    for_char_data,
                    for_wchar_data,
                })
            }
            TAG_ALTERNATE_IIOP_ADDRESS => {
                let mut r = encap::reader(&self.component_data)?;
                let host = encap::read_latin1(&mut r)?;
                let port = r.read_ushort()?;
                r.expect_end()?;
                Component::AlternateIiopAddress { host, port }
            }
            TAG_SSL_SEC_TRANS => Component::SslSecTrans(SslSecTrans::decode(&self.component_data)?),
            _ => Component::Other(self),
        };
        Ok(known)
    }

    /// A TAG_ORB_TYPE component.
    pub fn orb_type(orb_type: u32, order: ByteOrder) -> Result<TaggedComponent> {
        let component_data = encap::write(order, |w| {
            w.write_ulong(orb_type);
            Ok(())
        })?;
        Ok(TaggedComponent {
            tag: TAG_ORB_TYPE,
            component_data,
        })
    }

    /// A TAG_CODE_SETS component.
    pub fn code_sets(info: &CodeSetComponentInfo, order: ByteOrder) -> Result<TaggedComponent> {
        let component_data = encap::write(order, |w| {
            write_code_set_component(w, &info.for_char_data)?;
            write_code_set_component(w, &info.for_wchar_data)
        })?;
        Ok(TaggedComponent {
            tag: TAG_CODE_SETS,
            component_data,
        })
    }

    /// A TAG_ALTERNATE_IIOP_ADDRESS component.
    pub fn alternate_iiop_address(
        host: &str,
        port: u16,
        order: ByteOrder,
    ) -> Result<TaggedComponent> {
        let component_data = encap::write(order, |w| {
            encap::write_latin1(w, host)?;
            w.write_ushort(port);
            Ok(())
        })?;
        Ok(TaggedComponent {
            tag: TAG_ALTERNATE_IIOP_ADDRESS,
            component_data,
        })
    }
}

/// Reads `sequence<TaggedComponent>`.
pub(crate) fn read_components(r: &mut CdrReader<'_>) -> Result<Vec<TaggedComponent>> {
    let n = r.read_length(8)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let tag = r.read_ulong()?;
        let component_data = r.read_octet_seq()?.to_vec();
        v.push(TaggedComponent {
            tag,
            component_data,
        });
    }
    Ok(v)
}

/// Writes `sequence<TaggedComponent>`.
pub(crate) fn write_components(
    w: &mut CdrWriter<'_>,
    cs: &[TaggedComponent],
) -> Result<(), corbina_cdr::MarshalError> {
    w.write_length(cs.len())?;
    for c in cs {
        w.write_ulong(c.tag);
        w.write_length(c.component_data.len())?;
        w.write_bytes(&c.component_data);
    }
    Ok(())
}

/// An IIOP profile body: where to connect and what key to send.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IiopProfile {
    /// IIOP version (1.0 has no components; the highest GIOP version the server speaks).
    pub version: Version,
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// The object key to put in requests.
    pub object_key: ObjectKey,
    /// Tagged components (IIOP 1.1 and later).
    pub components: Vec<TaggedComponent>,
    /// Byte order the profile body was (or will be) encapsulated in.
    pub byte_order: ByteOrder,
}

impl IiopProfile {
    /// Decodes a TAG_INTERNET_IOP profile's body (an encapsulation).
    pub fn decode_body(data: &[u8]) -> Result<IiopProfile> {
        let byte_order = encap::order_of(data);
        let mut r = encap::reader(data)?;
        let major = r.read_octet()?;
        let minor = r.read_octet()?;
        if major != 1 {
            return Err(GiopError::UnsupportedVersion { major, minor });
        }
        let host = encap::read_latin1(&mut r)?;
        let port = r.read_ushort()?;
        let object_key = ObjectKey(r.read_octet_seq()?.to_vec());
        let components = if minor >= 1 {
            read_components(&mut r)?
        } else {
            Vec::new()
        };
        r.expect_end()?;
        Ok(IiopProfile {
            version: Version { major, minor },
            host,
            port,
            object_key,
            components,
            byte_order,
        })
    }

    /// The profile body (encapsulation bytes) in `self.byte_order`.
    pub fn encode_body(&self) -> Result<Vec<u8>> {
        let data = encap::write(self.byte_order, |w| {
            w.write_octet(self.version.major);
            w.write_octet(self.version.minor);
            encap::write_latin1(w, &self.host)?;
            w.write_ushort(self.port);
            w.write_length(self.object_key.0.len())?;
            w.write_bytes(&self.object_key.0);
            if self.version.minor >= 1 {
                write_components(w, &self.components)?;
            }
            Ok(())
        })?;
        Ok(data)
    }

    /// Decodes a tagged profile, which must be TAG_INTERNET_IOP.
    pub fn from_tagged(p: &TaggedProfile) -> Result<IiopProfile> {
        if p.tag != TAG_INTERNET_IOP {
            return Err(corbina_cdr::MarshalError::InvalidValue {
                offset: 0,
                reason: "not a TAG_INTERNET_IOP profile",
            }
            .into());
        }
        IiopProfile::decode_body(&p.profile_data)
    }

    /// This profile as a TAG_INTERNET_IOP tagged profile.
    pub fn to_tagged(&self) -> Result<TaggedProfile> {
        Ok(TaggedProfile {
            tag: TAG_INTERNET_IOP,
            profile_data: self.encode_body()?,
        })
    }

    /// The first component with this tag.
    pub fn component(&self, tag: u32) -> Option<&TaggedComponent> {
        self.components.iter().find(|c| c.tag == tag)
    }

    /// The TAG_ORB_TYPE value, if present.
    pub fn orb_type(&self) -> Result<Option<u32>> {
        match self
            .component(TAG_ORB_TYPE)
            .map(TaggedComponent::decode_known)
            .transpose()?
        {
            Some(Component::OrbType(t)) => Ok(Some(t)),
            _ => Ok(None),
        }
    }

    /// The TAG_CODE_SETS component, if present.
    pub fn code_sets(&self) -> Result<Option<CodeSetComponentInfo>> {
        match self
            .component(TAG_CODE_SETS)
            .map(TaggedComponent::decode_known)
            .transpose()?
        {
            Some(Component::CodeSets(c)) => Ok(Some(c)),
            _ => Ok(None),
        }
    }

    /// Every TAG_ALTERNATE_IIOP_ADDRESS, in order.
    pub fn alternate_addresses(&self) -> Result<Vec<(String, u16)>> {
        let mut out = Vec::new();
        for c in self
            .components
            .iter()
            .filter(|c| c.tag == TAG_ALTERNATE_IIOP_ADDRESS)
        {
            if let Component::AlternateIiopAddress { host, port } = c.decode_known()? {
                out.push((host, port));
            }
        }
        Ok(out)
    }

    /// The first TAG_SSL_SEC_TRANS component, if present: TLS on the profile's host.
    pub fn ssl_sec_trans(&self) -> Result<Option<SslSecTrans>> {
        match self
            .component(TAG_SSL_SEC_TRANS)
            .map(TaggedComponent::decode_known)
            .transpose()?
        {
            Some(Component::SslSecTrans(s)) => Ok(Some(s)),
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// omniORB's layout (its `add_TAG_SSL_SEC_TRANS`: an encapsulation of three
    /// `unsigned short`s, 8 bytes with the byte-order octet and padding), both ways; and
    /// Visibroker's `unsigned long` layout, which omniORB reads too.
    #[test]
    fn ssl_sec_trans_matches_omniorb_layout() {
        let s = SslSecTrans::omniorb(2810);
        let c = s.to_component(ByteOrder::Big).unwrap();
        assert_eq!(c.tag, 20);
        assert_eq!(c.component_data, [0, 0, 0, 0x66, 0, 0x66, 0x0a, 0xfa]);
        assert_eq!(c.decode_known().unwrap(), Component::SslSecTrans(s));
        let le = s.to_component(ByteOrder::Little).unwrap();
        assert_eq!(le.component_data, [1, 0, 0x66, 0, 0x66, 0, 0xfa, 0x0a]);
        assert_eq!(le.decode_known().unwrap(), Component::SslSecTrans(s));
        assert!(s.requires_tls());
        let visibroker = TaggedComponent {
            tag: TAG_SSL_SEC_TRANS,
            component_data: vec![0, 0, 0, 0, 0, 0, 0, 0x67, 0, 0, 0, 0x01, 0x0a, 0xfa],
        };
        let v = match visibroker.decode_known().unwrap() {
            Component::SslSecTrans(v) => v,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            (v.target_supports, v.target_requires, v.port),
            (0x67, 1, 2810)
        );
        assert!(!v.requires_tls());
        for bad in [
            &[][..],
            &[0, 0, 0],
            &[7, 0, 0, 0x66, 0, 0x66, 0, 1],
            &[0; 9],
        ] {
            let c = TaggedComponent {
                tag: TAG_SSL_SEC_TRANS,
                component_data: bad.to_vec(),
            };
            assert!(c.decode_known().is_err(), "{bad:?}");
        }
    }

    const OMNI_BODY: &str = "010102000a0000003132372e302e302e3100dbed0e000000fe1a4d036b0000747e0000000000000002000000000000000800000001000000005454410100\
00001c00000001000000010001000100000001000105090101000100000009010100";

    #[test]
    fn omniorb_profile_body() {
        let data = hex::decode(OMNI_BODY).unwrap();
        let p = IiopProfile::decode_body(&data).unwrap();
        assert_eq!(p.version, Version::V1_2);
        assert_eq!(p.host, "127.0.0.1");
        assert_eq!(p.port, 60891);
        assert_eq!(p.object_key.to_hex(), "fe1a4d036b0000747e0000000000");
        assert_eq!(p.orb_type().unwrap(), Some(0x4154_5400));
        let cs = p.code_sets().unwrap().unwrap();
        assert_eq!(cs.for_char_data.native_code_set, CodeSetId::ISO_8859_1);
        assert_eq!(cs.for_char_data.conversion_code_sets, [CodeSetId::UTF_8]);
        assert_eq!(cs.for_wchar_data.native_code_set, CodeSetId::UTF_16);
        assert_eq!(p.encode_body().unwrap(), data);
        // Rebuilding the components from their decoded values gives the same bytes.
        let ot = TaggedComponent::orb_type(0x4154_5400, ByteOrder::Little).unwrap();
        assert_eq!(ot, p.components[0]);
        assert_eq!(
            TaggedComponent::code_sets(&cs, ByteOrder::Little).unwrap(),
            p.components[1]
        );
    }

    #[test]
    fn iiop_1_0_and_alternate_addresses() {
        let mut p = IiopProfile {
            version: Version::V1_0,
            host: "example.org".into(),
            port: 2809,
            object_key: ObjectKey::from("key"),
            components: vec![],
            byte_order: ByteOrder::Big,
        };
        let body = p.encode_body().unwrap();
        assert_eq!(
            hex::encode(&body),
            "000100000000000c6578616d706c652e6f7267000af90000000000036b6579"
        );
        assert_eq!(IiopProfile::decode_body(&body).unwrap(), p);
        p.version = Version::V1_1;
        p.components
            .push(TaggedComponent::alternate_iiop_address("h2", 1, ByteOrder::Big).unwrap());
        p.components.push(TaggedComponent {
            tag: 99,
            component_data: vec![1, 2, 3],
        });
        let back = IiopProfile::decode_body(&p.encode_body().unwrap()).unwrap();
        assert_eq!(back, p);
        assert_eq!(back.alternate_addresses().unwrap(), [("h2".to_string(), 1)]);
        assert!(matches!(
            back.components[1].decode_known(),
            Ok(Component::Other(_))
        ));
    }

    #[test]
    fn hostile_bodies() {
        assert!(IiopProfile::decode_body(&[]).is_err());
        assert!(IiopProfile::decode_body(&[0, 2, 0]).is_err());
        assert!(IiopProfile::decode_body(&[0, 1, 2, 0, 0xff, 0xff, 0xff, 0xff]).is_err());
    }
}
